#include "runtime/cache/real_fifo.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"  // absl::Condition
#include "base/string_view.h"
#include "glog/logging.h"

namespace kcr::cache {

RealFifo::RealFifo(RealFifoOptions options)
    : known_objects_(options.known_objects),
      transform_(std::move(options.transform)),
      name_(std::move(options.name)) {
  if (MetricsProvider* metrics =
          ResolveMetricsProvider(options.metrics, name_)) {
    transform_errors_ =
        metrics->NewDroppedObjectsMetric(name_, kDropTransformError);
    no_key_ = metrics->NewDroppedObjectsMetric(name_, kDropNoKey);
  }
}

RealFifo::~RealFifo() = default;

api::ObjectPtr RealFifo::Transform(api::ObjectPtr object) {
  if (!transform_) return object;
  absl::StatusOr<api::ObjectPtr> transformed = transform_(object);
  if (transformed.ok() && *transformed != nullptr) {
    return *std::move(transformed);
  }
  LOG(WARNING) << "dropping an object its transform rejected fifo=" << name_
               << " object=" << object->namespace_() << "/" << object->name()
               << " error="
               << (transformed.ok() ? "transform returned null"
                                    : transformed.status().ToString());
  if (transform_errors_ != nullptr) transform_errors_->Inc();
  return nullptr;
}

absl::Status RealFifo::Enqueue(DeltaType type, api::ObjectPtr object) {
  if (object == nullptr) {
    return absl::InvalidArgumentError("RealFifo: null object");
  }
  if (object->name().empty()) return MetaNamespaceKey(*object).status();
  // Outside the lock: a transform may be costly, and the order of writes
  // from one thread does not depend on it.
  object = Transform(std::move(object));
  if (object == nullptr) return absl::OkStatus();
  MutexLock lock(&mu_);
  if (closed_) return absl::OkStatus();
  PushLocked(Delta{type, false, std::move(object)});
  WakeLocked();
  return absl::OkStatus();
}

void RealFifo::PushLocked(Delta delta) { items_.push_back(std::move(delta)); }

void RealFifo::WakeLocked() {
  // One popper: Signal wakes it if it waits. (A wake-up per write costs a
  // futex call and a context switch when the popper keeps up with the
  // writer, as it does with a watch.)
  if (holds_ == 0 && !items_.empty()) cv_.Signal();
}

void RealFifo::HoldWakeups() {
  MutexLock lock(&mu_);
  ++holds_;
}

void RealFifo::ReleaseWakeups() {
  MutexLock lock(&mu_);
  CHECK_GT(holds_, 0u) << "RealFifo::ReleaseWakeups without HoldWakeups";
  --holds_;
  WakeLocked();
}

absl::Status RealFifo::Add(api::ObjectPtr object) {
  return Enqueue(DeltaType::kAdded, std::move(object));
}

absl::Status RealFifo::Update(api::ObjectPtr object) {
  return Enqueue(DeltaType::kUpdated, std::move(object));
}

absl::Status RealFifo::Delete(api::ObjectPtr object) {
  return Enqueue(DeltaType::kDeleted, std::move(object));
}

absl::Status RealFifo::Replace(std::vector<api::ObjectPtr> objects,
                               std::string resource_version) {
  // Keys and transforms outside the lock, straight into the deltas to
  // queue: in a deque like items_, which takes it whole when empty (a large
  // list is then never in memory twice).
  std::deque<Delta> listed;
  for (api::ObjectPtr& object : objects) {
    if (object == nullptr) continue;
    if (object->name().empty()) {
      LOG(WARNING) << "skipping a listed object without a key fifo=" << name_
                   << " error=" << MetaNamespaceKey(*object).status();
      if (no_key_ != nullptr) no_key_->Inc();
      continue;
    }
    api::ObjectPtr transformed = Transform(std::move(object));
    if (transformed == nullptr) continue;
    listed.push_back(
        Delta{DeltaType::kReplaced, false, std::move(transformed)});
  }
  // The list may be large: its pointers go now, not at the return.
  std::vector<api::ObjectPtr>().swap(objects);
  MutexLock lock(&mu_);
  if (closed_) return absl::OkStatus();
  // Under mu_: a key that left in_flight_ by now has reached the indexer.
  std::vector<std::string> known_keys;
  if (known_objects_ != nullptr) known_keys = known_objects_->ListKeys();

  // The newest delta of every key waiting or being processed, in the order
  // the keys first appear (oldest first, so tombstones come out in a
  // stable order).
  // Their keys, built once (reserved: `newest` points into them).
  std::vector<std::string> queued_keys;
  queued_keys.reserve((in_flight_ != nullptr ? in_flight_->deltas.size() : 0) +
                      items_.size());
  absl::flat_hash_map<std::string_view, const Delta*> newest;
  std::vector<std::string_view> order;
  auto note = [&](const Delta& delta) {
    queued_keys.push_back(delta.object->Key());
    const std::string_view key = queued_keys.back();
    auto [it, inserted] = newest.try_emplace(key, &delta);
    if (inserted) {
      order.push_back(key);
    } else {
      it->second = &delta;
    }
  };
  if (in_flight_ != nullptr) {
    for (const Delta& delta : in_flight_->deltas) note(delta);
  }
  for (const Delta& delta : items_) note(delta);

  std::vector<Delta> tombstones;
  // Only keys known before the list can be missing from it: with none (the
  // first list) the listed keys need no set.
  if (!order.empty() || !known_keys.empty()) {
    absl::flat_hash_set<std::string> listed_keys;
    listed_keys.reserve(listed.size());
    for (const Delta& delta : listed) listed_keys.insert(delta.object->Key());
    for (std::string_view key : order) {
      const Delta& last = *newest[key];
      if (last.type == DeltaType::kDeleted) continue;
      if (listed_keys.contains(ToAbsl(key))) continue;
      tombstones.push_back(Delta{DeltaType::kDeleted, true, last.object});
    }
    for (const std::string& key : known_keys) {
      if (listed_keys.contains(key) || newest.contains(key)) continue;
      api::ObjectPtr last = known_objects_->GetByKey(key);
      // Gone from the indexer since ListKeys: its deletion was applied.
      if (last == nullptr) continue;
      tombstones.push_back(Delta{DeltaType::kDeleted, true, std::move(last)});
    }
  }
  // `newest` points into items_: done with it before items_ changes.
  newest.clear();
  order.clear();

  if (items_.empty()) {
    items_.swap(listed);
  } else {
    for (Delta& delta : listed) PushLocked(std::move(delta));
  }
  if (!tombstones.empty()) {
    VLOG(2) << "relist found deleted objects fifo=" << name_
            << " count=" << tombstones.size() << " rv=" << resource_version;
  }
  for (Delta& delta : tombstones) PushLocked(std::move(delta));
  if (!populated_) {
    populated_ = true;
    initial_unpopped_ = items_.size();
    initial_unprocessed_ = items_.size();
  }
  WakeLocked();
  return absl::OkStatus();
}

absl::Status RealFifo::Resync() {
  if (known_objects_ == nullptr) return absl::OkStatus();
  MutexLock lock(&mu_);
  if (closed_) return absl::OkStatus();
  // A key with a delta waiting or being processed is skipped, as client-go
  // does: the indexer may not have that delta yet, and a kSync carrying
  // the indexer's older state queued after it would roll the key back.
  absl::flat_hash_set<std::string> pending;
  if (in_flight_ != nullptr) {
    for (const Delta& delta : in_flight_->deltas) {
      pending.insert(delta.object->Key());
    }
  }
  for (const Delta& delta : items_) pending.insert(delta.object->Key());
  std::vector<Delta> syncs;
  for (const std::string& key : known_objects_->ListKeys()) {
    if (pending.contains(key)) continue;
    api::ObjectPtr object = known_objects_->GetByKey(key);
    if (object == nullptr) continue;
    syncs.push_back(Delta{DeltaType::kSync, false, std::move(object)});
  }
  pending.clear();
  for (Delta& delta : syncs) PushLocked(std::move(delta));
  WakeLocked();
  return absl::OkStatus();
}

std::vector<api::ObjectPtr> RealFifo::List() const {
  MutexLock lock(&mu_);
  std::vector<std::string> keys;  // reserved: `newest` points into it
  keys.reserve(items_.size());
  absl::flat_hash_map<std::string_view, const Delta*> newest;
  std::vector<std::string_view> order;
  for (const Delta& delta : items_) {
    keys.push_back(delta.object->Key());
    auto [it, inserted] = newest.try_emplace(keys.back(), &delta);
    if (inserted) {
      order.push_back(keys.back());
    } else {
      it->second = &delta;
    }
  }
  std::vector<api::ObjectPtr> out;
  for (std::string_view key : order) {
    const Delta& delta = *newest[key];
    if (delta.type != DeltaType::kDeleted) out.push_back(delta.object);
  }
  return out;
}

std::vector<std::string> RealFifo::ListKeys() const {
  std::vector<std::string> keys;
  for (const api::ObjectPtr& object : List()) {
    absl::StatusOr<std::string> key = MetaNamespaceKey(*object);
    if (key.ok()) keys.push_back(*std::move(key));
  }
  return keys;
}

api::ObjectPtr RealFifo::GetByKey(std::string_view key) const {
  MutexLock lock(&mu_);
  for (auto it = items_.rbegin(); it != items_.rend(); ++it) {
    if (!MetaNamespaceKeyIs(*it->object, key)) continue;
    return it->type == DeltaType::kDeleted ? nullptr : it->object;
  }
  return nullptr;
}

absl::Status RealFifo::Pop(const Context& ctx, size_t max_batch,
                           const PopProcessFunc& process) {
  CHECK_GE(max_batch, 1u);
  std::shared_ptr<const Batch> batch;
  bool initial = false;
  {
    MutexLock lock(&mu_);
    CHECK(!popping_) << "RealFifo::Pop called from two threads at once";
    absl::Status waited =
        cv_.Await(&mu_, ctx, absl::Condition(this, &RealFifo::ReadyLocked));
    if (!waited.ok()) return waited;
    if (items_.empty()) return absl::CancelledError("RealFifo closed");
    size_t n = std::min(max_batch, items_.size());
    // A batch is wholly in the initial list or wholly after it.
    if (initial_unpopped_ > 0) {
      n = std::min(n, initial_unpopped_);
      initial_unpopped_ -= n;
      initial = true;
    }
    auto taken = std::make_shared<Batch>();
    taken->deltas.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      taken->deltas.push_back(std::move(items_.front()));
      items_.pop_front();
    }
    batch = std::move(taken);
    in_flight_ = batch;
    popping_ = true;
  }

  absl::Status processed = process(batch->deltas, initial);
  if (!processed.ok()) {
    LOG(ERROR) << "processing popped deltas failed fifo=" << name_
               << " count=" << batch->deltas.size() << " error=" << processed;
  }

  MutexLock lock(&mu_);
  in_flight_ = nullptr;
  popping_ = false;
  if (initial) initial_unprocessed_ -= batch->deltas.size();
  return absl::OkStatus();
}

bool RealFifo::ReadyLocked() const { return closed_ || !items_.empty(); }

bool RealFifo::HasSynced() const {
  MutexLock lock(&mu_);
  return populated_ && initial_unprocessed_ == 0;
}

void RealFifo::Close() {
  MutexLock lock(&mu_);
  closed_ = true;
  cv_.SignalAll();
}

size_t RealFifo::Len() const {
  MutexLock lock(&mu_);
  return items_.size();
}

}  // namespace kcr::cache
