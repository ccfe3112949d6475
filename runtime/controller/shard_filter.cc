#include "runtime/controller/shard_filter.h"

#include <algorithm>
#include <utility>

#include "absl/types/span.h"
#include "glog/logging.h"

namespace kcr::controller {
namespace {

// The shards the keys of one event belong to, as the event's objects name
// them; a key not named is looked up by the filter.
using Hints = absl::flat_hash_map<Request, int>;

// The controller's queue as one event's handler sees it: an add of a key
// the filter does not admit is dropped. FilteringPriorityQueue is the same
// for a priority queue, which stays one so that handlers keep their
// priorities.
class FilteringQueue final : public RequestQueue {
 public:
  FilteringQueue(RequestQueue& queue, ShardFilter& filter, const Hints& hints)
      : queue_(queue), filter_(filter), hints_(hints) {}

  void Add(const Request& item) override {
    if (Admit(item)) queue_.Add(item);
  }
  void Add(Request&& item) override {
    if (Admit(item)) queue_.Add(std::move(item));
  }
  void AddAfter(const Request& item, absl::Duration delay) override {
    if (Admit(item)) queue_.AddAfter(item, delay);
  }
  void AddRateLimited(const Request& item) override {
    if (Admit(item)) queue_.AddRateLimited(item);
  }
  std::optional<Request> Get() override { return queue_.Get(); }
  void Done(const Request& item) override { queue_.Done(item); }
  size_t Len() const override { return queue_.Len(); }
  void ShutDown() override { queue_.ShutDown(); }
  void ShutDownWithDrain() override { queue_.ShutDownWithDrain(); }
  bool ShuttingDown() const override { return queue_.ShuttingDown(); }
  void Forget(const Request& item) override { queue_.Forget(item); }
  int NumRequeues(const Request& item) override {
    return queue_.NumRequeues(item);
  }

 private:
  bool Admit(const Request& item) {
    auto it = hints_.find(item);
    return filter_.Admit(item, it == hints_.end()
                                   ? std::nullopt
                                   : std::optional<int>(it->second));
  }

  RequestQueue& queue_;
  ShardFilter& filter_;
  const Hints& hints_;
};

class FilteringPriorityQueue final : public PriorityRequestQueue {
 public:
  FilteringPriorityQueue(PriorityRequestQueue& queue, ShardFilter& filter,
                         const Hints& hints)
      : queue_(queue), filter_(filter), hints_(hints) {}

  using PriorityRequestQueue::AddWithOpts;

  void AddWithOpts(const workqueue::AddOpts& opts,
                   absl::Span<const Request> items) override {
    std::vector<Request> admitted;
    admitted.reserve(items.size());
    for (const Request& r : items) {
      if (Admit(r)) admitted.push_back(r);
    }
    if (!admitted.empty()) queue_.AddWithOpts(opts, admitted);
  }
  void Add(const Request& item) override {
    if (Admit(item)) queue_.Add(item);
  }
  void Add(Request&& item) override {
    if (Admit(item)) queue_.Add(std::move(item));
  }
  void AddAfter(const Request& item, absl::Duration delay) override {
    if (Admit(item)) queue_.AddAfter(item, delay);
  }
  void AddRateLimited(const Request& item) override {
    if (Admit(item)) queue_.AddRateLimited(item);
  }
  std::optional<workqueue::PrioritizedItem<Request>> GetWithPriority()
      override {
    return queue_.GetWithPriority();
  }
  std::optional<Request> Get() override { return queue_.Get(); }
  void Done(const Request& item) override { queue_.Done(item); }
  size_t Len() const override { return queue_.Len(); }
  void ShutDown() override { queue_.ShutDown(); }
  void ShutDownWithDrain() override { queue_.ShutDownWithDrain(); }
  bool ShuttingDown() const override { return queue_.ShuttingDown(); }
  void Forget(const Request& item) override { queue_.Forget(item); }
  int NumRequeues(const Request& item) override {
    return queue_.NumRequeues(item);
  }

 private:
  bool Admit(const Request& item) {
    auto it = hints_.find(item);
    return filter_.Admit(item, it == hints_.end()
                                   ? std::nullopt
                                   : std::optional<int>(it->second));
  }

  PriorityRequestQueue& queue_;
  ShardFilter& filter_;
  const Hints& hints_;
};

class Sharded final : public EventHandler {
 public:
  Sharded(std::shared_ptr<EventHandler> handler,
          std::shared_ptr<ShardFilter> filter, ShardedWatch watch)
      : handler_(std::move(handler)),
        filter_(std::move(filter)),
        watch_(watch) {}

