#include "runtime/events/event_correlator.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/types/time.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace kcr::events {
namespace {

// Fields are joined with a separator that cannot occur in names, kinds or
// uids, so that two different tuples never give the same key.
constexpr char kSep = '\x1f';

std::string SourceObjectKey(const Event& e) {
  const api::ObjectReference& o = e.involved_object;
  return absl::StrCat(e.source.component, std::string(1, kSep), e.source.host,
                      std::string(1, kSep), o.kind, std::string(1, kSep),
                      o.namespace_, std::string(1, kSep), o.name,
                      std::string(1, kSep), o.uid, std::string(1, kSep),
                      o.api_version);
}

// client-go's EventAggregatorByReasonFunc: similar events share this key.
std::string AggregateKey(const Event& e) {
  // Tagged, so that no aggregate key equals an event key.
  return absl::StrCat("aggregate", std::string(1, kSep), SourceObjectKey(e),
                      std::string(1, kSep), e.type, std::string(1, kSep),
                      e.reason, std::string(1, kSep), e.reporting_component,
                      std::string(1, kSep), e.reporting_instance);
}

// client-go's getEventKey: equal events share this key.
std::string EventKey(const Event& e) {
  return absl::StrCat("event", std::string(1, kSep), SourceObjectKey(e),
                      std::string(1, kSep), e.involved_object.field_path,
                      std::string(1, kSep), e.type, std::string(1, kSep),
                      e.reason, std::string(1, kSep), e.message);
}

std::string RepeatPatch(const Event& e) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("count");
  w.Int(e.count);
  w.Key("lastTimestamp");
  const std::string last = api::FormatRfc3339(e.last_timestamp);
  w.String(last.data(), static_cast<rapidjson::SizeType>(last.size()));
  w.Key("message");
  w.String(e.message.data(),
           static_cast<rapidjson::SizeType>(e.message.size()));
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace

EventCorrelator::EventCorrelator(CorrelatorOptions options)
    : options_(options),
      clock_(options.clock != nullptr ? options.clock : Clock::Real()),
      aggregates_(std::max<size_t>(options.cache_size, 1)),
      observations_(std::max<size_t>(options.cache_size, 1)),
      spam_(std::max<size_t>(options.cache_size, 1)) {}

CorrelateResult EventCorrelator::Correlate(const Event& event) {
  CorrelateResult result;
  result.event = Aggregate(event, &result.key);
  Observe(result.key, &result);
  // As client-go, the observation above stands even when the filter drops
  // the event: a later repeat carries the count on.
  result.skip = Filter(result.event);
  return result;
}

Event EventCorrelator::Aggregate(const Event& event, std::string* key) {
  const absl::Time now = clock_->Now();
  const std::string aggregate_key = AggregateKey(event);
  AggregateRecord record;
  if (AggregateRecord* found = aggregates_.Get(aggregate_key)) {
    record = std::move(*found);
  }
  if (now - record.last_timestamp > options_.max_interval) {
    record.messages.clear();
  }
  record.messages.insert(event.message);
  record.last_timestamp = now;
  const bool combine =
      static_cast<int>(record.messages.size()) >= options_.max_similar_events;
  if (combine) {
    // Keep the set bounded, as client-go does (it drops any one message).
    record.messages.erase(record.messages.begin());
  }
  aggregates_.Add(aggregate_key, std::move(record));
  if (!combine) {
    *key = EventKey(event);
    return event;
  }
  Event combined;
  combined.namespace_ = event.namespace_;
  combined.name = NewEventName(event.involved_object.name, now);
  combined.involved_object = event.involved_object;
  combined.reason = event.reason;
  combined.message = absl::StrCat(kCombinedMessagePrefix, event.message);
  combined.type = event.type;
  combined.source = event.source;
  combined.first_timestamp = now;
  combined.last_timestamp = now;
  combined.count = 1;
  combined.reporting_component = event.reporting_component;
  combined.reporting_instance = event.reporting_instance;
  *key = aggregate_key;
  return combined;
}

void EventCorrelator::Observe(const std::string& key, CorrelateResult* result) {
  Event& event = result->event;
  Observation* last = observations_.Get(key);
  // A repeat within max_interval of the last one counts on the same
  // Event; after a longer pause (the Event may be gone) a new one starts.
  if (last != nullptr && last->count > 0 &&
      event.last_timestamp - last->last_timestamp <= options_.max_interval) {
    event.name = last->name;
    event.resource_version = last->resource_version;
    event.first_timestamp = last->first_timestamp;
    event.count = last->count + 1;
    result->patch = RepeatPatch(event);
  }
  observations_.Add(
      key, Observation{event.count, event.first_timestamp, event.last_timestamp,
                       event.name, event.resource_version});
}

bool EventCorrelator::Filter(const Event& event) {
  const absl::Time now = clock_->Now();
  const std::string key = SourceObjectKey(event);
  SpamRecord* record = spam_.Get(key);
  if (record == nullptr) {
    spam_.Add(key, SpamRecord{static_cast<double>(options_.spam_burst), now});
    record = spam_.Get(key);
  }
  // A passive token bucket (flowcontrol's TryAccept): refill for the time
  // passed, up to the burst, then take one token if there is one.
  if (options_.spam_refill_interval > absl::ZeroDuration() &&
      now > record->last) {
    record->tokens = std::min<double>(
        options_.spam_burst,
        record->tokens + absl::FDivDuration(now - record->last,
                                            options_.spam_refill_interval));
  }
  record->last = std::max(record->last, now);
  if (record->tokens < 1) return true;
  record->tokens -= 1;
  return false;
}

void EventCorrelator::UpdateState(const std::string& key,
                                  const Event& written) {
  observations_.Add(key, Observation{written.count, written.first_timestamp,
                                     written.last_timestamp, written.name,
                                     written.resource_version});
}

}  // namespace kcr::events
