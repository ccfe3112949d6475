#include "runtime/client/stream_watcher.h"

#include <atomic>
#include <cstring>
#include <deque>
#include <memory>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/mutex.h"
#include "glog/logging.h"
#include "runtime/client/watch_decoder.h"

namespace kcr::client {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// One read of the body, with its whole lines (from just after a newline to
// the next newline) parsed ahead as events where they can be.
struct Batch {
  struct Line {
    size_t start = 0;
    size_t end = 0;  // the newline's index
    bool tried = false;
    WatchDecoder::LineDecode result = WatchDecoder::LineDecode::kDeclined;
    WatchEvent event;  // when kDecoded
  };
  std::unique_ptr<char[]> bytes;
  size_t size = 0;
  std::vector<Line> lines;
  bool last = false;
  absl::Status end;  // when last: the read's error, or OK at the clean end
};

// Two threads share the work. The reader's reads the body, finds its lines
// and parses every other one as an event (WatchDecoder::DecodeLine); the
// consumer's, in Next(), parses the rest and walks the bytes in order
// through a WatchDecoder, taking a parsed line as the next event when the
// line began between events and feeding everything else (events split
// over reads, pretty-printed or run together, errors) to the decoder: the
// events and errors are exactly the decoder's. Batches (one read each) go
// between the threads all at once, so that neither wakes the other per
// event, and at most kMaxBatches wait: with cpprestsdk's own bound on the
// body read ahead, a slow consumer slows the reading.
class StreamWatcher final : public WatchStream {
 public:
  static constexpr size_t kMaxBatches = 16;
  // A read takes what has arrived, up to this: a busy watch is read in
  // runs of ~55 pods, each one hand-off and wake-up between the threads
  // (64 KiB took 4x as many: 50k context switches for 100,000 updates,
  // against 28k). Only the bytes a read fills are touched, so an idle
  // watch's waiting buffer costs address space, not memory.
  static constexpr size_t kReadSize = 256 << 10;

  StreamWatcher(const Context& ctx, std::unique_ptr<BodyReader> body,
                const api::ParseOptions& parse_options)
      : body_(std::move(body)),
        lines_(WatchDecoderOptions{.parse_options = parse_options}),
        decoder_(WatchDecoderOptions{.parse_options = parse_options}) {
    reader_ = std::thread([this] { ReadLoop(); });
    // Last: the callback may run at once, and uses everything above.
    watch_done_ = ctx.OnDone([this, ctx] { StopWith(ctx.Err()); });
  }

  ~StreamWatcher() override {
    watch_done_.Reset();
    Stop();
    reader_.join();
  }

  using WatchStream::Next;
  bool Next(const Context& ctx, WatchEvent* event) override {
    MutexLock next_lock(&next_mu_);
    while (true) {
      if (stopped_fast_.load(std::memory_order_acquire)) return false;
      if (ctx.done()) {
        StopWith(ctx.Err());
        return false;
      }
      if (next_event_ < ready_.size()) {
        *event = std::move(ready_[next_event_++]);
        return true;
      }
      if (ended_) {
        Finish(end_);
        return false;
      }
      ready_.clear();
      next_event_ = 0;
      std::unique_ptr<Batch> batch = TakeBatchLocked(ctx);
      if (batch == nullptr) return false;
      AdvanceLocked(*batch);
    }
  }

  size_t Buffered() const override {
    MutexLock next_lock(&next_mu_);
    return ready_.size() - next_event_;
  }

  void Stop() override { StopWith(absl::CancelledError("watch stopped")); }

  absl::Status status() const override {
    MutexLock lock(&mu_);
    return status_;
  }

