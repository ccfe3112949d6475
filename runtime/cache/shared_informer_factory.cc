#include "runtime/cache/shared_informer_factory.h"

#include <utility>

#include "glog/logging.h"

namespace kcr::cache {

SharedInformerFactory::SharedInformerFactory(
    client::RestClient* client, SharedInformerFactoryOptions options)
    : client_(client), options_(std::move(options)) {}

SharedInformerFactory::~SharedInformerFactory() { Shutdown(); }

SharedIndexInformer* SharedInformerFactory::InformerFor(
    const client::Resource& requested, const ListWatchOptions& options) {
  client::Resource resource = requested;
  if (resource.namespaced && resource.namespace_.empty()) {
    resource.namespace_ = options_.namespace_;
  }
  if (!resource.namespaced) resource.namespace_.clear();
  Key key{resource.gvr.group,   resource.gvr.version,   resource.gvr.resource,
          resource.namespace_,  options.label_selector, options.field_selector,
          options.metadata_only};
  MutexLock lock(&mu_);
  Entry& entry = informers_[key];
  if (entry.informer == nullptr) {
    SharedInformerOptions informer_options = options_.informer;
    informer_options.name = resource.gvr.resource;
    if (!resource.gvr.group.empty()) {
      informer_options.name += "." + resource.gvr.group;
    }
    if (!resource.namespace_.empty()) {
      informer_options.name += "/" + resource.namespace_;
    }
    informer_options.resync_period = options_.default_resync;
    informer_options.clock = options_.clock;
    entry.informer = std::make_unique<SharedIndexInformer>(
        NewListWatch(client_, resource, options), std::move(informer_options));
    if (options_.transform.has_value()) {
      absl::Status s = entry.informer->SetTransform(*options_.transform);
      if (!s.ok()) LOG(ERROR) << s;  // a new informer has not started
    }
  }
  return entry.informer.get();
}

void SharedInformerFactory::Start(const Context& ctx) {
  MutexLock lock(&mu_);
  if (shut_down_) return;
  for (auto& [key, entry] : informers_) {
    if (entry.started) continue;
    entry.started = true;
    auto [informer_ctx, cancel] = WithCancel(ctx);
    cancels_.push_back(std::move(cancel));
    SharedIndexInformer* informer = entry.informer.get();
    threads_.emplace_back([informer, informer_ctx = informer_ctx] {
      informer->Run(informer_ctx);
    });
  }
}

absl::Status SharedInformerFactory::WaitForCacheSync(const Context& ctx) const {
  std::vector<const SharedIndexInformer*> started;
  {
    MutexLock lock(&mu_);
    for (const auto& [key, entry] : informers_) {
      if (entry.started) started.push_back(entry.informer.get());
    }
  }
  for (const SharedIndexInformer* informer : started) {
    absl::Status s = informer->WaitForSync(ctx);
    if (!s.ok()) {
      return absl::Status(s.code(),
                          "informer " + informer->name() +
                              " not synced: " + std::string(s.message()));
    }
  }
  return absl::OkStatus();
}

void SharedInformerFactory::Shutdown() {
  std::vector<std::thread> threads;
  std::vector<CancelFunc> cancels;
  {
    MutexLock lock(&mu_);
    shut_down_ = true;
    threads = std::move(threads_);
    cancels = std::move(cancels_);
    threads_.clear();
    cancels_.clear();
  }
  for (CancelFunc& cancel : cancels) cancel();
  for (std::thread& t : threads) t.join();
}

}  // namespace kcr::cache
