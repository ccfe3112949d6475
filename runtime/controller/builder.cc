#include "runtime/controller/builder.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "glog/logging.h"

namespace kcr::controller {
namespace {

std::string Describe(const client::Resource& r) {
  return r.gvr.group.empty() ? r.gvr.resource
                             : absl::StrCat(r.gvr.resource, ".", r.gvr.group);
}

}  // namespace

ControllerBuilder& ControllerBuilder::For(const client::Resource& resource,
                                          std::vector<Predicate> predicates) {
  for (const WatchSpec& w : watches_) {
    if (w.is_for) {
      errors_.push_back(absl::StrCat("For() can only be called once (",
                                     Describe(w.resource), ", then ",
                                     Describe(resource), ")"));
      return *this;
    }
  }
  WatchSpec spec;
  spec.resource = resource;
  spec.handler = EnqueueRequestForObject();
  spec.predicates = std::move(predicates);
  spec.is_for = true;
  watches_.push_back(std::move(spec));
  return *this;
}

ControllerBuilder& ControllerBuilder::Owns(const client::Resource& resource,
                                           std::vector<Predicate> predicates) {
  WatchSpec spec;
  spec.resource = resource;
  spec.predicates = std::move(predicates);
  spec.owns = true;
  watches_.push_back(std::move(spec));
  return *this;
}

ControllerBuilder& ControllerBuilder::Watches(
    const client::Resource& resource, std::shared_ptr<EventHandler> handler,
    std::vector<Predicate> predicates) {
  if (handler == nullptr) {
    errors_.push_back(
        absl::StrCat("Watches(", Describe(resource), ") without a handler"));
    return *this;
  }
  WatchSpec spec;
  spec.resource = resource;
  spec.handler = std::move(handler);
  spec.predicates = std::move(predicates);
  watches_.push_back(std::move(spec));
  return *this;
}

ControllerBuilder& ControllerBuilder::Watches(
    const client::Resource& resource, MapFunc map,
    std::vector<Predicate> predicates) {
  if (!map) {
    errors_.push_back(absl::StrCat("Watches(", Describe(resource),
                                   ") without a map function"));
    return *this;
  }
  return Watches(resource, EnqueueRequestsFromMapFunc(std::move(map)),
                 std::move(predicates));
}

ControllerBuilder& ControllerBuilder::WithListWatchOptions(
    cache::ListWatchOptions options) {
  if (watches_.empty()) {
    errors_.push_back("WithListWatchOptions() before any For/Owns/Watches");
    return *this;
  }
  watches_.back().list_watch = std::move(options);
  return *this;
}

ControllerBuilder& ControllerBuilder::WithEventFilter(Predicate predicate) {
  global_predicates_.push_back(std::move(predicate));
  return *this;
}

ControllerBuilder& ControllerBuilder::Named(std::string name) {
  name_ = std::move(name);
  return *this;
}

ControllerBuilder& ControllerBuilder::Sharded(
    sharding::ShardOwnership* ownership) {
  ownership_ = ownership;
  return *this;
}

ControllerBuilder& ControllerBuilder::Unsharded() {
  ownership_ = nullptr;
  return *this;
}

ControllerBuilder& ControllerBuilder::WithOptions(ControllerOptions options) {
  options_ = std::move(options);
  options_given_ = true;
  return *this;
}

absl::Status ControllerBuilder::Complete(
    std::shared_ptr<Reconciler> reconciler) {
  return Build(std::move(reconciler)).status();
}

absl::StatusOr<Controller*> ControllerBuilder::Build(
    std::shared_ptr<Reconciler> reconciler) {
  if (built_) {
    return absl::FailedPreconditionError(
        "controller builder: Complete (or Build) was already called");
  }
  built_ = true;
  if (!errors_.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("controller builder: ", absl::StrJoin(errors_, "; ")));
  }
  auto for_it = std::find_if(watches_.begin(), watches_.end(),
                             [](const WatchSpec& w) { return w.is_for; });
  if (for_it == watches_.end()) {
    return absl::InvalidArgumentError(
        "controller builder: must provide a resource to reconcile with For()");
  }
  const client::Resource for_resource = for_it->resource;
  auto kind = manager_.GetRESTMapper()->KindFor(for_resource.gvr);

