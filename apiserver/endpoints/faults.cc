#include "apiserver/endpoints/faults.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "api/errors/errors.h"
#include "api/json/json_util.h"
#include "base/str_cat.h"
#include "base/string_view.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace kcr {
namespace apiserver {
namespace {

constexpr const char* kRuleMembers[] = {"errorRules", "crashAfterWrite",
                                        "watchHolds", "watchDrops"};

bool FieldMatches(const std::string& want, std::string_view got) {
  return want.empty() || want == got;
}

std::string JsonString(std::string_view s) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  return std::string(buf.GetString(), buf.GetSize());
}

// An integer member of a rule object (absent: `fallback`).
absl::StatusOr<int64_t> IntMember(const rapidjson::Value& v, const char* key,
                                  int64_t fallback) {
  auto m = v.FindMember(key);
  if (m == v.MemberEnd()) return fallback;
  if (!m->value.IsInt64()) {
    return absl::InvalidArgumentError(Cat(key, " is not an integer"));
  }
  return m->value.GetInt64();
}

// The members of a JSON array of rule objects.
absl::Status ForEachRule(
    const rapidjson::Value& array, const char* key,
    const std::function<absl::Status(const rapidjson::Value& rule)>& fn) {
  if (!array.IsArray()) {
    return absl::InvalidArgumentError(Cat(key, " is not an array"));
  }
  for (const rapidjson::Value& rule : array.GetArray()) {
    if (!rule.IsObject()) {
      return absl::InvalidArgumentError(Cat(key, " has a non-object"));
    }
    absl::Status s = fn(rule);
    if (!s.ok()) {
      return absl::InvalidArgumentError(Cat(key, ": ", ToStd(s.message())));
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool RequestFilter::Matches(std::string_view v, std::string_view g,
                            std::string_view r, std::string_view sub,
                            std::string_view ns, std::string_view n,
                            std::string_view ua) const {
  return FieldMatches(verb, v) && FieldMatches(group, g) &&
         FieldMatches(resource, r) && FieldMatches(subresource, sub) &&
         FieldMatches(namespace_, ns) && FieldMatches(name, n) &&
         absl::StartsWith(ToAbsl(ua), user_agent);
}

std::string RequestFilter::ToJson() const {
  return Cat("{\"verb\":", JsonString(verb), ",\"group\":", JsonString(group),
             ",\"resource\":", JsonString(resource),
             ",\"subresource\":", JsonString(subresource),
             ",\"namespace\":", JsonString(namespace_),
             ",\"name\":", JsonString(name),
             ",\"userAgent\":", JsonString(user_agent), "}");
}

absl::StatusOr<RequestFilter> RequestFilter::FromJson(
    const rapidjson::Value& value, const std::vector<std::string>& extra) {
  if (!value.IsObject()) {
    return absl::InvalidArgumentError("a filter is not a JSON object");
  }
  RequestFilter f;
  for (const auto& m : value.GetObject()) {
    const std::string key(m.name.GetString(), m.name.GetStringLength());
    if (std::find(extra.begin(), extra.end(), key) != extra.end()) continue;
    std::string* field = key == "verb"          ? &f.verb
                         : key == "group"       ? &f.group
                         : key == "resource"    ? &f.resource
                         : key == "subresource" ? &f.subresource
                         : key == "namespace"   ? &f.namespace_
                         : key == "name"        ? &f.name
                         : key == "userAgent"   ? &f.user_agent
                                                : nullptr;
    if (field == nullptr) {
      return absl::InvalidArgumentError(Cat("unknown member ", key));
    }
    if (!m.value.IsString()) {
      return absl::InvalidArgumentError(Cat(key, " is not a string"));
    }
    field->assign(m.value.GetString(), m.value.GetStringLength());
  }
  return f;
}

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
    // Rules are FaultInjector's (ApplyRulesJson).
    if (FaultInjector::IsRuleMember(key)) continue;
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

void FaultInjector::UpdateActiveLocked() {
  active_.store(!error_rules_.empty() || crash_.has_value() ||
                    !holds_.empty() || !drops_.empty() || !dropped_.empty(),
                std::memory_order_release);
}

namespace {

absl::Status ValidateErrorRule(const ErrorRule& rule) {
  if (rule.code != 409 && rule.code != 500 && rule.code != 429 &&
      rule.code != 504) {
    return absl::InvalidArgumentError(
        Cat("code ", rule.code, " is not one of 409, 500, 429, 504"));
  }
  if (rule.nth < 1) return absl::InvalidArgumentError("nth is below 1");
  if (rule.after_store && rule.code != 504) {
    return absl::InvalidArgumentError("afterStore needs code 504");
  }
  if (rule.retry_after_seconds < 0) {
    return absl::InvalidArgumentError("retryAfterSeconds is negative");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status FaultInjector::AddErrorRule(ErrorRule rule) {
  absl::Status valid = ValidateErrorRule(rule);
  if (!valid.ok()) return valid;
  MutexLock l(&mu_);
  error_rules_.push_back({std::move(rule), 0});
  UpdateActiveLocked();
  return absl::OkStatus();
}

void FaultInjector::ClearErrorRules() {
  MutexLock l(&mu_);
  error_rules_.clear();
  UpdateActiveLocked();
}

std::optional<ErrorRule> FaultInjector::TakeError(
    std::string_view verb, std::string_view group, std::string_view resource,
    std::string_view subresource, std::string_view ns, std::string_view name,
    std::string_view user_agent) {
  if (!active()) return std::nullopt;
  MutexLock l(&mu_);
  std::optional<ErrorRule> fired;
  for (auto it = error_rules_.begin(); it != error_rules_.end();) {
    if (!it->rule.match.Matches(verb, group, resource, subresource, ns, name,
                                user_agent)) {
      ++it;
      continue;
    }
    // One error per request: a rule due on the same request as an earlier
    // one waits for the next match.
    if (it->matched + 1 < it->rule.nth || fired.has_value()) {
      it->matched = std::min(it->matched + 1, it->rule.nth - 1);
      ++it;
      continue;
    }
    fired = std::move(it->rule);
    it = error_rules_.erase(it);
    ++fired_;
  }
  UpdateActiveLocked();
  return fired;
}

absl::Status FaultInjector::DropWatchEvents(WatchDrop drop) {
  if (drop.count < 1) return absl::InvalidArgumentError("count is below 1");
  MutexLock l(&mu_);
  drops_.push_back(std::move(drop));
  UpdateActiveLocked();
  return absl::OkStatus();
}

void FaultInjector::ClearRules() {
  {
    MutexLock l(&mu_);
    error_rules_.clear();
    crash_.reset();
    crash_counted_ = 0;
    crashed_ = false;
    crash_pending_ = false;
    holds_.clear();
    drops_.clear();
    dropped_.clear();
    UpdateActiveLocked();
  }
  WakeWatches();
}

absl::Status FaultInjector::SetCrashRule(CrashRule rule) {
  if (rule.user_agent.empty()) {
    return absl::InvalidArgumentError("the crash rule's userAgent is empty");
  }
  if (rule.after_writes < 1) {
    return absl::InvalidArgumentError("the crash rule's writes is below 1");
  }
  MutexLock l(&mu_);
  crash_ = std::move(rule);
  crash_counted_ = 0;
  crashed_ = false;
  crash_pending_ = false;
  UpdateActiveLocked();
  return absl::OkStatus();
}

void FaultInjector::ClearCrashRule() {
  MutexLock l(&mu_);
  crash_.reset();
  crash_counted_ = 0;
  crashed_ = false;
  crash_pending_ = false;
  UpdateActiveLocked();
}

bool FaultInjector::crashed(std::string_view user_agent) const {
  if (!active()) return false;
  MutexLock l(&mu_);
  return crashed_ && crash_.has_value() &&
         absl::StartsWith(ToAbsl(user_agent), crash_->user_agent);
}

bool FaultInjector::WaitCrashed(absl::Time deadline) const {
  MutexLock l(&mu_);
  return mu_.AwaitWithDeadline(absl::Condition(&crashed_), deadline);
}

void FaultInjector::SetCrashCallback(
    std::function<void(const std::string&)> callback) {
  MutexLock l(&mu_);
  crash_callback_ = std::move(callback);
}

absl::Status FaultInjector::AdmitWrite(std::string_view user_agent) const {
  if (!crashed(user_agent)) return absl::OkStatus();
  return api::StatusError::ServiceUnavailable("the client has crashed")
      .ToStatus();
}

void FaultInjector::AfterWrite() {
  if (!active()) return;
  std::function<void(const std::string&)> callback;
  std::string writer;
  {
    MutexLock l(&mu_);
    if (!crash_pending_) return;
    crash_pending_ = false;
    callback = crash_callback_;
    writer = crash_writer_;
  }
  // The fenced client's watches look at the fence and end.
  WakeWatches();
  if (callback) callback(writer);
}

void FaultInjector::OnWrite(const WriteRecord& w) {
  if (!active()) return;
  MutexLock l(&mu_);
  if (crash_.has_value() && !crashed_ &&
      absl::StartsWith(ToAbsl(w.user_agent), crash_->user_agent) &&
      ++crash_counted_ >= crash_->after_writes) {
    crashed_ = true;
    crash_pending_ = true;
    crash_writer_ = w.user_agent;
    ++fired_;
  }
  for (auto it = drops_.begin(); it != drops_.end(); ++it) {
    const RequestFilter& f = it->match;
    // The filter's user agent is the watchers', not the writer's.
    if (!f.Matches(w.verb, w.group, w.resource, w.subresource, w.namespace_,
                   w.name, f.user_agent)) {
      continue;
    }
    int64_t rv = 0;
    if (!absl::SimpleAtoi(w.resource_version, &rv)) continue;
    dropped_[rv] = f.user_agent;
    ++fired_;
    if (--it->count == 0) drops_.erase(it);
    break;
  }
  UpdateActiveLocked();
}

FaultInjector::EventFate FaultInjector::FateOf(const WatchInfo& watch,
                                               int64_t resource_version,
                                               std::string_view ns,
                                               std::string_view name) {
  MutexLock l(&mu_);
  auto d = dropped_.find(resource_version);
  if (d != dropped_.end() &&
      absl::StartsWith(ToAbsl(watch.user_agent), d->second)) {
    return EventFate::kDrop;
  }
  return HoldsLocked(watch, ns, name) ? EventFate::kHold : EventFate::kSend;
}

bool FaultInjector::Holds(const WatchInfo& watch, std::string_view ns,
                          std::string_view name) {
  MutexLock l(&mu_);
  return HoldsLocked(watch, ns, name);
}

bool FaultInjector::HoldsLocked(const WatchInfo& watch, std::string_view ns,
                                std::string_view name) const {
  for (const auto& [id, hold] : holds_) {
    const RequestFilter& f = hold.match;
    if (f.Matches(f.verb, watch.group, watch.resource, f.subresource, ns, name,
                  watch.user_agent)) {
      return true;
    }
  }
  return false;
}

int64_t FaultInjector::HoldWatch(WatchHold hold) {
  MutexLock l(&mu_);
  const int64_t id = next_hold_++;
  holds_.emplace(id, std::move(hold));
  UpdateActiveLocked();
  return id;
}

void FaultInjector::ReleaseWatchHold(int64_t id) {
  {
    MutexLock l(&mu_);
    holds_.erase(id);
    UpdateActiveLocked();
  }
  WakeWatches();
}

int FaultInjector::ReleaseWatchHolds() {
  int released;
  {
    MutexLock l(&mu_);
    released = static_cast<int>(holds_.size());
    holds_.clear();
    UpdateActiveLocked();
  }
  WakeWatches();
  return released;
}

int64_t FaultInjector::RegisterWatch(std::function<void()> wake) {
  MutexLock l(&watches_mu_);
  const int64_t id = next_watch_++;
  watches_.emplace(id, std::move(wake));
  return id;
}

void FaultInjector::UnregisterWatch(int64_t id) {
  MutexLock l(&watches_mu_);
  watches_.erase(id);
}

void FaultInjector::WakeWatches() {
  MutexLock l(&watches_mu_);
  for (const auto& [id, wake] : watches_) wake();
}

bool FaultInjector::IsRuleMember(std::string_view key) {
  for (const char* m : kRuleMembers) {
    if (key == m) return true;
  }
  return false;
}

std::string FaultInjector::RulesJson() const {
  MutexLock l(&mu_);
  std::string out = "\"errorRules\":[";
  for (size_t i = 0; i < error_rules_.size(); ++i) {
    const ErrorRule& e = error_rules_[i].rule;
    std::string f = e.match.ToJson();
    f.pop_back();
    CatAppend(&out, i > 0 ? "," : "", f, ",\"nth\":", e.nth,
              ",\"code\":", e.code,
              ",\"retryAfterSeconds\":", e.retry_after_seconds,
              ",\"afterStore\":", e.after_store ? "true" : "false",
              ",\"matched\":", error_rules_[i].matched, "}");
  }
  out += "],\"crashAfterWrite\":";
  if (crash_.has_value()) {
    CatAppend(&out, "{\"userAgent\":", JsonString(crash_->user_agent),
              ",\"writes\":", crash_->after_writes,
              ",\"counted\":", crash_counted_,
              ",\"crashed\":", crashed_ ? "true" : "false", "}");
  } else {
    out += "null";
  }
  out += ",\"watchHolds\":[";
  bool first = true;
  for (const auto& [id, hold] : holds_) {
    std::string f = hold.match.ToJson();
    f.erase(0, 1);
    CatAppend(&out, first ? "" : ",", "{\"id\":", id, ",", f);
    first = false;
  }
  out += "],\"watchDrops\":[";
  for (size_t i = 0; i < drops_.size(); ++i) {
    std::string f = drops_[i].match.ToJson();
    f.pop_back();
    CatAppend(&out, i > 0 ? "," : "", f, ",\"count\":", drops_[i].count, "}");
  }
  CatAppend(&out, "],\"rulesFired\":", fired_);
  return out;
}

absl::Status FaultInjector::ApplyRulesJson(const rapidjson::Value& object) {
  std::optional<std::vector<ErrorRule>> errors;
  if (auto m = object.FindMember("errorRules"); m != object.MemberEnd()) {
    errors.emplace();
    absl::Status s =
        ForEachRule(m->value, "errorRules", [&](const rapidjson::Value& rule) {
          auto f = RequestFilter::FromJson(
              rule, {"nth", "code", "retryAfterSeconds", "afterStore"});
          if (!f.ok()) return f.status();
          ErrorRule e;
          e.match = *f;
          auto nth = IntMember(rule, "nth", 1);
          if (!nth.ok()) return nth.status();
          auto code = IntMember(rule, "code", 500);
          if (!code.ok()) return code.status();
          auto retry = IntMember(rule, "retryAfterSeconds", 1);
          if (!retry.ok()) return retry.status();
          e.nth = static_cast<int>(*nth);
          e.code = static_cast<int>(*code);
          e.retry_after_seconds = static_cast<int>(*retry);
          if (auto a = rule.FindMember("afterStore"); a != rule.MemberEnd()) {
            if (!a->value.IsBool()) {
              return absl::InvalidArgumentError("afterStore is not a boolean");
            }
            e.after_store = a->value.GetBool();
          }
          absl::Status valid = ValidateErrorRule(e);
          if (!valid.ok()) return valid;
          errors->push_back(std::move(e));
          return absl::OkStatus();
        });
    if (!s.ok()) return s;
  }
  // Set: the rule; null: cleared; absent: left.
  std::optional<std::optional<CrashRule>> crash;
  if (auto m = object.FindMember("crashAfterWrite"); m != object.MemberEnd()) {
    if (m->value.IsNull()) {
      crash.emplace();
    } else if (!m->value.IsObject()) {
      return absl::InvalidArgumentError("crashAfterWrite is not an object");
    } else {
      CrashRule rule;
      for (const auto& c : m->value.GetObject()) {
        const std::string key(c.name.GetString(), c.name.GetStringLength());
        if (key == "userAgent" && c.value.IsString()) {
          rule.user_agent = c.value.GetString();
        } else if (key == "writes" && c.value.IsInt64()) {
          rule.after_writes = c.value.GetInt64();
        } else {
          return absl::InvalidArgumentError(
              Cat("crashAfterWrite: bad member ", key));
        }
      }
      if (rule.user_agent.empty() || rule.after_writes < 1) {
        return absl::InvalidArgumentError(
            "crashAfterWrite needs a userAgent and writes >= 1");
      }
      crash.emplace(std::move(rule));
    }
  }
  std::optional<std::vector<WatchHold>> holds;
  if (auto m = object.FindMember("watchHolds"); m != object.MemberEnd()) {
    holds.emplace();
    absl::Status s =
        ForEachRule(m->value, "watchHolds", [&](const rapidjson::Value& rule) {
          auto f = RequestFilter::FromJson(rule, {});
          if (!f.ok()) return f.status();
          holds->push_back({*f});
          return absl::OkStatus();
        });
    if (!s.ok()) return s;
  }
  std::optional<std::vector<WatchDrop>> drops;
  if (auto m = object.FindMember("watchDrops"); m != object.MemberEnd()) {
    drops.emplace();
    absl::Status s =
        ForEachRule(m->value, "watchDrops", [&](const rapidjson::Value& rule) {
          auto f = RequestFilter::FromJson(rule, {"count"});
          if (!f.ok()) return f.status();
          auto count = IntMember(rule, "count", 1);
          if (!count.ok()) return count.status();
          if (*count < 1) return absl::InvalidArgumentError("count is below 1");
          drops->push_back({*f, static_cast<int>(*count)});
          return absl::OkStatus();
        });
    if (!s.ok()) return s;
  }
  if (crash.has_value()) {
    if (crash->has_value()) {
      SetCrashRule(**crash).IgnoreError();  // checked above
    } else {
      ClearCrashRule();
    }
  }
  if (holds.has_value()) {
    ReleaseWatchHolds();
    for (WatchHold& h : *holds) HoldWatch(std::move(h));
  }
  MutexLock l(&mu_);
  if (errors.has_value()) {
    error_rules_.clear();
    for (ErrorRule& e : *errors) error_rules_.push_back({std::move(e), 0});
  }
  if (drops.has_value()) drops_ = std::move(*drops);
  UpdateActiveLocked();
  return absl::OkStatus();
}

int64_t FaultInjector::rules_fired() const {
  MutexLock l(&mu_);
  return fired_;
}

}  // namespace apiserver
}  // namespace kcr
