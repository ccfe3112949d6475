#include "apiserver/storage/storage.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "api/errors/errors.h"
#include "api/object_builder.h"
#include "base/str_cat.h"
#include "base/string_view.h"

namespace kcr {
namespace apiserver {

Storage::Storage(StorageOptions options)
    : options_(options),
      resource_version_(options.initial_resource_version),
      published_rv_(options.initial_resource_version),
      first_rv_(options.initial_resource_version + 1),
      compacted_through_(options.initial_resource_version) {
  for (const auto& [collection, ttl] : options_.ttl) {
    if (ttl > absl::ZeroDuration()) {
      expirer_ = std::thread([this] { ExpireLoop(); });
      break;
    }
  }
}

Storage::~Storage() { StopExpiring(); }

void Storage::StopExpiring() {
  {
    MutexLock l(&mu_);
    stopping_ = true;
  }
  expiry_cv_.SignalAll();
  if (expirer_.joinable()) expirer_.join();
}

absl::Duration Storage::TtlOf(std::string_view collection) const {
  if (options_.ttl.empty()) return absl::ZeroDuration();
  auto it = options_.ttl.find(ToAbsl(collection));
  return it == options_.ttl.end() ? absl::ZeroDuration() : it->second;
}

void Storage::ExpireLoop() {
  while (true) {
    std::vector<WatchCache*> dispatch;
    {
      MutexLock l(&mu_);
      while (true) {
        if (stopping_) return;
        std::optional<absl::Time> next = expiry_.NextDeadline();
        if (next.has_value() && *next <= options_.clock->Now()) break;
        expiry_moved_ = false;
        // Woken early by a write that moved the earliest deadline; the
        // clock may also return early: either way, look again. With
        // nothing to expire the clock is not involved: a test's fake clock
        // sees no waiter, and may be gone before the server is.
        if (next.has_value()) {
          options_.clock->WaitUntil(&mu_, &expiry_cv_, *next);
        } else {
          expiry_cv_.Wait(&mu_);
        }
      }
      ExpireDueLocked(&dispatch);
    }
    // As Write: nobody is woken under the storage lock.
    events_cv_.SignalAll();
    for (WatchCache* cache : dispatch) cache->Kick();
    if (!dispatch.empty() && observer_.written) observer_.written();
  }
}

void Storage::ExpireDueLocked(std::vector<WatchCache*>* dispatch) {
  const Storage::UpdateFunc remove =
      [](const api::ObjectPtr&) -> absl::StatusOr<Mutation> {
    return Mutation::Remove();
  };
  for (const auto& [collection, key] : expiry_.PopDue(options_.clock->Now())) {
    // Keys are "<namespace>/<name>"; a namespace has no '/'.
    const size_t slash = key.find('/');
    WatchCache* cache = nullptr;
    absl::StatusOr<WriteResult> removed =
        WriteLocked(collection, std::string_view(key).substr(0, slash),
                    std::string_view(key).substr(slash + 1), remove, &cache);
    if (cache != nullptr && std::find(dispatch->begin(), dispatch->end(),
                                      cache) == dispatch->end()) {
      dispatch->push_back(cache);
    }
  }
}

std::string Storage::Key(std::string_view ns, std::string_view name) {
  return Cat(ns, "/", name);
}

absl::Status Storage::TooOld(int64_t rv) const {
  return api::StatusError::Expired(
             Cat("too old resource version: ", rv, " (", first_rv_ - 1, ")"))
      .ToStatus();
}

WatchCache* Storage::CacheLocked(std::string_view collection) {
  std::unique_ptr<WatchCache>& c = caches_[ToAbsl(collection)];
  if (c == nullptr) {
    WatchCacheOptions wo;
    wo.queue_size = options_.watch_queue_size;
    wo.clock = options_.clock;
    // Nothing of this collection was ever evicted; only a compaction
    // bounds where its watches may start.
    c = std::make_unique<WatchCache>(std::string(collection), &published_rv_,
                                     compacted_through_, wo);
  }
  return c.get();
}

void Storage::Record(StoredEvent event, WatchCache** dispatch) {
  auto e = std::make_shared<const StoredEvent>(std::move(event));
  if (observer_.recorded) observer_.recorded(*e);
  WatchCache* cache = CacheLocked(e->collection);
  const int64_t rv = e->resource_version;
  if (cache->Append(e)) *dispatch = cache;
  history_.push_back({std::move(e), cache});
  size_t cap = std::max<size_t>(1, options_.history_size);
  while (history_.size() > cap) {
    const Recorded& oldest = history_.front();
    oldest.cache->Evict(oldest.event->resource_version);
    history_.pop_front();
    ++first_rv_;
  }
  published_rv_.store(rv, std::memory_order_release);
}

absl::StatusOr<Storage::WriteResult> Storage::Write(std::string_view collection,
                                                    std::string_view ns,
                                                    std::string_view name,
                                                    const UpdateFunc& fn,
                                                    const Precondition* pre) {
  WatchCache* dispatch = nullptr;
  absl::StatusOr<WriteResult> result;
  bool expiry_moved = false;
  {
    MutexLock l(&mu_);
    if (observer_.admit) {
      absl::Status admitted = observer_.admit();
      if (!admitted.ok()) return admitted;
    }
    absl::Status checked =
        pre == nullptr
            ? absl::OkStatus()
            : pre->check(GetLocked(pre->collection, Key(pre->ns, pre->name)));
    if (!checked.ok()) return checked;
    result = WriteLocked(collection, ns, name, fn, &dispatch);
    expiry_moved = std::exchange(expiry_moved_, false);
  }
  // Nobody is woken under the storage lock.
  if (result.ok() && result->op != Mutation::Op::kKeep) {
    events_cv_.SignalAll();
    if (dispatch != nullptr) dispatch->Kick();
    if (observer_.written) observer_.written();
  }
  if (expiry_moved) expiry_cv_.Signal();
  return result;
}

absl::StatusOr<Storage::WriteResult> Storage::WriteLocked(
    std::string_view collection, std::string_view ns, std::string_view name,
    const UpdateFunc& fn, WatchCache** dispatch) {
  std::string coll(collection);
  Collection& c = collections_[coll];
  std::string key = Key(ns, name);
  auto it = c.find(key);
  api::ObjectPtr current = it == c.end() ? nullptr : it->second;
  absl::StatusOr<Mutation> decided = fn(current);
  if (!decided.ok()) return decided.status();
  Mutation& m = *decided;
  WriteResult result;
  result.previous = current;
  result.op = m.op;
  switch (m.op) {
    case Mutation::Op::kKeep:
      result.object = current;
      return result;
    case Mutation::Op::kPut: {
      if (!m.object.has_value()) {
        return api::StatusError::InternalError("put without an object")
            .ToStatus();
      }
      int64_t rv = resource_version_ + 1;
      m.object->SetResourceVersion(Cat(rv));
      absl::StatusOr<api::ObjectPtr> built = m.object->Build();
      if (!built.ok()) {
        return api::StatusError::BadRequest(ToStd(built.status().message()))
            .ToStatus();
      }
      resource_version_ = rv;
      if (const absl::Duration ttl = TtlOf(coll); ttl > absl::ZeroDuration()) {
        const std::optional<absl::Time> earliest = expiry_.NextDeadline();
        expiry_.Set(coll, key, options_.clock->Now() + ttl);
        if (expiry_.NextDeadline() != earliest) expiry_moved_ = true;
      }
      // The position found above: one search of the collection per write.
      if (it == c.end()) {
        c.emplace_hint(it, key, *built);
      } else {
        it->second = *built;
      }
      if (!indexes_.empty()) {
        ReindexLocked(coll, key, current.get(), built->get());
      }
      result.object = *built;
      result.event =
          current == nullptr ? EventType::kAdded : EventType::kModified;
      Record({result.event, rv, coll, *built, current}, dispatch);
      return result;
    }
    case Mutation::Op::kRemove: {
      if (current == nullptr) {
        result.op = Mutation::Op::kKeep;
        return result;
      }
      int64_t rv = resource_version_ + 1;
      api::ObjectBuilder b = current->ToBuilder();
      b.SetResourceVersion(Cat(rv));
      absl::StatusOr<api::ObjectPtr> built = b.Build();
      if (!built.ok()) return built.status();
      resource_version_ = rv;
      if (TtlOf(coll) > absl::ZeroDuration()) expiry_.Erase(coll, key);
      c.erase(it);
      if (!indexes_.empty()) ReindexLocked(coll, key, current.get(), nullptr);
      result.object = *built;
      result.event = EventType::kDeleted;
      Record({EventType::kDeleted, rv, coll, *built, current}, dispatch);
      return result;
    }
  }
  return result;
}

api::ObjectPtr Storage::Get(std::string_view collection, std::string_view ns,
                            std::string_view name) const {
  return GetByKey(collection, Key(ns, name));
}

api::ObjectPtr Storage::GetByKey(std::string_view collection,
                                 std::string_view key) const {
  MutexLock l(&mu_);
  return GetLocked(collection, key);
}

api::ObjectPtr Storage::GetLocked(std::string_view collection,
                                  std::string_view key) const {
  auto c = collections_.find(ToAbsl(collection));
  if (c == collections_.end()) return nullptr;
  auto it = c->second.find(key);
  return it == c->second.end() ? nullptr : it->second;
}

size_t Storage::Count(std::string_view collection) const {
  MutexLock l(&mu_);
  auto c = collections_.find(ToAbsl(collection));
  return c == collections_.end() ? 0 : c->second.size();
}

std::vector<api::ObjectPtr> Storage::Snapshot(std::string_view collection,
                                              std::string_view ns) const {
  ListOptions options;
  options.ns = std::string(ns);
  absl::StatusOr<ListResult> r = List(collection, options);
  if (!r.ok()) return {};
  return std::move(r->items);
}

absl::StatusOr<Storage::ListResult> Storage::List(
    std::string_view collection, const ListOptions& options) const {
  MutexLock l(&mu_);
  ListResult result;
  int64_t at = options.at_resource_version;
  if (at == 0) at = resource_version_;
  if (at > resource_version_) {
    api::StatusError e;
    e.code = 504;
    e.reason = "Timeout";
    e.message = Cat("Too large resource version: ", at,
                    ", current: ", resource_version_);
    e.causes.push_back(
        {"ResourceVersionTooLarge", "Too large resource version", ""});
    e.retry_after_seconds = 1;
    return e.ToStatus();
  }
  if (at < first_rv_ - 1) return TooOld(at);
  result.resource_version = at;

  static const Collection kEmpty;
  auto cit = collections_.find(ToAbsl(collection));
  const Collection& current = cit == collections_.end() ? kEmpty : cit->second;

  // The state at `at` differs from the current one only at keys written
  // since: for each, its value before the first such write.
  std::map<std::string, api::ObjectPtr> overrides;
  if (at < resource_version_) {
    for (size_t i = static_cast<size_t>(at + 1 - first_rv_);
         i < history_.size(); ++i) {
      const StoredEvent& e = *history_[i].event;
      if (e.collection != collection) continue;
      const api::Object& o = e.object ? *e.object : *e.previous;
      std::string key = Key(o.namespace_(), o.name());
      overrides.emplace(std::move(key), e.previous);
    }
  }

  std::string prefix = options.ns.empty() ? "" : options.ns + "/";
  std::string start = std::max(prefix, options.start_key);
  auto a = current.lower_bound(start);
  auto b = overrides.lower_bound(start);
  bool counting_rest = false;
  auto in_range = [&](const std::string& key) {
    return prefix.empty() || absl::StartsWith(key, prefix);
  };
  while (true) {
    const std::string* key = nullptr;
    api::ObjectPtr value;
    bool a_ok = a != current.end() && in_range(a->first);
    bool b_ok = b != overrides.end() && in_range(b->first);
    if (!a_ok && !b_ok) break;
    if (b_ok && (!a_ok || b->first <= a->first)) {
      key = &b->first;
      value = b->second;
      if (a_ok && a->first == b->first) ++a;
      ++b;
    } else {
      key = &a->first;
      value = a->second;
      ++a;
    }
    if (value == nullptr) continue;
    if (options.filter && !options.filter(*value)) continue;
    if (counting_rest) {
      ++result.remaining;
      continue;
    }
    if (options.limit > 0 &&
        static_cast<int64_t>(result.items.size()) == options.limit) {
      result.continue_key = *key;
      if (options.filter) break;
      counting_rest = true;
      ++result.remaining;
      continue;
    }
    result.items.push_back(std::move(value));
  }
  return result;
}

int64_t Storage::CurrentResourceVersion() const {
  MutexLock l(&mu_);
  return resource_version_;
}

int64_t Storage::OldestResourceVersion() const {
  MutexLock l(&mu_);
  return first_rv_ - 1;
}

size_t Storage::HistorySize() const {
  MutexLock l(&mu_);
  return history_.size();
}

size_t Storage::PendingExpiries() const {
  MutexLock l(&mu_);
  return expiry_.size();
}

absl::StatusOr<std::unique_ptr<CacheWatcher>> Storage::Watch(
    std::string_view collection, int64_t after, WatchFilter filter) {
  WatchCache* cache;
  {
    MutexLock l(&mu_);
    cache = CacheLocked(collection);
  }
  // Caches live as long as Storage; registering needs only the cache.
  return cache->Watch(after, std::move(filter));
}

absl::StatusOr<std::vector<StoredEventPtr>> Storage::WaitForEvents(
    std::string_view collection, int64_t after, absl::Time deadline, size_t max,
    const std::function<bool()>& cancelled, int64_t* scanned_to) const {
  std::vector<StoredEventPtr> out;
  MutexLock l(&mu_);
  while (true) {
    if (after < first_rv_ - 1) return TooOld(after);
    int64_t rv = after;
    while (rv < resource_version_ && out.size() < max) {
      ++rv;
      const StoredEventPtr& e =
          history_[static_cast<size_t>(rv - first_rv_)].event;
      if (collection.empty() || e->collection == collection) out.push_back(e);
    }
    *scanned_to = rv;
    after = rv;
    if (!out.empty()) return out;
    if ((cancelled && cancelled()) || absl::Now() >= deadline) return out;
    events_cv_.WaitWithDeadline(&mu_, deadline);
  }
}

void Storage::Interrupt() {
  std::vector<WatchCache*> caches;
  {
    // Under the lock: a WaitForEvents between its check of `cancelled` and
    // its wait would miss the signal otherwise.
    MutexLock l(&mu_);
    events_cv_.SignalAll();
    caches.reserve(caches_.size());
    for (const auto& [name, cache] : caches_) caches.push_back(cache.get());
  }
  for (WatchCache* cache : caches) cache->InterruptAll();
}

void Storage::Compact() {
  {
    MutexLock l(&mu_);
    history_.clear();
    first_rv_ = resource_version_ + 1;
    compacted_through_ = resource_version_;
    for (const auto& [name, cache] : caches_) {
      cache->Compact(resource_version_);
    }
  }
  events_cv_.SignalAll();
}

namespace {

// What `fn` files `object` under, sorted and without repeats (none for
// null).
std::vector<std::string> IndexValues(const Storage::IndexFunc& fn,
                                     const api::Object* object) {
  std::vector<std::string> values;
  if (object == nullptr) return values;
  fn(*object, &values);
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

}  // namespace

void Storage::ReindexLocked(const std::string& collection,
                            const std::string& key, const api::Object* before,
                            const api::Object* after) {
  for (auto& [name, index] : indexes_) {
    const std::vector<std::string> old_values = IndexValues(index.fn, before);
    const std::vector<std::string> new_values = IndexValues(index.fn, after);
    if (old_values == new_values) continue;
    const std::pair<std::string, std::string> entry(collection, key);
    for (const std::string& v : old_values) {
      if (std::binary_search(new_values.begin(), new_values.end(), v)) {
        continue;
      }
      auto it = index.entries.find(v);
      if (it == index.entries.end()) continue;
      it->second.erase(entry);
      if (it->second.empty()) index.entries.erase(it);
    }
    for (const std::string& v : new_values) {
      if (std::binary_search(old_values.begin(), old_values.end(), v)) {
        continue;
      }
      index.entries[v].insert(entry);
    }
  }
}

bool Storage::AddIndex(std::string name, IndexFunc fn) {
  MutexLock l(&mu_);
  if (indexes_.count(name) > 0) return false;
  Index& index = indexes_[name];
  index.fn = std::move(fn);
  for (const auto& [collection, objects] : collections_) {
    for (const auto& [key, object] : objects) {
      for (std::string& v : IndexValues(index.fn, object.get())) {
        index.entries[std::move(v)].emplace(collection, key);
      }
    }
  }
  return true;
}

std::vector<api::ObjectPtr> Storage::ByIndex(std::string_view collection,
                                             std::string_view name,
                                             std::string_view value) const {
  std::vector<api::ObjectPtr> out;
  MutexLock l(&mu_);
  auto index = indexes_.find(name);
  if (index == indexes_.end()) return out;
  auto entries = index->second.entries.find(ToAbsl(value));
  if (entries == index->second.entries.end()) return out;
  auto objects = collections_.find(ToAbsl(collection));
  if (objects == collections_.end()) return out;
  const std::string coll(collection);
  for (auto it = entries->second.lower_bound({coll, std::string()});
       it != entries->second.end() && it->first == coll; ++it) {
    auto o = objects->second.find(it->second);
    if (o != objects->second.end()) out.push_back(o->second);
  }
  return out;
}

std::vector<std::pair<std::string, api::ObjectPtr>> Storage::ByIndexAll(
    std::string_view name, std::string_view value) const {
  std::vector<std::pair<std::string, api::ObjectPtr>> out;
  MutexLock l(&mu_);
  auto index = indexes_.find(name);
  if (index == indexes_.end()) return out;
  auto entries = index->second.entries.find(ToAbsl(value));
  if (entries == index->second.entries.end()) return out;
  for (const auto& [collection, key] : entries->second) {
    auto objects = collections_.find(collection);
    if (objects == collections_.end()) continue;
    auto o = objects->second.find(key);
    if (o != objects->second.end()) out.emplace_back(collection, o->second);
  }
  return out;
}

}  // namespace apiserver
}  // namespace kcr