 private:
  // The oldest batch, waiting for one; null when the stream was stopped
  // (by Stop, or a context) meanwhile.
  std::unique_ptr<Batch> TakeBatchLocked(const Context& ctx)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(next_mu_) {
    if (taken_.empty()) {
      bool wait;
      {
        MutexLock lock(&mu_);
        wait = batches_.empty() && !stopped_;
      }
      // Registered without mu_ (the callback runs at once when ctx is
      // already done, and takes mu_), dropped after mu_ is released.
      Context::DoneCallback next_done;
      if (wait) next_done = ctx.OnDone([this, ctx] { StopWith(ctx.Err()); });
      MutexLock lock(&mu_);
      while (batches_.empty() && !stopped_) arrived_.Wait(&mu_);
      if (stopped_) return nullptr;
      // All at once: one lock and at most one wake-up per run of batches.
      const bool reader_waits = batches_.size() >= kMaxBatches;
      taken_.swap(batches_);
      if (reader_waits) room_.Signal();
    }
    std::unique_ptr<Batch> batch = std::move(taken_.front());
    taken_.pop_front();
    return batch;
  }

  // Decodes `batch` in stream order into ready_; at the stream's end or an
  // error, sets ended_ and end_.
  void AdvanceLocked(Batch& batch) ABSL_EXCLUSIVE_LOCKS_REQUIRED(next_mu_) {
    const char* data = batch.bytes.get();
    size_t pos = 0;
    absl::Status status;
    for (Batch::Line& line : batch.lines) {
      if (line.start > pos) {
        status = decoder_.Feed(std::string_view(data + pos, line.start - pos),
                               &ready_);
        pos = line.start;
        if (!status.ok()) break;
      }
      if (decoder_.between_events() && lines_fast_) {
        if (!line.tried) ParseLine(data, line);
        if (line.result == WatchDecoder::LineDecode::kDecoded) {
          ready_.push_back(std::move(line.event));
          decoder_.SkipDecoded(line.end + 1 - line.start);
          pos = line.end + 1;
          continue;
        }
        // Not one event per line (events run together): the decoder finds
        // them; stop parsing lines twice.
        if (line.result == WatchDecoder::LineDecode::kParseFailed) {
          lines_fast_ = false;
        }
      }
      status = decoder_.Feed(std::string_view(data + pos, line.end + 1 - pos),
                             &ready_);
      pos = line.end + 1;
      if (!status.ok()) break;
    }
    if (status.ok() && pos < batch.size) {
      status = decoder_.Feed(std::string_view(data + pos, batch.size - pos),
                             &ready_);
    }
    if (!status.ok()) {
      LOG(WARNING) << "watch stream undecodable: " << status;
      end_ = std::move(status);
      ended_ = true;
      body_->Cancel();
    } else if (batch.last) {
      end_ = batch.end.ok() ? decoder_.Finish() : Broken(batch.end);
      ended_ = true;
    }
  }

  // Parses `line` as an event, if it may be one. Either thread.
  void ParseLine(const char* data, Batch::Line& line) const {
    size_t end = line.end;
    while (end > line.start && IsSpace(data[end - 1])) --end;
    line.result = WatchDecoder::LineDecode::kDeclined;
    if (end > line.start && data[line.start] == '{') {
      line.result = lines_.DecodeLine(
          std::string_view(data + line.start, end - line.start), &line.event);
    }
    line.tried = true;
  }

  // Ends the stream with `why` (unless it ended first) and closes the
  // connection, so that a read blocked in the reader fails at once; wakes
  // both threads.
  void StopWith(absl::Status why) {
    {
      MutexLock lock(&mu_);
      if (stopped_) return;
      stopped_ = true;
      stopped_fast_.store(true, std::memory_order_release);
      if (!done_) status_ = std::move(why);
      arrived_.SignalAll();
      room_.SignalAll();
    }
    body_->Cancel();
  }

  // The end of the stream as the consumer reaches it.
  void Finish(absl::Status status) {
    MutexLock lock(&mu_);
    if (!stopped_ && !done_) status_ = std::move(status);
    done_ = true;
  }

