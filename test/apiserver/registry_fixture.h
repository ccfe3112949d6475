// RegistryFixture: the server's Registry over its own Storage and
// resources, on a fake clock, with the patch algorithms the server uses —
// kube-apiserver's REST semantics without HTTP, for tests of strategies
// and the store.
#ifndef KCR_TEST_APISERVER_REGISTRY_FIXTURE_H_
#define KCR_TEST_APISERVER_REGISTRY_FIXTURE_H_

#include <string>
#include <utility>

#include "api/object_builder.h"
#include "apiserver/endpoints/patch_handlers.h"
#include "apiserver/registry/registry.h"
#include "apiserver/registry/resources.h"
#include "apiserver/storage/storage.h"
#include "gtest/gtest.h"
#include "test/fakes/fake_clock.h"

namespace kcr::apiserver {

class RegistryFixture : public ::testing::Test {
 protected:
  RegistryFixture() : registry_(&storage_, &resources_, Options(&clock_)) {}

  static RegistryOptions Options(const Clock* clock) {
    RegistryOptions options;
    options.clock = clock;
    options.patch_handlers = DefaultPatchHandlers(clock);
    return options;
  }

  void SetUp() override { ASSERT_TRUE(registry_.Bootstrap().ok()); }

  // The served resource, which must exist.
  ResourceInfoPtr Resource(const std::string& group, const std::string& version,
                           const std::string& plural) {
    ResourceInfoPtr r = resources_.Lookup(group, version, plural);
    EXPECT_NE(r, nullptr) << group << "/" << version << "/" << plural;
    return r;
  }

  static api::ObjectBuilder FromJson(const std::string& json) {
    absl::StatusOr<api::ObjectBuilder> b = api::ObjectBuilder::FromJson(json);
    EXPECT_TRUE(b.ok()) << b.status();
    return std::move(*b);
  }

  testing::FakeClock clock_;
  Storage storage_;
  ResourceRegistry resources_;
  Registry registry_;
};

}  // namespace kcr::apiserver

#endif  // KCR_TEST_APISERVER_REGISTRY_FIXTURE_H_