  std::string name = name_;
  if (name.empty()) {
    name = kind.ok() ? absl::AsciiStrToLower(kind->kind)
                     : for_resource.gvr.resource;
  }
  if (absl::Status s = ValidateControllerName(name); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("controller builder: ", s.message()));
  }
  if (manager_.HasController(name)) {
    return absl::AlreadyExistsError(absl::StrCat(
        "controller builder: a controller named \"", name,
        "\" already exists; controller names must be unique (use Named)"));
  }
  const bool owns = std::any_of(watches_.begin(), watches_.end(),
                                [](const WatchSpec& w) { return w.owns; });
  if (owns && !kind.ok()) {
    return absl::NotFoundError(absl::StrCat(
        "controller ", name, ": Owns needs the kind of ",
        Describe(for_resource),
        ", which the manager's RESTMapper does not know; add its mapping "
        "(e.g. from its CRD) first"));
  }

  ControllerOptions options = std::move(options_);
  options.name = name;
  if (!options_given_) {
    options.shutdown_timeout = manager_.options().graceful_shutdown_timeout;
    options.cache_sync_timeout = manager_.options().cache_sync_timeout;
  }
  if (options.clock == nullptr) options.clock = manager_.clock();
  if (options.metrics == nullptr) {
    options.metrics = manager_.controller_metrics();
  }
  if (options.workqueue_metrics == nullptr) {
    options.workqueue_metrics = manager_.workqueue_metrics();
  }
  if (!options.on_reconciled && manager_.options().on_reconciled) {
    options.on_reconciled = [observe = manager_.options().on_reconciled, name](
                                const Request& r, absl::Time start,
                                absl::Time end) {
      observe(name, r, start, end);
    };
  }
  sharding::ShardOwnership* ownership = nullptr;
  if (ownership_.has_value()) {
    ownership = *ownership_;
  } else {
    KCR_ASSIGN_OR_RETURN(ownership, manager_.ShardOwnershipFor(name));
  }
  std::shared_ptr<ShardFilter> filter;
  if (ownership != nullptr) {
    std::vector<const WatchSpec*> owned;
    for (const WatchSpec& w : watches_) {
      if (w.owns) owned.push_back(&w);
    }
    KCR_ASSIGN_OR_RETURN(filter,
                         NewShardFilter(name, *for_it, owned, ownership));
    // Each replica reconciles its own shards: no leader to wait for.
    options.need_leader_election = false;
    options.shard_filter = filter;
  }
  KCR_ASSIGN_OR_RETURN(
      std::unique_ptr<Controller> controller,
      Controller::New(std::move(options), std::move(reconciler)));

  for (WatchSpec& w : watches_) {
    std::shared_ptr<EventHandler> handler = w.handler;
    if (w.owns) {
      handler = EnqueueRequestForOwner(OwnerType{kind->group, kind->kind,
                                                 for_resource.namespaced,
                                                 /*only_controller=*/true});
    }
    if (filter != nullptr) {
      handler = ShardedEventHandler(std::move(handler), filter,
                                    w.is_for ? ShardedWatch::kFor
                                    : w.owns ? ShardedWatch::kOwned
                                             : ShardedWatch::kOther);
    }
    std::vector<Predicate> predicates = global_predicates_;
    predicates.insert(predicates.end(), w.predicates.begin(),
                      w.predicates.end());
    cache::SharedIndexInformer* informer =
        manager_.GetInformerFactory()->InformerFor(w.resource, w.list_watch);
    KCR_RETURN_IF_ERROR(
        controller->Watch(informer, std::move(handler), std::move(predicates)));
  }
  Controller* result = controller.get();
  KCR_RETURN_IF_ERROR(manager_.AddController(std::move(controller)));
  if (filter != nullptr) ownership->AddListener(filter.get());
  return result;
}

absl::StatusOr<std::shared_ptr<ShardFilter>> ControllerBuilder::NewShardFilter(
    const std::string& name, const WatchSpec& for_watch,
    const std::vector<const WatchSpec*>& owned,
    sharding::ShardOwnership* ownership) {
  if (ownership->shards() < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("controller ", name,
                     ": a sharded controller needs at "
                     "least one shard, not ",
                     ownership->shards()));
  }
  cache::SharedInformerFactory* factory = manager_.GetInformerFactory();
  cache::SharedIndexInformer* informer =
      factory->InformerFor(for_watch.resource, for_watch.list_watch);
  const sharding::ShardBy by = ownership->shard_by();
  const int shards = ownership->shards();
  const std::string selector = ShardSelectorFor(by, ownership->Held(), shards);
  // The informers that list only the held shards: the For resource's, and
  // with namespace sharding the owned namespaced kinds' (an owned object
  // is in its owner's namespace, hence in its shard). With uid sharding
  // the server cannot select an owned object by its owner's uid: owned
  // kinds are filtered on the client. A ListerWatcher that cannot be told
  // leaves the filtering to the client too.
  std::vector<cache::SharedIndexInformer*> narrowed;
  auto narrow = [&](cache::SharedIndexInformer* i) {
    if (std::find(narrowed.begin(), narrowed.end(), i) != narrowed.end()) {
      return;
    }
    if (i->SetShardSelector(selector).ok()) {
      narrowed.push_back(i);
    } else {
      LOG(WARNING) << "controller " << name << ": informer " << i->name()
                   << " cannot list by shard; filtering on the client only";
    }
  };
  narrow(informer);
  if (by == sharding::ShardBy::kNamespace) {
    for (const WatchSpec* w : owned) {
      if (w->resource.namespaced) {
        narrow(factory->InformerFor(w->resource, w->list_watch));
      }
    }
  }
  ShardFilterOptions o;
  o.controller = name;
  o.ownership = ownership;
  o.for_cache = informer->GetIndexer();
  o.clock = manager_.clock();
  if (!narrowed.empty()) {
    o.on_held_changed = [narrowed, by, shards](const std::vector<int>& held) {
      const std::string selector = ShardSelectorFor(by, held, shards);
      for (cache::SharedIndexInformer* i : narrowed) {
        absl::Status s = i->SetShardSelector(selector);
        if (!s.ok()) LOG(WARNING) << s;
      }
    };
  }
  auto filter = std::make_shared<ShardFilter>(std::move(o));
  KCR_RETURN_IF_ERROR(manager_.AddReadyzCheck(
      absl::StrCat("shards-", name),
      [ownership, informer, narrowed]() -> absl::Status {
        if (!ownership->Settled()) {
          return absl::UnavailableError("has not taken its share of shards");
        }
        if (!informer->HasSynced()) {
          return absl::UnavailableError(
              "has not listed the objects of its shards");
        }
        for (cache::SharedIndexInformer* i : narrowed) {
          if (!i->HasSynced() || !i->ShardSelectorListed()) {
            return absl::UnavailableError(
                "has not listed the objects of its shards");
          }
        }
        return absl::OkStatus();
      }));
  return filter;
}

}  // namespace kcr::controller
