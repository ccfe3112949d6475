// A Storage, ResourceRegistry and Registry on a fake clock, for the
// built-in controllers' tests.
#ifndef KCR_TEST_APISERVER_CONTROLLER_TEST_UTIL_H_
#define KCR_TEST_APISERVER_CONTROLLER_TEST_UTIL_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "api/object.h"
#include "api/object_builder.h"
#include "apiserver/registry/registry.h"
#include "apiserver/registry/resources.h"
#include "apiserver/storage/storage.h"
#include "gtest/gtest.h"
#include "test/fakes/fake_clock.h"

namespace kcr {
namespace apiserver {

class ControllerTest : public ::testing::Test {
 protected:
  ControllerTest() : registry_(&storage_, &resources_, Options(&clock_)) {
    EXPECT_TRUE(registry_.Bootstrap().ok());
  }

  static RegistryOptions Options(const Clock* clock) {
    RegistryOptions o;
    o.clock = clock;
    return o;
  }

  const ResourceInfo& Resource(std::string_view group, std::string_view version,
                               std::string_view resource) {
    ResourceInfoPtr info = resources_.Lookup(group, version, resource);
    EXPECT_NE(info, nullptr) << resource;
    held_.push_back(info);
    return *info;
  }
  const ResourceInfo& ConfigMaps() { return Resource("", "v1", "configmaps"); }
  const ResourceInfo& Pods() { return Resource("", "v1", "pods"); }
  const ResourceInfo& Namespaces() { return Resource("", "v1", "namespaces"); }
  const ResourceInfo& Deployments() {
    return Resource("apps", "v1", "deployments");
  }

  // Creates an object from JSON; fails the test on error.
  api::ObjectPtr Create(const ResourceInfo& r, std::string_view ns,
                        const std::string& json) {
    absl::StatusOr<api::ObjectBuilder> b = api::ObjectBuilder::FromJson(json);
    EXPECT_TRUE(b.ok()) << b.status();
    if (!b.ok()) return nullptr;
    absl::StatusOr<WriteResult> w = registry_.Create(r, ns, std::move(*b));
    EXPECT_TRUE(w.ok()) << w.status();
    return w.ok() ? w->object : nullptr;
  }

  // The stored object, or null.
  api::ObjectPtr Get(const ResourceInfo& r, std::string_view ns,
                     std::string_view name) {
    return storage_.Get(r.StorageKey(), r.namespaced() ? ns : "", name);
  }

  testing::FakeClock clock_;
  Storage storage_;
  ResourceRegistry resources_;
  Registry registry_;
  std::vector<ResourceInfoPtr> held_;
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_TEST_APISERVER_CONTROLLER_TEST_UTIL_H_
