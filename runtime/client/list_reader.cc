#include "runtime/client/list_reader.h"

#include <algorithm>
#include <atomic>
#include <deque>
#include <memory>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/mutex.h"

namespace kcr::client {
namespace {

// A batch of framed items on its way from the reading thread to the
// caller, parsed by whichever thread claims it.
struct Slot {
  FramedItems framed;
  enum class State { kFramed, kParsing, kParsed } state = State::kFramed;
  std::vector<api::ObjectPtr> objects;
  absl::Status error;  // the first item that did not parse
};

class Pipeline {
 public:
  // Batches not parsed yet (framed, or being parsed) that the reader may be
  // ahead by; each holds ~one read of the body.
  static constexpr size_t kMaxUnparsed = 16;
  // All batches between the threads, parsed ones too: the bound on memory
  // when the caller's on_item is what is slow. Parsed batches count apart
  // because the parsing threads run ahead of the caller, which delivers in
  // order: with one bound for both, the reader stopped while the queue
  // held parsed batches the caller could not deliver yet (it waited for
  // the parsing thread to finish the front one), and then the parsing
  // thread had nothing left to parse: one core idle.
  static constexpr size_t kMaxSlots = 64;
  // A reader stopped by a full queue resumes once it has drained to these:
  // threads wake in bursts, not once per batch (each wake-up costs a
  // scheduling delay on a busy machine).
  static constexpr size_t kResumeUnparsed = kMaxUnparsed / 2;
  static constexpr size_t kResumeSlots = kMaxSlots - kMaxUnparsed / 2;
  // One read of the body, and the framed bytes after which a batch is
  // handed over even when more could be read at once.
  static constexpr size_t kReadBytes = 64 << 10;
  static constexpr size_t kBatchBytes = 256 << 10;

  Pipeline(BodyReader& body, const ListReaderOptions& options)
      : body_(body),
        options_(options),
        framer_(options.decoder.max_item_bytes) {}

  // Ends the reading (ctx done, or the consumer failed): closes the body.
  void Stop() {
    stop_requested_.store(true, std::memory_order_relaxed);
    {
      MutexLock lock(&mu_);
      if (stopped_) return;
      stopped_ = true;
      room_.SignalAll();
      ready_.SignalAll();
      work_.SignalAll();
    }
    body_.Cancel();
  }

  void ReadLoop() {
    // The bytes of an item that a batch handed over left unfinished, on
    // their way to the next batch.
    FramedItems carry;
    while (true) {
      auto slot = std::make_shared<Slot>();
      {
        MutexLock lock(&mu_);
        if (unparsed_ >= kMaxUnparsed || slots_.size() >= kMaxSlots) {
          reader_waiting_ = true;
          while (!stopped_ && !RoomLocked()) room_.Wait(&mu_);
          reader_waiting_ = false;
        }
        if (stopped_) return;
        // A buffer that has been used before: its memory is already
        // mapped, where a fresh one faults in every page of each read.
        if (!spare_.empty()) {
          slot->framed = std::move(spare_.back());
          spare_.pop_back();
        }
      }
      FramedBytes& bytes = slot->framed.bytes;
      bytes.reserve(kBatchBytes);
      framer_.CarryOver(&carry, &slot->framed);
      absl::Status status;
      bool end = false;
      // The body is read straight into the batch and framed there, so
      // that an item's bytes are written once, by the socket's read.
      // Reads into this batch while the body has more at hand (a read
      // filled what it asked for) and the batch is small: each hand-over
      // wakes a thread, which costs more than the batch's framing on a
      // busy machine; a short read (the network is behind) hands over at
      // once. A batch without a complete item yet (an item larger than
      // a batch) is not handed over: it goes on growing.
      while (true) {
        const size_t from = bytes.size();
        const size_t want = from < kBatchBytes
                                ? std::min(kReadBytes, kBatchBytes - from)
                                : kReadBytes;
        absl::StatusOr<size_t> n = body_.Read(bytes.Extend(want), want);
        bytes.Truncate(from + (n.ok() ? *n : 0));
        if (!n.ok()) {
          status = Broken(n.status());
          end = true;
        } else if (*n == 0) {
          status = framer_.Finish(&slot->framed);
          end = true;
        } else {
          status = framer_.FeedInPlace(&slot->framed, from);
          end = !status.ok();
        }
        if (end || stop_requested_.load(std::memory_order_relaxed)) break;
        if (!slot->framed.items.empty() &&
            (*n < want || bytes.size() >= kBatchBytes)) {
          break;
        }
      }
      framer_.CarryOver(&slot->framed, &carry);
      Push(std::move(slot));
      if (end) {
        MutexLock lock(&mu_);
        reader_status_ = std::move(status);
        reader_done_ = true;
        ready_.SignalAll();
        work_.SignalAll();
        return;
      }
    }
  }

