// FakeBodyReader: a client::BodyReader (runtime/client/stream_watcher.h)
// that serves a fixed body, for tests of what reads response bodies (the
// watch stream, the list reader).
#ifndef KCR_TEST_FAKES_FAKE_BODY_READER_H_
#define KCR_TEST_FAKES_FAKE_BODY_READER_H_

#include <algorithm>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/mutex.h"
#include "runtime/client/stream_watcher.h"

namespace kcr::testing {

// `body` in reads of the given sizes (the last one repeated); then `end`
// (OK: the clean end) or, when `block` is set, a Read that waits until
// Cancel. Read is called from one thread; the rest from any.
class FakeBodyReader final : public client::BodyReader {
 public:
  FakeBodyReader(std::string body, std::vector<size_t> reads,
                 absl::Status end = absl::OkStatus(), bool block = false)
      : body_(std::move(body)),
        reads_(std::move(reads)),
        end_(std::move(end)),
        block_(block) {}
  // Reads of at most `chunk` bytes.
  FakeBodyReader(std::string body, size_t chunk,
                 absl::Status end = absl::OkStatus(), bool block = false)
      : FakeBodyReader(std::move(body), std::vector<size_t>{chunk},
                       std::move(end), block) {}

  absl::StatusOr<size_t> Read(char* data, size_t size) override {
    {
      MutexLock lock(&mu_);
      ++reads_done_;
    }
    if (at_ < body_.size()) {
      const size_t want = reads_[std::min(next_, reads_.size() - 1)];
      ++next_;
      const size_t n = std::min({size, want, body_.size() - at_});
      body_.copy(data, n, at_);
      at_ += n;
      return n;
    }
    if (block_) {
      MutexLock lock(&mu_);
      mu_.Await(absl::Condition(&cancelled_));
      return absl::UnavailableError("connection closed");
    }
    if (!end_.ok()) return end_;
    return 0;
  }
  void Cancel() override {
    MutexLock lock(&mu_);
    cancelled_ = true;
  }

  bool cancelled() {
    MutexLock lock(&mu_);
    return cancelled_;
  }
  int reads_done() {
    MutexLock lock(&mu_);
    return reads_done_;
  }

 private:
  const std::string body_;
  const std::vector<size_t> reads_;
  const absl::Status end_;
  const bool block_;
  size_t at_ = 0;    // the reading thread's
  size_t next_ = 0;  // the reading thread's
  Mutex mu_;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  int reads_done_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace kcr::testing

#endif  // KCR_TEST_FAKES_FAKE_BODY_READER_H_