  void Create(const CreateEvent& e, RequestQueue& q) override {
    Call(q, {&e.object}, [&](RequestQueue& fq) { handler_->Create(e, fq); });
  }
  void Update(const UpdateEvent& e, RequestQueue& q) override {
    Call(q, {&e.object_old, &e.object_new},
         [&](RequestQueue& fq) { handler_->Update(e, fq); });
  }
  void Delete(const DeleteEvent& e, RequestQueue& q) override {
    Call(q, {&e.object}, [&](RequestQueue& fq) { handler_->Delete(e, fq); });
  }
  void Generic(const GenericEvent& e, RequestQueue& q) override {
    Call(q, {&e.object}, [&](RequestQueue& fq) { handler_->Generic(e, fq); });
  }

 private:
  template <typename F>
  void Call(RequestQueue& q,
            std::initializer_list<const api::ObjectPtr*> objects, F&& call) {
    Hints hints;
    for (const api::ObjectPtr* object : objects) {
      if (*object == nullptr) continue;
      if (watch_ == ShardedWatch::kFor) {
        hints[Request::For(**object)] = filter_->ShardOfObject(**object);
      } else if (watch_ == ShardedWatch::kOwned) {
        filter_->OwnerShards(**object, &hints);
      }
    }
    if (auto* pq = dynamic_cast<PriorityRequestQueue*>(&q)) {
      FilteringPriorityQueue fq(*pq, *filter_, hints);
      call(fq);
    } else {
      FilteringQueue fq(q, *filter_, hints);
      call(fq);
    }
  }

