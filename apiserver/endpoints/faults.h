// FaultInjector: faults the local API server injects on purpose, so that
// clients' retry, relist and rewatch paths can be tested. Off by default;
// set from flags or through the HTTP control endpoint (see handler.h).
// Faults never change stored state: a failed request fails before it is
// processed, and a closed watch just ends its stream.
//
// Beside the random faults of FaultOptions, rules aim at one client's
// requests or one kind's watch events (what a controller's tests, and the
// controller explorer, perturb): a client is known by its User-Agent
// (kcr's RestConfig::user_agent), and a RequestFilter picks requests or
// events.
//   AddErrorRule     the k-th matching request gets an error (409, 500,
//                    429, 504), or is stored and then answered 504.
//   DropWatchEvents  the next N events of a kind are never delivered to the
//                    matching watchers: as if their watch had been cut
//                    before them and resumed at a later resourceVersion.
// With no rule set, a request or a watch event costs one atomic load.
//
// Thread-safe.
#ifndef KCR_APISERVER_ENDPOINTS_FAULTS_H_
#define KCR_APISERVER_ENDPOINTS_FAULTS_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/random/random.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "apiserver/endpoints/write_log.h"
#include "base/mutex.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {

struct FaultOptions {
  // Close every watch stream after it has sent this many events (0: never).
  int64_t watch_close_after_events = 0;
  // Close every watch stream this long after it started (0: never).
  absl::Duration watch_close_after = absl::ZeroDuration();
  // Share of resource requests answered 500 InternalError (0..1).
  double error_fraction = 0;
  // Share of resource requests answered 429 TooManyRequests with a
  // Retry-After header (0..1).
  double throttle_fraction = 0;
  int retry_after_seconds = 1;
  // Delay before every resource request is processed. A request whose
  // client goes away, or that a stopping server cancels, ends its delay
  // there, unanswered.
  absl::Duration delay = absl::ZeroDuration();

  // {"watchCloseAfterEvents":0,"watchCloseAfterSeconds":0,
  //  "errorFraction":0,"throttleFraction":0,"retryAfterSeconds":1,
  //  "delayMilliseconds":0}
  std::string ToJson() const;
  // Parses that form; absent members keep the value in `base`.
  static absl::StatusOr<FaultOptions> FromJson(const std::string& json,
                                               const FaultOptions& base);
};

// Picks requests (or watch events, by the write that made them): each
// non-empty member must equal the request's, `user_agent` must be a prefix
// of its User-Agent. A create's name is the one in its body. Empty members
// match anything. JSON: {"verb":..,
// "group":..,"resource":..,"subresource":..,"namespace":..,"name":..,
// "userAgent":..}, every member optional.
struct RequestFilter {
  // kube's verb: get list watch create update patch delete
  // deletecollection.
  std::string verb, group, resource, subresource, namespace_, name;
  std::string user_agent;

  bool Matches(std::string_view verb, std::string_view group,
               std::string_view resource, std::string_view subresource,
               std::string_view ns, std::string_view name,
               std::string_view user_agent) const;
  std::string ToJson() const;
  // Parses that form; `extra` names further members the caller reads
  // (they are skipped here), anything else is an error.
  static absl::StatusOr<RequestFilter> FromJson(
      const rapidjson::Value& value, const std::vector<std::string>& extra);
};

// The next `count` stored writes that `match` selects (its verb, group,
// resource, subresource, namespace and name; `user_agent` is the
// watcher's) are never sent to the watches of the watchers it selects; the
// streams go on with the later events. JSON in "watchDrops": the filter's
// members and "count".
struct WatchDrop {
  RequestFilter match;
  int count = 1;
};