  // A parsing thread: parses the oldest unclaimed batch, again and again,
  // until the reader is done and none is left (or Stop).
  void ParseLoop() {
    while (true) {
      std::shared_ptr<Slot> slot;
      {
        MutexLock lock(&mu_);
        while (true) {
          if (stopped_) return;
          slot = FirstFramedLocked();
          if (slot != nullptr || reader_done_) break;
          work_.Wait(&mu_);
        }
        if (slot == nullptr) return;
        slot->state = Slot::State::kParsing;
      }
      Parse(*slot);
      MutexLock lock(&mu_);
      slot->state = Slot::State::kParsed;
      ParsedLocked();
      ready_.Signal();
    }
  }

  // The caller's side: hands each batch's items to `on_item` in order,
  // parsing the front batch itself when nobody has, and a later one while
  // a parsing thread holds the front.
  absl::Status Consume(
      const std::function<absl::Status(api::ObjectPtr)>& on_item) {
    while (true) {
      std::shared_ptr<Slot> deliver;
      std::shared_ptr<Slot> parse_ahead;
      {
        MutexLock lock(&mu_);
        while (true) {
          if (stopped_) return absl::OkStatus();
          if (slots_.empty()) {
            if (reader_done_) return reader_status_;
            ready_.Wait(&mu_);
            continue;
          }
          const std::shared_ptr<Slot>& front = slots_.front();
          if (front->state != Slot::State::kParsing) {
            // Parsed, or unclaimed: the caller's alone once popped.
            deliver = front;
            slots_.pop_front();
            if (deliver->state == Slot::State::kFramed) {
              ParsedLocked();  // by this thread, now
            } else {
              ResumeReaderLocked();
            }
            break;
          }
          parse_ahead = FirstFramedLocked();
          if (parse_ahead != nullptr) {
            parse_ahead->state = Slot::State::kParsing;
            break;
          }
          ready_.Wait(&mu_);
        }
      }
      if (parse_ahead != nullptr) {
        Parse(*parse_ahead);
        MutexLock lock(&mu_);
        parse_ahead->state = Slot::State::kParsed;
        ParsedLocked();
        continue;
      }
      if (deliver->state == Slot::State::kFramed) Parse(*deliver);
      for (api::ObjectPtr& object : deliver->objects) {
        // Nothing more once stopped, not even what is already parsed.
        if (stop_requested_.load(std::memory_order_relaxed)) {
          return absl::OkStatus();
        }
        if (absl::Status s = on_item(std::move(object)); !s.ok()) return s;
      }
      if (!deliver->error.ok()) return deliver->error;
    }
  }

  const ListMeta& meta() const { return framer_.meta(); }

 private:
  // The reader may go on reading.
  bool RoomLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return unparsed_ <= kResumeUnparsed && slots_.size() <= kResumeSlots;
  }

  void ResumeReaderLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (reader_waiting_ && RoomLocked()) room_.Signal();
  }

