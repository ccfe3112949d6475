#include "runtime/client/metrics.h"

#include "base/global_provider.h"

namespace kcr::client {
namespace {
GlobalProvider<MetricsProvider> global_provider;
}  // namespace

bool SetGlobalMetricsProvider(MetricsProvider* provider) {
  return global_provider.Set(provider);
}

MetricsProvider* GlobalMetricsProvider() { return global_provider.Get(); }

}  // namespace kcr::client
