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
//   SetCrashRule     after a client's k-th stored write, every later request
//                    of that client is dropped unanswered and its watches
//                    cut, as if its process had died right after that
//                    write.
//   HoldWatch        a kind's events are held back from chosen watchers (a
//                    stale cache) until released, while writes go on.
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
  // Serve lists and watches as a server without the ShardedListAndWatch
  // gate does: shardSelector is ignored (every object is sent, and no
  // metadata.shardInfo).
  bool ignore_shard_selector = false;

  // {"watchCloseAfterEvents":0,"watchCloseAfterSeconds":0,
  //  "errorFraction":0,"throttleFraction":0,"retryAfterSeconds":1,
  //  "delayMilliseconds":0,"ignoreShardSelector":false}
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

// The crash fence: once the `after_writes`-th write (counted from when the
// rule is set) of a client whose User-Agent starts with `user_agent` (not
// empty) is stored, the fence is up for that client: every later request
// of it is dropped (the connection closed, no response), its open watches
// are cut the same way, and a write of it that is already under way is
// refused before it is stored. The fencing write itself is stored and its
// response is not sent. JSON: "crashAfterWrite":{"userAgent":..,
// "writes":k}; null clears it.
struct CrashRule {
  std::string user_agent;
  int64_t after_writes = 1;
};

// While set, the events of the objects `match` selects (its group,
// resource, namespace and name; `user_agent` is the watcher's; verb and
// subresource are not looked at) are not sent to the watch streams of the
// watchers it selects but kept per stream, in order; releasing the hold
// sends them. A stream never reorders: once it holds an event, it holds
// every later one too until the held ones go. Its bookmarks stay before
// the first held event. Writes go on. JSON in "watchHolds": the filter's
// members.
struct WatchHold {
  RequestFilter match;
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

  // Sets the crash fence's rule, replacing (and lifting) any earlier one.
  // InvalidArgument for an empty user_agent or after_writes below 1.
  absl::Status SetCrashRule(CrashRule rule);
  // Lifts the fence and clears the rule: the client may come back.
  void ClearCrashRule();
  // Whether the fence is up for a client with this User-Agent.
  bool crashed(std::string_view user_agent) const;
  // Waits until the fence goes up or `deadline` passes; returns whether it
  // is up.
  bool WaitCrashed(absl::Time deadline) const;
  // Called once each time the fence goes up, with the User-Agent of the
  // fencing write, on the writing thread after the write is stored
  // (before any response); it must not block on the server.
  void SetCrashCallback(std::function<void(const std::string&)> callback);

  // Sets a hold; returns its id.
  int64_t HoldWatch(WatchHold hold);
  // Releases one hold, or every hold: the streams send what they held (as
  // far as no other hold keeps it).
  void ReleaseWatchHold(int64_t id);
  // Returns how many holds were released.
  int ReleaseWatchHolds();

  // Adds a drop rule (count >= 1).
  absl::Status DropWatchEvents(WatchDrop drop);
  // Clears every rule: error rules, the crash rule (lifting the fence),
  // holds (releasing them) and drops (forgetting the events they picked).
  void ClearRules();

  // The server calls this with every write it stores, in storage order,
  // under its storage lock (write_log.h): drop rules pick their events, the
  // crash fence counts.
  void OnWrite(const WriteRecord& write);
  // Under the storage lock before a write is decided, with the writer's
  // User-Agent: refuses a fenced client's write.
  absl::Status AdmitWrite(std::string_view user_agent) const;
  // After a write, the storage lock released: runs what the fence going up
  // calls for (cutting watches, the callback).
  void AfterWrite();

  // What a watch stream does with one event (by the write that made it, of
  // the object in `ns`/`name`).
  enum class EventFate { kSend, kDrop, kHold };
  EventFate FateOf(const WatchInfo& watch, int64_t resource_version,
                   std::string_view ns, std::string_view name);
  // Whether a hold keeps the event of an object in `ns`/`name` from the
  // watch.
  bool Holds(const WatchInfo& watch, std::string_view ns,
             std::string_view name);

  // Watch streams register a wake-up (which must make the stream look at
  // the rules again soon, and must not call into the injector), called
  // when holds are released and when the crash fence goes up. Returns an
  // id for UnregisterWatch.
  int64_t RegisterWatch(std::function<void()> wake);
  void UnregisterWatch(int64_t id);

  // The rules as JSON members (no braces): "errorRules":[...] (each with
  // "matched": the requests it has counted), "watchHolds":[...] (each with
  // its "id"), "watchDrops":[...] and "rulesFired":n.
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
  bool HoldsLocked(const WatchInfo& watch, std::string_view ns,
                   std::string_view name) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Calls every registered wake-up (without mu_ held).
  void WakeWatches();

  std::atomic<bool> active_{false};
  struct ArmedErrorRule {
    ErrorRule rule;
    int matched = 0;
  };
  std::vector<ArmedErrorRule> error_rules_ ABSL_GUARDED_BY(mu_);

  std::optional<CrashRule> crash_ ABSL_GUARDED_BY(mu_);
  int64_t crash_counted_ ABSL_GUARDED_BY(mu_) = 0;
  // The fence is up for crash_->user_agent.
  bool crashed_ ABSL_GUARDED_BY(mu_) = false;
  // The fence went up; AfterWrite has not acted on it yet.
  bool crash_pending_ ABSL_GUARDED_BY(mu_) = false;
  std::string crash_writer_ ABSL_GUARDED_BY(mu_);
  std::function<void(const std::string&)> crash_callback_ ABSL_GUARDED_BY(mu_);
  std::map<int64_t, WatchHold> holds_ ABSL_GUARDED_BY(mu_);
  int64_t next_hold_ ABSL_GUARDED_BY(mu_) = 1;
  std::vector<WatchDrop> drops_ ABSL_GUARDED_BY(mu_);
  // Writes picked by a drop rule: resourceVersion -> the watchers' filter
  // (its user_agent). Kept until ClearRules, as a watch resumed from
  // before them must not see them either.
  std::map<int64_t, std::string> dropped_ ABSL_GUARDED_BY(mu_);
  int64_t fired_ ABSL_GUARDED_BY(mu_) = 0;

  // Never taken with mu_ held: wake-ups take the watchers' locks.
  Mutex watches_mu_;
  std::map<int64_t, std::function<void()>> watches_
      ABSL_GUARDED_BY(watches_mu_);
  int64_t next_watch_ ABSL_GUARDED_BY(watches_mu_) = 1;
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_ENDPOINTS_FAULTS_H_
