// SharedInformerFactory: one SharedIndexInformer per collection, shared by
// everything in the process that asks for it (client-go's
// informers.SharedInformerFactory, keyed by collection rather than Go
// type, so it serves any resource, built-in or custom).
//
//   SharedInformerFactory factory(client.get());
//   SharedIndexInformer* pods = factory.InformerFor(pods_resource);
//   pods->AddEventHandler(handler);
//   factory.Start(ctx);                        // again for later informers
//   KCR_RETURN_IF_ERROR(factory.WaitForCacheSync(ctx));
//   ...
//   factory.Shutdown();                        // stops and joins them all
//
// Thread-safe.
#ifndef KCR_RUNTIME_CACHE_SHARED_INFORMER_FACTORY_H_
#define KCR_RUNTIME_CACHE_SHARED_INFORMER_FACTORY_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "api/transform.h"
#include "base/clock.h"
#include "base/context.h"
#include "base/mutex.h"
#include "runtime/cache/list_watch.h"
#include "runtime/cache/shared_informer.h"
#include "runtime/client/options.h"
#include "runtime/client/rest_client.h"

namespace kcr::cache {

struct SharedInformerFactoryOptions {
  // Only this namespace ("" for all), for namespaced resources whose
  // Resource names none (client-go's WithNamespace).
  std::string namespace_;
  // Every informer's default resync period; zero for none.
  absl::Duration default_resync = absl::ZeroDuration();
  // Applied to every informer the factory makes (client-go's
  // WithTransform); unset keeps the informer's default (strip
  // managedFields).
  std::optional<api::TransformFunc> transform;
  // Null: the real clock.
  const Clock* clock = nullptr;
  // The knobs of every informer (name, clock, resync and transform are the
  // factory's).
  SharedInformerOptions informer;
};

class SharedInformerFactory {
 public:
  // `client` is not owned and must outlive the factory.
  explicit SharedInformerFactory(client::RestClient* client,
                                 SharedInformerFactoryOptions options = {});
  // Shutdown().
  ~SharedInformerFactory();
  SharedInformerFactory(const SharedInformerFactory&) = delete;
  SharedInformerFactory& operator=(const SharedInformerFactory&) = delete;

  // The informer of `resource` (its namespace, or the factory's) with
  // `options` (selectors, metadata only): the same one for every caller
  // that asks for the same collection. Never null; owned by the factory.
  SharedIndexInformer* InformerFor(const client::Resource& resource,
                                   const ListWatchOptions& options = {});

  // Runs every informer not yet running, each on a thread of its own,
  // until `ctx` ends or Shutdown. Call again after asking for more.
  // Ignored after Shutdown.
  void Start(const Context& ctx);

  // Waits until every started informer has synced (OK) or `ctx` ends
  // (ctx.Err(), naming the first informer not synced).
  absl::Status WaitForCacheSync(const Context& ctx) const;

  // Stops every informer and joins its thread. Idempotent.
  void Shutdown();

 private:
  // group, version, resource, namespace, labels, fields, metadata only.
  using Key = std::tuple<std::string, std::string, std::string, std::string,
                         std::string, std::string, bool>;
  struct Entry {
    std::unique_ptr<SharedIndexInformer> informer;
    bool started = false;
  };

  client::RestClient* const client_;
  const SharedInformerFactoryOptions options_;

  mutable Mutex mu_;
  std::map<Key, Entry> informers_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> threads_ ABSL_GUARDED_BY(mu_);
  std::vector<CancelFunc> cancels_ ABSL_GUARDED_BY(mu_);
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace kcr::cache

#endif  // KCR_RUNTIME_CACHE_SHARED_INFORMER_FACTORY_H_