  // The end of a body that broke with `error`: data loss when it cut an
  // event short, else the broken stream.
  absl::Status Broken(const absl::Status& error)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(next_mu_) {
    absl::Status partial = decoder_.Finish();
    if (!partial.ok()) {
      return absl::DataLossError(
          absl::StrCat(partial.message(), ": ", error.message()));
    }
    return absl::UnavailableError(
        absl::StrCat("watch stream broken: ", error.message()));
  }

  // Hands `batch` to the consumer, waiting for room; false once stopped.
  bool Push(std::unique_ptr<Batch> batch) {
    MutexLock lock(&mu_);
    while (batches_.size() >= kMaxBatches && !stopped_) room_.Wait(&mu_);
    if (stopped_) return false;
    batches_.push_back(std::move(batch));
    if (batches_.size() == 1) arrived_.Signal();
    return true;
  }

  void ReadLoop() {
    // The stream starts at the start of a line.
    bool line_start = true;
    bool parse_lines = true;
    while (true) {
      auto batch = std::make_unique<Batch>();
      // Not a vector: no need to zero what the read overwrites.
      batch->bytes.reset(new char[kReadSize]);
      absl::StatusOr<size_t> n = body_->Read(batch->bytes.get(), kReadSize);
      if (!n.ok()) {
        batch->last = true;
        // Moved, not copied: the consumer's thread alone holds the error.
        batch->end = std::move(n).status();
      } else if (*n == 0) {
        batch->last = true;
      } else {
        batch->size = *n;
        const char* data = batch->bytes.get();
        size_t start = line_start ? 0 : std::string_view::npos;
        for (size_t i = 0; i < *n;) {
          const void* nl = std::memchr(data + i, '\n', *n - i);
          if (nl == nullptr) break;
          const size_t end = static_cast<const char*>(nl) - data;
          if (start != std::string_view::npos) {
            batch->lines.push_back(Batch::Line{.start = start, .end = end});
          }
          start = end + 1;
          i = end + 1;
        }
        line_start = data[*n - 1] == '\n';
        // The odd lines here, the even ones on the consumer's thread.
        for (size_t i = 1; parse_lines && i < batch->lines.size(); i += 2) {
          Batch::Line& line = batch->lines[i];
          ParseLine(data, line);
          if (line.result == WatchDecoder::LineDecode::kParseFailed) {
            parse_lines = false;
          }
        }
      }
      const bool last = batch->last;
      if (!Push(std::move(batch)) || last) break;
    }
  }

  std::unique_ptr<BodyReader> body_;
  // Only its DecodeLine (const), on both threads.
  const WatchDecoder lines_;

  // The consumer's side, for one Next() at a time.
  mutable Mutex next_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  WatchDecoder decoder_ ABSL_GUARDED_BY(next_mu_);
  std::deque<std::unique_ptr<Batch>> taken_ ABSL_GUARDED_BY(next_mu_);
  std::vector<WatchEvent> ready_ ABSL_GUARDED_BY(next_mu_);
  size_t next_event_ ABSL_GUARDED_BY(next_mu_) = 0;
  bool lines_fast_ ABSL_GUARDED_BY(next_mu_) = true;
  bool ended_ ABSL_GUARDED_BY(next_mu_) = false;
  absl::Status end_ ABSL_GUARDED_BY(next_mu_);

  mutable Mutex mu_;
  std::deque<std::unique_ptr<Batch>> batches_ ABSL_GUARDED_BY(mu_);
  CondVar arrived_;  // a batch arrived, or stopped
  CondVar room_;     // batches_ has room, or stopped
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  // stopped_, read without mu_ on each Next.
  std::atomic<bool> stopped_fast_{false};
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  std::thread reader_;
  // The watch's context ends the stream. Last: reset first.
  Context::DoneCallback watch_done_;
};

}  // namespace

std::unique_ptr<WatchStream> NewStreamWatcher(
    const Context& ctx, std::unique_ptr<BodyReader> body,
    const api::ParseOptions& parse_options) {
  return std::make_unique<StreamWatcher>(ctx, std::move(body), parse_options);
}

}  // namespace kcr::client