  const std::shared_ptr<EventHandler> handler_;
  const std::shared_ptr<ShardFilter> filter_;
  const ShardedWatch watch_;
};

}  // namespace

ShardFilter::ShardFilter(ShardFilterOptions options)
    : controller_(std::move(options.controller)),
      ownership_(options.ownership),
      shards_(ownership_->shards()),
      shard_by_(ownership_->shard_by()),
      for_cache_(options.for_cache),
      on_held_changed_(std::move(options.on_held_changed)),
      clock_(options.clock != nullptr ? options.clock : Clock::Real()) {
  MutexLock lock(&mu_);
  for (int shard : ownership_->Held()) held_.insert(shard);
}

void ShardFilter::SetQueue(std::shared_ptr<RequestQueue> queue) {
  MutexLock lock(&mu_);
  queue_ = std::move(queue);
}

int ShardFilter::ShardOfObject(const api::Object& object) const {
  return sharding::ShardOf(shard_by_, object.uid(), object.namespace_(),
                           shards_);
}

void ShardFilter::OwnerShards(const api::Object& object,
                              absl::flat_hash_map<Request, int>* shards) const {
  for (const api::OwnerReferenceView& ref : object.owner_references()) {
    if (ref.name.empty()) continue;
    // An owner lives in its dependent's namespace, or in none when it is
    // cluster-scoped: both keys carry the owner's shard.
    const int shard =
        sharding::ShardOf(shard_by_, ref.uid, object.namespace_(), shards_);
    shards->emplace(
        Request{std::string(object.namespace_()), std::string(ref.name)},
        shard);
    shards->emplace(Request{std::string(), std::string(ref.name)}, shard);
  }
}

std::optional<int> ShardFilter::LookUp(const Request& request) const {
  if (shard_by_ == sharding::ShardBy::kNamespace) {
    return sharding::ShardOf(shard_by_, "", request.namespace_, shards_);
  }
  if (for_cache_ != nullptr) {
    if (api::ObjectPtr object = for_cache_->GetByKey(request.ToString())) {
      return ShardOfObject(*object);
    }
  }
  MutexLock lock(&mu_);
  auto it = remembered_.find(request);
  if (it == remembered_.end()) return std::nullopt;
  return it->second;
}

bool ShardFilter::Admit(const Request& request, std::optional<int> hint) {
  std::optional<int> shard = hint.has_value() ? hint : LookUp(request);
  if (!shard.has_value()) {
    filtered_.fetch_add(1);
    VLOG(4) << "shard unknown, not enqueued controller=" << controller_
            << " key=" << request.ToString();
    return false;
  }
  const bool cached = for_cache_ != nullptr &&
                      for_cache_->GetByKey(request.ToString()) != nullptr;
  MutexLock lock(&mu_);
  const bool held = held_.contains(*shard);
  if (held && !cached && shard_by_ == sharding::ShardBy::kUid) {
    remembered_[request] = *shard;
  } else if (!held) {
    // A key that moved to a shard not held (an object deleted and made
    // again under its name has a new uid) is no longer ours.
    remembered_.erase(request);
  }
  if (!held) filtered_.fetch_add(1);
  return held;
}

bool ShardFilter::Begin(const Request& request) {
  std::optional<int> shard = LookUp(request);
  MutexLock lock(&mu_);
  if (!shard.has_value() || !held_.contains(*shard)) {
    dropped_.fetch_add(1);
    VLOG(4) << "shard not held, dropped controller=" << controller_
            << " key=" << request.ToString()
            << " shard=" << (shard.has_value() ? *shard : -1);
    return false;
  }
  in_flight_[request] = *shard;
  ++in_flight_per_shard_[*shard];
  return true;
}

void ShardFilter::End(const Request& request) {
  const bool cached = for_cache_ != nullptr &&
                      for_cache_->GetByKey(request.ToString()) != nullptr;
  MutexLock lock(&mu_);
  auto it = in_flight_.find(request);
  if (it == in_flight_.end()) return;
  const int shard = it->second;
  in_flight_.erase(it);
  if (--in_flight_per_shard_[shard] == 0) {
    in_flight_per_shard_.erase(shard);
    released_cv_.SignalAll();
  }
  // A deleted object's key is not remembered past its reconcile.
  if (!cached) remembered_.erase(request);
}

void ShardFilter::OnAcquired(int shard) {
  std::vector<int> held;
  std::shared_ptr<RequestQueue> queue;
  {
    MutexLock lock(&mu_);
    held_.insert(shard);
    held = HeldLocked();
    queue = queue_;
  }
  VLOG(2) << "shard acquired controller=" << controller_ << " shard=" << shard;
  if (on_held_changed_) on_held_changed_(held);
  if (queue == nullptr || for_cache_ == nullptr) return;
  int enqueued = 0;
  for (const api::ObjectPtr& object : for_cache_->List()) {
    if (ShardOfObject(*object) != shard) continue;
    AddWithPriority(*queue, Request::For(*object), kLowPriority);
    ++enqueued;
  }
  VLOG(2) << "enqueued the cached keys of an acquired shard controller="
          << controller_ << " shard=" << shard << " keys=" << enqueued;
}

void ShardFilter::OnReleasing(int shard, absl::Time deadline) {
  std::vector<int> held;
  {
    MutexLock lock(&mu_);
    held_.erase(shard);
    while (in_flight_per_shard_.contains(shard) && clock_->Now() < deadline) {
      clock_->WaitUntil(&mu_, &released_cv_, deadline);
    }
    if (in_flight_per_shard_.contains(shard)) {
      LOG(WARNING) << "shard released with reconciles in flight controller="
                   << controller_ << " shard=" << shard
                   << " in_flight=" << in_flight_per_shard_[shard];
    }
    for (auto it = remembered_.begin(); it != remembered_.end();) {
      if (it->second == shard) {
        remembered_.erase(it++);
      } else {
        ++it;
      }
    }
    held = HeldLocked();
  }
  VLOG(2) << "shard released controller=" << controller_ << " shard=" << shard;
  if (on_held_changed_) on_held_changed_(held);
}

std::vector<int> ShardFilter::Held() const {
  MutexLock lock(&mu_);
  return HeldLocked();
}

std::vector<int> ShardFilter::HeldLocked() const {
  std::vector<int> held(held_.begin(), held_.end());
  std::sort(held.begin(), held.end());
  return held;
}

std::string ShardSelectorFor(sharding::ShardBy by, const std::vector<int>& held,
                             int shards) {
  if (static_cast<int>(held.size()) >= shards) return "";
  const api::ShardField field = by == sharding::ShardBy::kNamespace
                                    ? api::ShardField::kNamespace
                                    : api::ShardField::kUid;
  if (held.empty()) {
    api::ShardRange nothing;
    nothing.start = 0;
    nothing.end = 1;
    return api::ShardSelector::ForRanges(field, {nothing}).ToString();
  }
  return sharding::SelectorFor(by, held, shards).ToString();
}

std::shared_ptr<EventHandler> ShardedEventHandler(
    std::shared_ptr<EventHandler> handler, std::shared_ptr<ShardFilter> filter,
    ShardedWatch watch) {
  return std::make_shared<Sharded>(std::move(handler), std::move(filter),
                                   watch);
}

}  // namespace kcr::controller
