// RegistryListWatch: a cache::ListerWatcher served by an in-process
// apiserver::Registry and its Storage, without HTTP, with kube-apiserver's
// list and watch semantics as apiserver/ implements them for its clients:
// limit/continue/resourceVersion on lists (410 Expired for a compacted
// version or continue token), watches from a resourceVersion (an ERROR
// event with 410 when Storage::Compact dropped it), initial events for a
// watch at ""/"0" or with sendInitialEvents (ended by the
// k8s.io/initial-events-end bookmark), periodic bookmarks when asked for,
// and timeoutSeconds, all on an injected clock.
//
// For tests of code that lists and watches against a realistic server (a
// Reflector over a Registry that a test writes to and compacts).
#ifndef KCR_TEST_FAKES_REGISTRY_LIST_WATCH_H_
#define KCR_TEST_FAKES_REGISTRY_LIST_WATCH_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "apiserver/registry/registry.h"
#include "apiserver/registry/resources.h"
#include "base/clock.h"
#include "base/context.h"
#include "runtime/cache/list_watch.h"
#include "runtime/client/options.h"
#include "runtime/client/watch.h"

namespace kcr::testing {

struct RegistryListWatchOptions {
  // The namespace listed and watched ("" for all).
  std::string ns;
  // Bookmarks go out this often on watches that allow them (kube-apiserver
  // sends one about every minute).
  absl::Duration bookmark_interval = absl::Minutes(1);
  // A watch without timeoutSeconds ends after this long.
  absl::Duration default_watch_timeout = absl::Minutes(30);
  // Times watches (timeouts, bookmarks); null: the real clock.
  const Clock* clock = nullptr;
};

// Thread-safe. `registry` is not owned and must outlive it and every watch
// it opened.
class RegistryListWatch final : public cache::ListerWatcher {
 public:
  RegistryListWatch(apiserver::Registry* registry,
                    apiserver::ResourceInfoPtr resource,
                    RegistryListWatchOptions options = {});

  absl::StatusOr<client::ListMeta> List(
      const Context& ctx, const client::ListOptions& options,
      const cache::ListItemFunc& on_item) override;
  absl::StatusOr<std::unique_ptr<client::WatchStream>> Watch(
      const Context& ctx, const client::ListOptions& options) override;

 private:
  // The registry's options for `options`' selectors and versions.
  absl::StatusOr<apiserver::ListOptions> Convert(
      const client::ListOptions& options) const;

  apiserver::Registry* const registry_;
  const apiserver::ResourceInfoPtr resource_;
  const RegistryListWatchOptions options_;
  const Clock* const clock_;
};

}  // namespace kcr::testing

#endif  // KCR_TEST_FAKES_REGISTRY_LIST_WATCH_H_
