#include "apiserver/endpoints/faults.h"

#include "api/json/json_util.h"
#include "base/str_cat.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {

std::string FaultOptions::ToJson() const {
  return Cat(
      "{\"watchCloseAfterEvents\":", watch_close_after_events,
      ",\"watchCloseAfterSeconds\":", absl::ToInt64Seconds(watch_close_after),
      ",\"errorFraction\":", std::to_string(error_fraction),
      ",\"throttleFraction\":", std::to_string(throttle_fraction),
      ",\"retryAfterSeconds\":", retry_after_seconds,
      ",\"delayMilliseconds\":", absl::ToInt64Milliseconds(delay),
      ",\"ignoreShardSelector\":", ignore_shard_selector ? "true" : "false",
      "}");
}

absl::StatusOr<FaultOptions> FaultOptions::FromJson(const std::string& json,
                                                    const FaultOptions& base) {
  rapidjson::Document d;
  absl::Status s = json::ParseJson(json, &d);
  if (!s.ok()) return s;
  if (!d.IsObject()) return absl::InvalidArgumentError("not a JSON object");
  FaultOptions o = base;
  for (const auto& m : d.GetObject()) {
    std::string key(m.name.GetString(), m.name.GetStringLength());
    if (key == "ignoreShardSelector") {
      if (!m.value.IsBool()) {
        return absl::InvalidArgumentError(Cat(key, " is not a boolean"));
      }
      o.ignore_shard_selector = m.value.GetBool();
      continue;
    }
    if (!m.value.IsNumber()) {
      return absl::InvalidArgumentError(Cat(key, " is not a number"));
    }
    double v = m.value.GetDouble();
    if (v < 0) return absl::InvalidArgumentError(Cat(key, " is negative"));
    if (key == "watchCloseAfterEvents") {
      o.watch_close_after_events = static_cast<int64_t>(v);
    } else if (key == "watchCloseAfterSeconds") {
      o.watch_close_after = absl::Seconds(v);
    } else if (key == "errorFraction") {
      if (v > 1) return absl::InvalidArgumentError("errorFraction is above 1");
      o.error_fraction = v;
    } else if (key == "throttleFraction") {
      if (v > 1)
        return absl::InvalidArgumentError("throttleFraction is above 1");
      o.throttle_fraction = v;
    } else if (key == "retryAfterSeconds") {
      o.retry_after_seconds = static_cast<int>(v);
    } else if (key == "delayMilliseconds") {
      o.delay = absl::Milliseconds(v);
    } else {
      return absl::InvalidArgumentError(Cat("unknown fault ", key));
    }
  }
  return o;
}

FaultOptions FaultInjector::options() const {
  MutexLock l(&mu_);
  return options_;
}

void FaultInjector::set_options(const FaultOptions& options) {
  MutexLock l(&mu_);
  options_ = options;
}

FaultInjector::Verdict FaultInjector::Roll() {
  MutexLock l(&mu_);
  if (options_.error_fraction <= 0 && options_.throttle_fraction <= 0) {
    return Verdict::kNone;
  }
  double x = absl::Uniform<double>(gen_, 0.0, 1.0);
  if (x < options_.error_fraction) {
    ++errors_;
    return Verdict::kError;
  }
  if (x < options_.error_fraction + options_.throttle_fraction) {
    ++throttles_;
    return Verdict::kThrottle;
  }
  return Verdict::kNone;
}

absl::Duration FaultInjector::TakeDelay() {
  MutexLock l(&mu_);
  if (options_.delay > absl::ZeroDuration()) ++delays_;
  return options_.delay;
}

int64_t FaultInjector::errors_injected() const {
  MutexLock l(&mu_);
  return errors_;
}

int64_t FaultInjector::throttles_injected() const {
  MutexLock l(&mu_);
  return throttles_;
}

int64_t FaultInjector::delays_injected() const {
  MutexLock l(&mu_);
  return delays_;
}

}  // namespace apiserver
}  // namespace kcr
