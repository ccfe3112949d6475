#include "runtime/sharding/metrics.h"

#include "base/global_provider.h"

namespace kcr::sharding {
namespace {
GlobalProvider<MetricsProvider> global_provider;
}  // namespace

bool SetGlobalMetricsProvider(MetricsProvider* provider) {
  return global_provider.Set(provider);
}

MetricsProvider* GlobalMetricsProvider() { return global_provider.Get(); }

MetricsProvider* ResolveMetricsProvider(MetricsProvider* own,
                                        std::string_view controller) {
  return global_provider.Resolve(own, controller);
}

}  // namespace kcr::sharding