  // A batch in slots_ no longer waits to be parsed.
  void ParsedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    --unparsed_;
    ResumeReaderLocked();
  }

  // The oldest batch nobody has claimed, or null.
  std::shared_ptr<Slot> FirstFramedLocked() const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (const auto& slot : slots_) {
      if (slot->state == Slot::State::kFramed) return slot;
    }
    return nullptr;
  }

  void Push(std::shared_ptr<Slot> slot) {
    if (slot->framed.empty()) return;
    slot->objects.reserve(slot->framed.items.size());
    MutexLock lock(&mu_);
    slots_.push_back(std::move(slot));
    ++unparsed_;
    ready_.Signal();
    work_.Signal();
  }

  // Parses the slot's items (until the first error), without mu_: the
  // claiming thread owns the slot's contents while it is kParsing (or
  // popped by the caller).
  void Parse(Slot& slot) {
    for (const FramedItems::Item& item : slot.framed.items) {
      absl::StatusOr<api::ObjectPtr> object =
          ParseFramedItem(slot.framed, item, options_.decoder.parse_options);
      if (!object.ok()) {
        slot.error = object.status();
        break;
      }
      slot.objects.push_back(*std::move(object));
    }
    slot.framed.Clear();
    MutexLock lock(&mu_);
    if (spare_.size() < kMaxUnparsed) {
      spare_.push_back(std::move(slot.framed));
    }
  }

  // The end of a body that broke with `error`: data loss when it cut the
  // list short, else the broken stream.
  absl::Status Broken(const absl::Status& error) {
    FramedItems ignored;
    absl::Status partial = framer_.Finish(&ignored);
    if (!partial.ok() && absl::IsDataLoss(partial)) {
      return absl::DataLossError(
          absl::StrCat(partial.message(), ": ", error.message()));
    }
    return absl::UnavailableError(
        absl::StrCat("list response broken: ", error.message()));
  }

  BodyReader& body_;
  const ListReaderOptions& options_;
  ListFramer framer_;  // the reading thread's until it ends
  // Stop() was called: read without mu_ between items.
  std::atomic<bool> stop_requested_{false};
  Mutex mu_;
  CondVar room_;   // the reader waits for room in slots_
  CondVar ready_;  // the caller waits for a batch to deliver or parse
  CondVar work_;   // parsing threads wait for a batch to parse
  std::deque<std::shared_ptr<Slot>> slots_ ABSL_GUARDED_BY(mu_);
  // The batches in slots_ that are kFramed or kParsing.
  size_t unparsed_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  bool reader_done_ ABSL_GUARDED_BY(mu_) = false;
  bool reader_waiting_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status reader_status_ ABSL_GUARDED_BY(mu_);
  // Emptied batches, for the reader to fill again.
  std::vector<FramedItems> spare_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

absl::StatusOr<ListMeta> ReadList(
    const Context& ctx, BodyReader& body, const ListReaderOptions& options,
    const std::function<absl::Status(api::ObjectPtr)>& on_item) {
  if (ctx.done()) {
    body.Cancel();
    return ctx.Err();
  }
  Pipeline pipeline(body, options);
  std::thread reader([&pipeline] { pipeline.ReadLoop(); });
  std::vector<std::thread> parsers;
  for (int i = 0; i < options.parse_threads; ++i) {
    parsers.emplace_back([&pipeline] { pipeline.ParseLoop(); });
  }
  absl::Status status;
  {
    Context::DoneCallback on_done =
        ctx.OnDone([&pipeline] { pipeline.Stop(); });
    status = pipeline.Consume(on_item);
    on_done.Reset();
  }
  // After an error the reader may still be reading: close the body.
  if (!status.ok()) pipeline.Stop();
  reader.join();
  for (std::thread& parser : parsers) parser.join();
  // Whatever the pipeline saw (a closed body, a half-read item), a call
  // whose context ended reports that.
  if (ctx.done()) return ctx.Err();
  if (!status.ok()) return status;
  return pipeline.meta();
}

}  // namespace kcr::client
