#include "apiserver/kube_controllers/namespace_controller.h"

#include <string>

#include "api/errors/errors.h"
#include "api/object_builder.h"
#include "gtest/gtest.h"
#include "test/apiserver/controller_test_util.h"

namespace kcr::apiserver {
namespace {

class NamespaceControllerTest : public ControllerTest {
 protected:
  // status.conditions[type] as "status reason: message".
  std::string Condition(const api::Object& ns, const std::string& type) {
    const rapidjson::Value* list = ns.Find("/status/conditions");
    if (list == nullptr || !list->IsArray()) return "";
    for (const auto& c : list->GetArray()) {
      if (type == c["type"].GetString()) {
        return std::string(c["status"].GetString()) + " " +
               c["reason"].GetString() + ": " + c["message"].GetString();
      }
    }
    return "";
  }

  void DeleteNamespace(const std::string& name) {
    ASSERT_TRUE(registry_.Delete(Namespaces(), "", name).ok());
  }

  // The grace period is tested on its own below.
  NamespaceController controller_{&registry_, &clock_, absl::ZeroDuration()};
};

TEST_F(NamespaceControllerTest, LeavesContentAloneForTheGracePeriod) {
  NamespaceController controller(&registry_, &clock_, absl::Seconds(5));
  Create(Namespaces(), "", R"({"metadata":{"name":"team"}})");
  Create(ConfigMaps(), "team", R"({"metadata":{"name":"a"}})");
  Create(ConfigMaps(), "team", R"({"metadata":{"name":"b"}})");
  DeleteNamespace("team");

  const absl::Time seen = clock_.Now();
  EXPECT_EQ(controller.Sync(), seen + absl::Seconds(5));
  EXPECT_NE(Get(ConfigMaps(), "team", "a"), nullptr);
  // A client's own delete of the contents succeeds meanwhile.
  EXPECT_TRUE(registry_.Delete(ConfigMaps(), "team", "b").ok());

  clock_.Advance(absl::Seconds(4));
  EXPECT_EQ(controller.Sync(), seen + absl::Seconds(5));
  EXPECT_NE(Get(ConfigMaps(), "team", "a"), nullptr);

  clock_.Advance(absl::Seconds(1));
  EXPECT_EQ(controller.Sync(), absl::InfiniteFuture());
  EXPECT_EQ(Get(ConfigMaps(), "team", "a"), nullptr);
  EXPECT_EQ(Get(Namespaces(), "", "team"), nullptr);
}

TEST_F(NamespaceControllerTest, DeletesContentThenTheNamespace) {
  Create(Namespaces(), "", R"({"metadata":{"name":"team"}})");
  Create(ConfigMaps(), "team", R"({"metadata":{"name":"a"}})");
  Create(ConfigMaps(), "team", R"({"metadata":{"name":"b"}})");
  Create(Pods(), "team", R"({"metadata":{"name":"p"},
      "spec":{"containers":[{"name":"c","image":"nginx"}]}})");
  Create(ConfigMaps(), "default", R"({"metadata":{"name":"keep"}})");

  controller_.Sync();  // nothing is being deleted
  EXPECT_NE(Get(ConfigMaps(), "team", "a"), nullptr);

  DeleteNamespace("team");
  api::ObjectPtr ns = Get(Namespaces(), "", "team");
  ASSERT_NE(ns, nullptr);
  EXPECT_TRUE(ns->being_deleted());

