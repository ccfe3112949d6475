// GlobalProvider<T>: a process-wide provider that can be set once, for the
// metrics hooks of the REST client and the work queue (client-go's
// metrics.Register and workqueue.SetProvider, which sync.Once guards).
#ifndef KCR_BASE_GLOBAL_PROVIDER_H_
#define KCR_BASE_GLOBAL_PROVIDER_H_

#include <atomic>
#include <string_view>

namespace kcr {

// Thread-safe, and constant-initialized: usable as a namespace-scope
// static from any static initializer. Does not own the provider.
template <typename T>
class GlobalProvider {
 public:
  constexpr GlobalProvider() = default;
  GlobalProvider(const GlobalProvider&) = delete;
  GlobalProvider& operator=(const GlobalProvider&) = delete;

  // Sets the provider unless one is set; returns whether this call set it.
  bool Set(T* provider) {
    T* expected = nullptr;
    return provider_.compare_exchange_strong(expected, provider);
  }

  // The provider, or null when none is set.
  T* Get() const { return provider_.load(); }

  // What a component named `name` records into: `own` when given, else
  // this provider; null (nothing recorded) for an unnamed component.
  T* Resolve(T* own, std::string_view name) const {
    if (name.empty()) return nullptr;
    return own != nullptr ? own : Get();
  }

 private:
  std::atomic<T*> provider_{nullptr};
};

}  // namespace kcr

#endif  // KCR_BASE_GLOBAL_PROVIDER_H_
