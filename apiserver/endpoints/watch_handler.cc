// The watch handler: a chunked stream of watch events for one collection,
// with bookmarks, initial events and timeouts (kube-apiserver's
// endpoints/handlers/watch.go).
#include <algorithm>
#include <deque>
#include <string>

#include "absl/random/random.h"
#include "absl/strings/numbers.h"
#include "absl/time/clock.h"
#include "api/errors/errors.h"
#include "apiserver/endpoints/handler.h"
#include "apiserver/endpoints/request_options.h"
#include "apiserver/endpoints/response_writers.h"
#include "apiserver/internal/object_fields.h"
#include "base/str_cat.h"
#include "glog/logging.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace kcr {
namespace apiserver {

void ApiHandler::ServeWatch(const ResourceInfo& r, const std::string& ns,
                            const HttpRequest& req, HttpExchange* ex,
                            bool table, const std::string& partial_version) {
  auto lo_or = ParseListOptions(req);
  if (!lo_or.ok()) return SendError(ex, lo_or.status());
  ListOptions lo = std::move(*lo_or);
  if (options_.faults != nullptr &&
      options_.faults->options().ignore_shard_selector) {
    lo.shard_selector = api::ShardSelector();
  }
  absl::Status sel = Registry::ValidateSelectors(r, &lo);
  if (!sel.ok()) return SendError(ex, sel);
  bool bookmarks = ParseBool(req.Query("allowWatchBookmarks"));
  std::optional<bool> send_initial;
  if (req.HasQuery("sendInitialEvents")) {
    send_initial = ParseBool(req.Query("sendInitialEvents"));
  }
  const std::string& rv = lo.resource_version;
  const std::string& match = lo.resource_version_match;
  std::vector<api::FieldError> errors;
  auto forbidden = [&](const char* field, const char* detail) {
    api::FieldError e;
    e.type = api::FieldError::Type::kForbidden;
    e.field = field;
    e.detail = detail;
    errors.push_back(e);
  };
  if (send_initial.has_value()) {
    if (match != "NotOlderThan") {
      forbidden("resourceVersionMatch",
                "sendInitialEvents requires setting resourceVersionMatch to "
                "NotOlderThan");
    }
    if (!bookmarks) {
      forbidden("allowWatchBookmarks",
                "sendInitialEvents requires setting allowWatchBookmarks to "
                "true");
    }
  } else if (!match.empty()) {
    forbidden("resourceVersionMatch",
              "resourceVersionMatch is forbidden for watch unless "
              "sendInitialEvents is provided");
  }
  if (!errors.empty()) {
    return SendApiError(ex, api::StatusError::Invalid(
                                {"meta.k8s.io", "ListOptions"}, "", errors));
  }
  int64_t requested_rv = 0;
  if (!rv.empty() && !absl::SimpleAtoi(rv, &requested_rv)) {
    return SendApiError(ex, api::StatusError::BadRequest(
                                Cat("invalid resource version: ", Quote(rv))));
  }
  const Clock* clock = options_.clock;
  absl::Time start = clock->Now();
  absl::Duration timeout;
  int64_t timeout_seconds = 0;
  if (req.HasQuery("timeoutSeconds") &&
      absl::SimpleAtoi(req.Query("timeoutSeconds"), &timeout_seconds) &&
      timeout_seconds > 0) {
    timeout = absl::Seconds(timeout_seconds);
  } else {
    thread_local absl::BitGen gen;
    timeout = options_.min_request_timeout *
              (1.0 + absl::Uniform<double>(gen, 0.0, 1.0));
  }
  absl::Time end = start + timeout;
  FaultInjector* injector = options_.faults;
  const WatchInfo watch_info{r.group(), r.resource(), req.Header("user-agent")};
  FaultOptions faults = injector->options();
  if (faults.watch_close_after > absl::ZeroDuration()) {
    end = std::min(end, start + faults.watch_close_after);
  }
  Storage* storage = registry_->storage();
  std::string collection = r.StorageKey();
  bool initial = send_initial.value_or(rv.empty() || rv == "0");
  bool selective = !lo.label_selector.Empty() || !lo.field_selector.Empty() ||
                   !lo.shard_selector.Empty();
  WatchFilter filter;
  filter.ns = ns;
  if (selective) {
    filter.selects = [lo](const api::Object& o) {
      return Registry::Matches(o, lo);
    };
  }
  std::vector<api::ObjectPtr> initial_objects;
  int64_t cursor = 0;
  if (initial) {
    Storage::ListOptions so;
    so.ns = ns;
    so.filter = filter.selects;
    auto l = storage->List(collection, so);
    if (!l.ok()) return SendError(ex, l.status());
    initial_objects = std::move(l->items);
    cursor = l->resource_version;
  } else if (rv.empty() || rv == "0") {
    cursor = storage->CurrentResourceVersion();
  } else {
    cursor = requested_rv;
  }

  if (!ex->StartStream(200, kJson, {})) return;
  ++active_watches_;
  int64_t sent = 0;
  bool first_table = true;
  std::string batch;
  auto object_json = [&](const api::ObjectPtr& o) {
    api::ObjectPtr v = Registry::AtVersion(o, r);
    if (!partial_version.empty()) {
      return PartialObjectMetadataJson(*v, partial_version);
    }
    if (table) {
      TableRequest tr;
      tr.no_headers = !first_table;
      std::string include = req.Query("includeObject");
      if (include == "None") {
        tr.include_object = TableRequest::IncludeObject::kNone;
      } else if (include == "Object") {
        tr.include_object = TableRequest::IncludeObject::kObject;
      }
      auto t = options_.table_convertor->ConvertToTable(r, {v}, tr);
      if (t.ok()) {
        first_table = false;
        return *t;
      }
    }
    return v->ToJson();
  };
  auto add_event = [&](std::string_view type, const api::ObjectPtr& o) {
    CatAppend(&batch, R"({"type":")", type, R"(","object":)", object_json(o),
              "}\n");
    ++sent;
  };
  auto add_error = [&](const absl::Status& status) {
    api::StatusError e = api::StatusError::FromStatus(status);
    CatAppend(&batch, R"({"type":"ERROR","object":)", e.ToJson(), "}\n");
  };
  auto bookmark = [&](int64_t at, bool initial_end) {
    if (partial_version.empty()) {
      CatAppend(&batch, R"({"type":"BOOKMARK","object":{"kind":")", r.kind(),
                R"(","apiVersion":")", r.api_version());
    } else {
      CatAppend(
          &batch,
          R"({"type":"BOOKMARK","object":{"kind":"PartialObjectMetadata",)",
          R"("apiVersion":"meta.k8s.io/)", partial_version);
    }
    CatAppend(&batch, R"(","metadata":{"resourceVersion":")", at, "\"");
    if (initial_end) {
      batch += R"(,"annotations":{"k8s.io/initial-events-end":"true"})";
    }
    batch += "}}}\n";
  };
  auto flush = [&]() {
    if (batch.empty()) return true;
    bool ok = ex->WriteChunk(batch);
    batch.clear();
    return ok;
  };
  auto close_after_events = [&]() {
    return faults.watch_close_after_events > 0 &&
           sent >= faults.watch_close_after_events;
  };
  bool alive = true;
  for (const api::ObjectPtr& o : initial_objects) {
    add_event("ADDED", o);
    if (batch.size() > (1 << 16) && !(alive = flush())) break;
    if (close_after_events()) break;
  }
  initial_objects.clear();
  if (alive && send_initial.value_or(false) && !close_after_events()) {
    bookmark(cursor, true);
  }
  alive = alive && flush();
  // Registered only now, so that what was written while the initial state
  // went out comes from the history rather than filling the queue.
  std::unique_ptr<CacheWatcher> watcher;
  if (alive && !close_after_events()) {
    auto w = storage->Watch(collection, cursor, filter);
    if (w.ok()) {
      watcher = std::move(*w);
    } else {
      add_error(w.status());
      flush();
    }
  }
  // Events a WatchHold keeps back, in order; bookmarks stay before them.
  std::deque<WatchEvent> held;
  auto bookmark_at = [&]() {
    return held.empty() ? cursor : held.front().resource_version - 1;
  };
  // Released holds and the crash fence wake the stream.
  const int64_t registration =
      watcher == nullptr
          ? 0
          : injector->RegisterWatch([w = watcher.get()] { w->Interrupt(); });
  bool cut = false;
  absl::Time next_bookmark = start + options_.bookmark_interval;
  while (watcher != nullptr && !close_after_events()) {
    // Outside every lock: this may cost a system call.
    if (ex->Cancelled()) break;
    absl::Time now = clock->Now();
    if (now >= end) {
      if (bookmarks) {
        bookmark(bookmark_at(), false);
        flush();
      }
      break;
    }
    // Wake at least every 5 s to notice a client that went away.
    absl::Time deadline = std::min(end, now + absl::Seconds(5));
    if (bookmarks) deadline = std::min(deadline, next_bookmark);
    CacheWatcher::Batch b = watcher->Next(deadline, 1000);
    cursor = b.resource_version;
    const bool faulty = injector->active();
    // Behind the crash fence: the client is gone, the connection is cut.
    if (faulty && injector->crashed(watch_info.user_agent)) {
      ex->WriteRaw("");
      cut = true;
      break;
    }
    for (const WatchEvent& e : b.events) {
      const FaultInjector::EventFate fate =
          faulty ? injector->FateOf(watch_info, e.resource_version,
                                    e.object->namespace_(), e.object->name())
                 : FaultInjector::EventFate::kSend;
      if (fate == FaultInjector::EventFate::kDrop) continue;
      // In order: behind a held event everything waits, also once the
      // holds are gone (the loop below sends the held ones first).
      if (fate == FaultInjector::EventFate::kHold || !held.empty()) {
        held.push_back(e);
        continue;
      }
      add_event(EventTypeName(e.type), e.object);
      if (close_after_events()) break;
      // Chunks of about 64 KiB at most, as for the initial state.
      if (batch.size() > (1 << 16) && !(alive = flush())) break;
    }
    // What no hold keeps any more goes out, in order.
    while (alive && !held.empty() && !close_after_events() &&
           !(faulty &&
             injector->Holds(watch_info, held.front().object->namespace_(),
                             held.front().object->name()))) {
      add_event(EventTypeName(held.front().type), held.front().object);
      held.pop_front();
      if (batch.size() > (1 << 16)) alive = flush();
    }
    if (!alive) break;
    if (b.terminated) {
      LOG(WARNING) << "watch terminated, too slow to keep up resource="
                   << collection << " ns=" << ns << " rv=" << cursor
                   << " expired=" << !b.error.ok();
      if (!b.error.ok()) add_error(b.error);
      flush();
      break;
    }
    if (!flush()) break;
    now = clock->Now();
    // At the deadline the loop's head sends the last bookmark.
    if (bookmarks && now >= next_bookmark && now < end) {
      bookmark(bookmark_at(), false);
      if (!flush()) break;
      next_bookmark = now + options_.bookmark_interval;
    }
  }
  if (registration != 0) injector->UnregisterWatch(registration);
  watcher.reset();
  if (!cut) ex->EndStream();
  --active_watches_;
}

}  // namespace apiserver
}  // namespace kcr
