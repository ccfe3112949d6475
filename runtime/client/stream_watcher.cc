#include "runtime/client/stream_watcher.h"

#include <deque>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"
#include "runtime/base/mutex.h"
#include "runtime/client/watch_decoder.h"

namespace kcr::client {
namespace {

class StreamWatcher final : public WatchStream {
 public:
  static constexpr size_t kMaxQueued = 1024;

  StreamWatcher(const Context& ctx, std::unique_ptr<BodyReader> body,
                const api::ParseOptions& parse_options)
      : body_(std::move(body)),
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
    // Dropped after mu_ is released: its callback takes mu_.
    Context::DoneCallback next_done =
        ctx.OnDone([this, ctx] { StopWith(ctx.Err()); });
    MutexLock lock(&mu_);
    mu_.Await(absl::Condition(this, &StreamWatcher::ReadyLocked));
    if (stopped_ || events_.empty()) return false;
    *event = std::move(events_.front());
    events_.pop_front();
    return true;
  }

  void Stop() override { StopWith(absl::CancelledError("watch stopped")); }

  absl::Status status() const override {
    MutexLock lock(&mu_);
    return status_;
  }

 private:
  bool ReadyLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stopped_ || done_ || !events_.empty();
  }
  bool RoomLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stopped_ || events_.size() < kMaxQueued;
  }

  // Ends the stream with `why` (unless the server ended it first) and
  // closes the connection, so that a read blocked in the reader fails at
  // once. Releasing mu_ wakes a Next waiting on it.
  void StopWith(absl::Status why) {
    {
      MutexLock lock(&mu_);
      if (stopped_) return;
      stopped_ = true;
      if (!done_) status_ = std::move(why);
    }
    body_->Cancel();
  }

  void Finish(absl::Status status) {
    MutexLock lock(&mu_);
    if (!stopped_) status_ = std::move(status);
    done_ = true;
  }

  // The end of a body that broke with `error`: data loss when it cut an
  // event short, else the broken stream.
  absl::Status Broken(const absl::Status& error) {
    absl::Status partial = decoder_.Finish();
    if (!partial.ok()) {
      return absl::DataLossError(
          absl::StrCat(partial.message(), ": ", error.message()));
    }
    return absl::UnavailableError(
        absl::StrCat("watch stream broken: ", error.message()));
  }

  void ReadLoop() {
    std::vector<char> data(64 << 10);
    std::vector<WatchEvent> events;
    while (true) {
      {
        MutexLock lock(&mu_);
        mu_.Await(absl::Condition(this, &StreamWatcher::RoomLocked));
        if (stopped_) break;
      }
      absl::StatusOr<size_t> n = body_->Read(data.data(), data.size());
      if (!n.ok()) {
        Finish(Broken(n.status()));
        break;
      }
      if (*n == 0) {
        Finish(decoder_.Finish());
        break;
      }
      events.clear();
      absl::Status status =
          decoder_.Feed(std::string_view(data.data(), *n), &events);
      {
        MutexLock lock(&mu_);
        for (auto& e : events) events_.push_back(std::move(e));
      }
      if (!status.ok()) {
        LOG(WARNING) << "watch stream undecodable: " << status;
        Finish(status);
        body_->Cancel();
        break;
      }
    }
  }

  std::unique_ptr<BodyReader> body_;
  WatchDecoder decoder_;  // reader thread only
  mutable Mutex mu_;
  std::deque<WatchEvent> events_ ABSL_GUARDED_BY(mu_);
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
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
