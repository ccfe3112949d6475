// CreateOrUpdate and CreateOrPatch against the local API server over HTTP.
#include <string>

#include "api/errors/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/controller/controllerutil/create_or_update.h"
#include "test/runtime/controller/controllerutil/apiserver_fixture.h"

namespace kcr::controller::controllerutil {
namespace {

using testing::kConfigMaps;
using testing::kDeployments;

api::ObjectPtr Key(std::string api_version, std::string kind,
                   std::string name) {
  api::ObjectBuilder b(api_version, kind);
  b.SetName(name);
  return *b.Build();
}

MutateFunc SetData(std::string value) {
  return [value](api::ObjectBuilder& o) {
    return o.SetString("/data/key", value);
  };
}

// A Deployment the API server accepts (a selector matching the template's
// labels, a container) with `replicas`; what exists is left as it is.
absl::Status SetReplicas(api::ObjectBuilder& o, int replicas) {
  if (o.Find("/spec/selector") == nullptr) {
    absl::Status s =
        o.SetJson("/spec/selector", R"({"matchLabels":{"app":"web"}})");
    if (!s.ok()) return s;
  }
  if (o.Find("/spec/template") == nullptr) {
    absl::Status s = o.SetJson(
        "/spec/template",
        R"({"metadata":{"labels":{"app":"web"}},"spec":{"containers":)"
        R"([{"name":"web","image":"nginx:1.25"}]}})");
    if (!s.ok()) return s;
  }
  return o.SetInt("/spec/replicas", replicas);
}

class CreateOrUpdateTest : public testing::ApiServerTest {
 protected:
  absl::StatusOr<WriteResult> CoU(const MutateFunc& mutate) {
    return CreateOrUpdate(ctx_, client_.get(), kConfigMaps,
                          *Key("v1", "ConfigMap", "settings"), mutate);
  }
  absl::StatusOr<WriteResult> CoP(const MutateFunc& mutate) {
    return CreateOrPatch(ctx_, client_.get(), kDeployments,
                         *Key("apps/v1", "Deployment", "web"), mutate);
  }
};

TEST_F(CreateOrUpdateTest, CreatedUpdatedUnchanged) {
  auto created = CoU(SetData("1"));
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(created->result, OperationResult::kCreated);
  EXPECT_EQ(created->object->namespace_(), "default");
  EXPECT_STREQ(created->object->Find("/data/key")->GetString(), "1");

  auto unchanged = CoU(SetData("1"));
  ASSERT_TRUE(unchanged.ok()) << unchanged.status();
  EXPECT_EQ(unchanged->result, OperationResult::kUnchanged);
  EXPECT_EQ(Get(kConfigMaps, "settings")->resource_version(),
            created->object->resource_version());

  auto updated = CoU(SetData("2"));
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_EQ(updated->result, OperationResult::kUpdated);
  EXPECT_NE(updated->object->resource_version(),
            created->object->resource_version());
  EXPECT_STREQ(Get(kConfigMaps, "settings")->Find("/data/key")->GetString(),
               "2");
  EXPECT_EQ(OperationResultName(updated->result), "updated");
}

TEST_F(CreateOrUpdateTest, MutateMustKeepTheKey) {
  auto renamed = CoU([](api::ObjectBuilder& o) {
    o.SetName("other");
    return absl::OkStatus();
  });
  EXPECT_EQ(renamed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(
      api::IsNotFound(client_->Get(ctx_, kConfigMaps, "other").status()));
}

TEST_F(CreateOrUpdateTest, MutateErrorWritesNothing) {
  auto failed = CoU(
      [](api::ObjectBuilder&) { return absl::InternalError("mutate failed"); });
  EXPECT_EQ(failed.status().message(), "mutate failed");
  EXPECT_TRUE(
      api::IsNotFound(client_->Get(ctx_, kConfigMaps, "settings").status()));
}

TEST_F(CreateOrUpdateTest, CreateOrPatchReportsWhatItWrote) {
  MutateFunc replicas = [](api::ObjectBuilder& o) { return SetReplicas(o, 2); };
  auto created = CoP(replicas);
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(created->result, OperationResult::kCreated);

  auto unchanged = CoP(replicas);
  ASSERT_TRUE(unchanged.ok()) << unchanged.status();
  EXPECT_EQ(unchanged->result, OperationResult::kUnchanged);
  EXPECT_EQ(Get(kDeployments, "web")->resource_version(),
            created->object->resource_version());

  auto spec = CoP([](api::ObjectBuilder& o) { return SetReplicas(o, 3); });
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->result, OperationResult::kUpdated);
  EXPECT_EQ(Get(kDeployments, "web")->Find("/spec/replicas")->GetInt(), 3);

  auto status = CoP([](api::ObjectBuilder& o) {
    return o.SetInt("/status/readyReplicas", 3);
  });
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->result, OperationResult::kUpdatedStatusOnly);
  EXPECT_EQ(Get(kDeployments, "web")->Find("/status/readyReplicas")->GetInt(),
            3);

  auto both = CoP([](api::ObjectBuilder& o) -> absl::Status {
    o.SetLabel("tier", "web");
    return o.SetInt("/status/readyReplicas", 2);
  });
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_EQ(both->result, OperationResult::kUpdatedStatus);
  api::ObjectPtr stored = Get(kDeployments, "web");
  EXPECT_EQ(stored->Label("tier"), "web");
  EXPECT_EQ(stored->Find("/status/readyReplicas")->GetInt(), 2);
  EXPECT_EQ(stored->Find("/spec/replicas")->GetInt(), 3);
  EXPECT_EQ(stored->resource_version(), both->object->resource_version());
}

TEST_F(CreateOrUpdateTest, CreateOrPatchKeepsFieldsOthersWrote) {
  ASSERT_TRUE(
      CoP([](api::ObjectBuilder& o) { return SetReplicas(o, 2); }).ok());
  // Someone else labels the object; our patch touches only replicas.
  api::ObjectPtr current = Get(kDeployments, "web");
  api::ObjectBuilder labelled(*current);
  labelled.SetLabel("owner", "someone");
  ASSERT_TRUE(client_->Update(ctx_, kDeployments, **labelled.Build()).ok());
  auto patched = CoP([](api::ObjectBuilder& o) { return SetReplicas(o, 4); });
  ASSERT_TRUE(patched.ok()) << patched.status();
  api::ObjectPtr stored = Get(kDeployments, "web");
  EXPECT_EQ(stored->Label("owner"), "someone");
  EXPECT_EQ(stored->Find("/spec/replicas")->GetInt(), 4);
}

}  // namespace
}  // namespace kcr::controller::controllerutil