  EXPECT_EQ(controller_.Sync(), absl::InfiniteFuture());
  EXPECT_EQ(Get(ConfigMaps(), "team", "a"), nullptr);
  EXPECT_EQ(Get(ConfigMaps(), "team", "b"), nullptr);
  EXPECT_EQ(Get(Pods(), "team", "p"), nullptr);
  EXPECT_EQ(Get(Namespaces(), "", "team"), nullptr);
  EXPECT_NE(Get(ConfigMaps(), "default", "keep"), nullptr);
}

TEST_F(NamespaceControllerTest, WaitsForContentFinalizers) {
  Create(Namespaces(), "", R"({"metadata":{"name":"team"}})");
  Create(ConfigMaps(), "team",
         R"({"metadata":{"name":"held","finalizers":["example.com/keep"]}})");
  Create(ConfigMaps(), "team", R"({"metadata":{"name":"free"}})");
  DeleteNamespace("team");
  controller_.Sync();

  api::ObjectPtr ns = Get(Namespaces(), "", "team");
  ASSERT_NE(ns, nullptr);
  EXPECT_EQ(std::string(ns->Find("/status/phase")->GetString()), "Terminating");
  EXPECT_EQ(Condition(*ns, "NamespaceDeletionDiscoveryFailure"),
            "False ResourcesDiscovered: All resources successfully discovered");
  EXPECT_EQ(Condition(*ns, "NamespaceDeletionGroupVersionParsingFailure"),
            "False ParsedGroupVersions: All legacy kube types successfully "
            "parsed");
  EXPECT_EQ(Condition(*ns, "NamespaceDeletionContentFailure"),
            "False ContentDeleted: All content successfully deleted, may be "
            "waiting on finalization");
  EXPECT_EQ(Condition(*ns, "NamespaceContentRemaining"),
            "True SomeResourcesRemain: Some resources are remaining: "
            "configmaps. has 1 resource instances");
  EXPECT_EQ(Condition(*ns, "NamespaceFinalizersRemaining"),
            "True SomeFinalizersRemain: Some content in the namespace has "
            "finalizers remaining: example.com/keep in 1 resource instances");
  ASSERT_NE(ns->Find("/spec/finalizers"), nullptr);
  EXPECT_EQ(Get(ConfigMaps(), "team", "free"), nullptr);
  api::ObjectPtr held = Get(ConfigMaps(), "team", "held");
  ASSERT_NE(held, nullptr);
  EXPECT_TRUE(held->being_deleted());

  // A second pass with nothing new writes nothing.
  const std::string rv(ns->resource_version());
  clock_.Advance(absl::Seconds(30));
  controller_.Sync();
  EXPECT_EQ(Get(Namespaces(), "", "team")->resource_version(), rv);

  // New content cannot be created meanwhile.
  absl::StatusOr<api::ObjectBuilder> cm =
      api::ObjectBuilder::FromJson(R"({"metadata":{"name":"late"}})");
  absl::StatusOr<WriteResult> late =
      registry_.Create(ConfigMaps(), "team", std::move(*cm));
  EXPECT_EQ(api::StatusError::FromStatus(late.status()).code, 403);

  api::ObjectBuilder b = held->ToBuilder();
  b.RemoveFinalizer("example.com/keep");
  ASSERT_TRUE(
      registry_.Update(ConfigMaps(), "team", "held", std::move(b)).ok());
  controller_.Sync();
  EXPECT_EQ(Get(Namespaces(), "", "team"), nullptr);
}

TEST_F(NamespaceControllerTest, NamespaceFinalizersOfOthersKeepIt) {
  Create(Namespaces(), "",
         R"({"metadata":{"name":"team","finalizers":["example.com/ns"]}})");
  DeleteNamespace("team");
  controller_.Sync();
  api::ObjectPtr ns = Get(Namespaces(), "", "team");
  ASSERT_NE(ns, nullptr) << "metadata.finalizers still hold it";
  EXPECT_EQ(ns->Find("/spec/finalizers"), nullptr)
      << "the kubernetes finalizer is done";
  EXPECT_EQ(Condition(*ns, "NamespaceContentRemaining"),
            "False ContentRemoved: All content successfully removed");
}

TEST_F(NamespaceControllerTest, WantsNamespacesAndTerminatingContent) {
  Create(Namespaces(), "", R"({"metadata":{"name":"team"}})");
  api::ObjectPtr held = Create(
      ConfigMaps(), "team",
      R"({"metadata":{"name":"held","finalizers":["example.com/keep"]}})");
  api::ObjectPtr elsewhere =
      Create(ConfigMaps(), "default", R"({"metadata":{"name":"x"}})");
  StoredEvent e;
  e.collection = "/configmaps";
  e.object = held;
  EXPECT_FALSE(controller_.Wants(e));
  DeleteNamespace("team");
  controller_.Sync();
  EXPECT_TRUE(controller_.Wants(e));
  e.object = elsewhere;
  EXPECT_FALSE(controller_.Wants(e));
  e.collection = "/namespaces";
  e.object = Get(Namespaces(), "", "default");
  EXPECT_TRUE(controller_.Wants(e));
}

}  // namespace
}  // namespace kcr::apiserver
