// EventCorrelator: what client-go's tools/record does to an event between
// the recorder and the API server, so that a controller that repeats
// itself does not flood the server:
//
//   1. Aggregation: events that differ only in message (same source,
//      involved object, type and reason) are "similar". From the
//      `max_similar_events`-th distinct message within `max_interval` on,
//      they become one Event whose message is
//      "(combined from similar events): <latest message>".
//   2. Counting: an event equal to one already sent (same source, involved
//      object, type, reason and message — or the same combined Event) is
//      not created again: the existing Event gets count + 1 and the new
//      lastTimestamp (and message), sent as a JSON merge patch.
//   3. Spam filter: a token bucket per (source, involved object), `burst`
//      events and then one per `spam_refill_interval`; events past it are
//      dropped.
//
// State lives in LRU caches of `cache_size` keys, as client-go's. Not
// thread-safe: the broadcaster's sink thread is its only user.
#ifndef KCR_RUNTIME_EVENTS_EVENT_CORRELATOR_H_
#define KCR_RUNTIME_EVENTS_EVENT_CORRELATOR_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "runtime/events/event.h"
#include "runtime/events/lru_cache.h"

namespace kcr::events {

// Defaults are client-go's.
struct CorrelatorOptions {
  size_t cache_size = 4096;
  // Aggregation: distinct messages of similar events within max_interval
  // before they are combined.
  int max_similar_events = 10;
  absl::Duration max_interval = absl::Minutes(10);
  // Spam filter per (source, involved object).
  int spam_burst = 25;
  absl::Duration spam_refill_interval = absl::Minutes(5);
  // Not owned; null means the real clock.
  const Clock* clock = nullptr;
};

struct CorrelateResult {
  // The event to write: new (count 1, to create) or a repeat (count > 1,
  // named as the Event already on the server).
  Event event;
  // For a repeat: the JSON merge patch to send to the existing Event
  // ({"count":..,"lastTimestamp":..,"message":..}); empty otherwise.
  std::string patch;
  // The spam filter dropped it: write nothing.
  bool skip = false;
  // Where the written Event is remembered (pass to UpdateState).
  std::string key;
};

class EventCorrelator {
 public:
  explicit EventCorrelator(CorrelatorOptions options = {});

  CorrelateResult Correlate(const Event& event);

  // Records what the server answered for a written event (its name and
  // resourceVersion), so that the next repeat patches it.
  void UpdateState(const std::string& key, const Event& written);

 private:
  struct AggregateRecord {
    // Distinct messages seen (bounded by max_similar_events).
    absl::flat_hash_set<std::string> messages;
    absl::Time last_timestamp;
  };
  struct Observation {
    int32_t count = 0;
    absl::Time first_timestamp;
    absl::Time last_timestamp;
    std::string name;
    std::string resource_version;
  };
  struct SpamRecord {
    double tokens = 0;
    absl::Time last;
  };

  // The event to pass on after aggregation, and its counting key.
  Event Aggregate(const Event& event, std::string* key);
  // Turns a repeat into a patch of the existing Event.
  void Observe(const std::string& key, CorrelateResult* result);
  // True when the spam filter drops `event`.
  bool Filter(const Event& event);

  const CorrelatorOptions options_;
  const Clock* const clock_;
  internal::LruCache<AggregateRecord> aggregates_;
  internal::LruCache<Observation> observations_;
  internal::LruCache<SpamRecord> spam_;
};

// The prefix of a combined event's message.
inline constexpr char kCombinedMessagePrefix[] =
    "(combined from similar events): ";

}  // namespace kcr::events

#endif  // KCR_RUNTIME_EVENTS_EVENT_CORRELATOR_H_
