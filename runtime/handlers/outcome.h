// Outcome: what a handler's run comes to, and the errors a handler raises,
// as kopf's return values, TemporaryError and PermanentError.
//
//   Outcome OnCreate(HandlerContext& ctx) {
//     if (!ready) return Outcome::Temporary("waiting for the volume",
//                                           absl::Seconds(10));
//     if (bad_spec) return Outcome::Permanent("spec.size must be positive");
//     KCR_RETURN_IF_ERROR(DoWork(ctx));  // any other error: retried
//     return Outcome::Value(R"({"children": 1})");   // -> status.<handler id>
//   }
//
// A handler may also throw, as a kopf handler raises: TemporaryError and
// PermanentError below mean what Outcome::Temporary and Outcome::Permanent
// do; any other exception is an arbitrary error (retried with the handler's
// backoff, or as its ErrorsMode says).
#ifndef KCR_RUNTIME_HANDLERS_OUTCOME_H_
#define KCR_RUNTIME_HANDLERS_OUTCOME_H_

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "rapidjson/document.h"

namespace kcr::handlers {

// kopf's default delay of a TemporaryError.
inline constexpr absl::Duration kDefaultTemporaryDelay = absl::Seconds(60);

class Outcome {
 public:
  enum class Kind {
    kSuccess,    // done; value() may hold a result
    kTemporary,  // retry after delay()
    kPermanent,  // failed for good: not retried
    kError,      // an arbitrary error: retried after the handler's backoff
  };

  // Success with no result.
  Outcome() = default;
  // OK: success with no result; an error: an arbitrary error (retried).
  Outcome(absl::Status status);  // NOLINT: a handler may return a Status
  // Success with a result stored under status.<handler id>.
  Outcome(rapidjson::Document value);  // NOLINT

  static Outcome Success() { return Outcome(); }
  // Success with the JSON `json` as the result. Text that does not parse
  // is an arbitrary error that names it.
  static Outcome Value(std::string_view json);
  static Outcome Temporary(std::string message,
                           absl::Duration delay = kDefaultTemporaryDelay);
  static Outcome Permanent(std::string message);

  Kind kind() const { return kind_; }
  bool ok() const { return kind_ == Kind::kSuccess; }
  // The result (success only), or null.
  const rapidjson::Document* value() const { return value_.get(); }
  // The failure's message ("" on success).
  const std::string& message() const { return message_; }
  // For kTemporary.
  absl::Duration delay() const { return delay_; }

 private:
  Kind kind_ = Kind::kSuccess;
  std::shared_ptr<const rapidjson::Document> value_;
  std::string message_;
  absl::Duration delay_ = absl::ZeroDuration();
};

// Thrown by a handler: retry after `delay` (kopf.TemporaryError).
class TemporaryError : public std::runtime_error {
 public:
  explicit TemporaryError(const std::string& message,
                          absl::Duration delay = kDefaultTemporaryDelay)
      : std::runtime_error(message), delay_(delay) {}
  absl::Duration delay() const { return delay_; }

 private:
  absl::Duration delay_;
};

// Thrown by a handler: failed for good, no retry (kopf.PermanentError).
class PermanentError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace kcr::handlers

#endif  // KCR_RUNTIME_HANDLERS_OUTCOME_H_