// The `nth` request (1 for the next) that `match` selects after the rule is
// set gets an error with kube-apiserver's Status body, and the rule is
// spent:
//   409  Conflict, as a stale resourceVersion: "Operation cannot be
//        fulfilled on configmaps \"x\": the object has been modified; ..."
//   500  InternalError
//   429  TooManyRequests with Retry-After: `retry_after_seconds`
//   504  Timeout: "Timeout: request did not complete within requested
//        timeout - context deadline exceeded"
// With `after_store` (504 only), the request is processed and its write
// stored, then answered 504, as kube-apiserver's timeout after the
// storage commit; a request that fails on its own keeps its own answer.
// JSON in "errorRules": the filter's members and "nth", "code",
// "retryAfterSeconds", "afterStore".
struct ErrorRule {
  RequestFilter match;
  int nth = 1;
  int code = 500;
  int retry_after_seconds = 1;
  bool after_store = false;
};

// What a watch stream tells the injector about itself.
struct WatchInfo {
  std::string group, resource;
  // The watcher's User-Agent.
  std::string user_agent;
};

class FaultInjector {
 public:
  enum class Verdict { kNone, kError, kThrottle };

  FaultInjector() = default;
  explicit FaultInjector(FaultOptions options) : options_(options) {}

  FaultOptions options() const;
  void set_options(const FaultOptions& options);

  // Decides the fault for one resource request (random per the fractions).
  Verdict Roll();
  // The delay to inject before one resource request is processed (zero for
  // none); counts it in delays_injected() when it is not zero.
  absl::Duration TakeDelay();

  // Counters of injected faults.
  int64_t errors_injected() const;
  int64_t throttles_injected() const;
  int64_t delays_injected() const;

  // Whether any rule is set (one atomic load): with none, requests and
  // watch events need not ask anything else.
  bool active() const { return active_.load(std::memory_order_acquire); }

  // Adds an error rule; InvalidArgument for a code other than 409, 500,
  // 429 and 504, nth below 1, or after_store without 504.
  absl::Status AddErrorRule(ErrorRule rule);
  void ClearErrorRules();
  // The error rule that fires on a request (counting it in every rule
  // that matches it); nullopt when none does.
  std::optional<ErrorRule> TakeError(std::string_view verb,
                                     std::string_view group,
                                     std::string_view resource,
                                     std::string_view subresource,
                                     std::string_view ns, std::string_view name,
                                     std::string_view user_agent);

  // Adds a drop rule (count >= 1).
  absl::Status DropWatchEvents(WatchDrop drop);
  // Clears every rule (drops not yet used).
  void ClearRules();

  // The server calls this with every write it stores, in storage order,
  // under its storage lock (write_log.h): drop rules pick their events.
  void OnWrite(const WriteRecord& write);

  // What a watch stream does with one event (by the write that made it).
  enum class EventFate { kSend, kDrop };
  EventFate FateOf(const WatchInfo& watch, int64_t resource_version);

  // The rules as JSON members (no braces): "errorRules":[...] (each with
  // "matched": the requests it has counted), "watchDrops":[...] and
  // "rulesFired":n.
  std::string RulesJson() const;
  // Applies the rule members of a control request's JSON object (others
  // are left to FaultOptions); all or nothing.
  absl::Status ApplyRulesJson(const rapidjson::Value& object);
  // Whether `key` is a rule member of the control JSON.
  static bool IsRuleMember(std::string_view key);

  // Rules that have fired (an event dropped counts once per write).
  int64_t rules_fired() const;

 private:
  mutable Mutex mu_;
  FaultOptions options_ ABSL_GUARDED_BY(mu_);
  absl::BitGen gen_ ABSL_GUARDED_BY(mu_);
  int64_t errors_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t throttles_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t delays_ ABSL_GUARDED_BY(mu_) = 0;

  // Sets active_ from the rules.
  void UpdateActiveLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  std::atomic<bool> active_{false};
  struct ArmedErrorRule {
    ErrorRule rule;
    int matched = 0;
  };
  std::vector<ArmedErrorRule> error_rules_ ABSL_GUARDED_BY(mu_);
  std::vector<WatchDrop> drops_ ABSL_GUARDED_BY(mu_);
  // Writes picked by a drop rule: resourceVersion -> the watchers' filter
  // (its user_agent). Kept until ClearRules, as a watch resumed from
  // before them must not see them either.
  std::map<int64_t, std::string> dropped_ ABSL_GUARDED_BY(mu_);
  int64_t fired_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_ENDPOINTS_FAULTS_H_
