#include "runtime/client/metrics.h"

#include <atomic>

namespace kcr::client {
namespace {
std::atomic<MetricsProvider*> global_provider{nullptr};
}  // namespace

bool SetGlobalMetricsProvider(MetricsProvider* provider) {
  MetricsProvider* expected = nullptr;
  return global_provider.compare_exchange_strong(expected, provider);
}

MetricsProvider* GlobalMetricsProvider() { return global_provider.load(); }

}  // namespace kcr::client
