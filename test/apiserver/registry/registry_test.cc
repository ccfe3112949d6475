#include "apiserver/registry/registry.h"

#include <string>

#include "absl/time/time.h"
#include "api/object.h"
#include "api/object_builder.h"
#include "apiserver/endpoints/patch_handlers.h"
#include "apiserver/registry/resources.h"
#include "apiserver/storage/storage.h"
#include "gtest/gtest.h"
#include "test/apiserver/registry_fixture.h"
#include "test/fakes/fake_clock.h"

namespace kcr::apiserver {
namespace {

api::ObjectBuilder ConfigMap(std::string_view value) {
  absl::StatusOr<api::ObjectBuilder> b = api::ObjectBuilder::FromJson(
      std::string(R"({"metadata":{"name":"c"},"data":{"k":")") +
      std::string(value) + R"("}})");
  EXPECT_TRUE(b.ok()) << b.status();
  return std::move(*b);
}

// A registry on a fake clock, with the patch algorithms the server uses.
class RegistryTest : public RegistryFixture {
 protected:
  RegistryTest() : cms_(Resource("", "v1", "configmaps")) {}

  ResourceInfoPtr cms_;
};

// A write whose only change would be the managers' timestamps is a no-op,
// as kube-apiserver's IgnoreManagedFieldsTimestampsTransformer makes it:
// same resourceVersion, same managedFields.
TEST_F(RegistryTest, WriteThatOnlyMovesManagedFieldsTimesIsANoOp) {
  WriteOptions write;
  write.field_manager = "tool";

  absl::StatusOr<WriteResult> created =
      registry_.Create(*cms_, "default", ConfigMap("1"), write);
  ASSERT_TRUE(created.ok()) << created.status();
  const std::string rv(created->object->resource_version());

  clock_.Advance(absl::Seconds(5));
  absl::StatusOr<WriteResult> same =
      registry_.Update(*cms_, "default", "c", ConfigMap("1"), write);
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ(same->object->resource_version(), rv);
  const rapidjson::Value* time =
      same->object->Find("/metadata/managedFields/0/time");
  ASSERT_NE(time, nullptr);
  const std::string first_time = time->GetString();

  clock_.Advance(absl::Seconds(5));
  absl::StatusOr<WriteResult> changed =
      registry_.Update(*cms_, "default", "c", ConfigMap("2"), write);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_NE(changed->object->resource_version(), rv);
  EXPECT_NE(
      std::string(
          changed->object->Find("/metadata/managedFields/0/time")->GetString()),
      first_time)
      << "a real change records its time";
}

// The same for server-side apply, which stamps its manager's time on every
// apply: applying an unchanged manifest again, seconds later, writes
// nothing; applying a changed one records the new time.
TEST_F(RegistryTest, ReApplyingTheSameManifestIsANoOp) {
  PatchOptions apply;
  apply.field_manager = "kubectl";
  const auto manifest = [](std::string_view value) {
    return std::string(
               R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":")") +
           std::string(value) + R"("}})";
  };

  absl::StatusOr<WriteResult> created = registry_.Patch(
      *cms_, "default", "c", PatchType::kApply, manifest("1"), apply);
  ASSERT_TRUE(created.ok()) << created.status();
  const std::string rv(created->object->resource_version());
  const std::string time =
      created->object->Find("/metadata/managedFields/0/time")->GetString();

  clock_.Advance(absl::Seconds(5));
  absl::StatusOr<WriteResult> again = registry_.Patch(
      *cms_, "default", "c", PatchType::kApply, manifest("1"), apply);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->object->resource_version(), rv);
  EXPECT_EQ(
      std::string(
          again->object->Find("/metadata/managedFields/0/time")->GetString()),
      time);

  clock_.Advance(absl::Seconds(5));
  absl::StatusOr<WriteResult> changed = registry_.Patch(
      *cms_, "default", "c", PatchType::kApply, manifest("2"), apply);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_NE(changed->object->resource_version(), rv);
  EXPECT_NE(
      std::string(
          changed->object->Find("/metadata/managedFields/0/time")->GetString()),
      time);
}

}  // namespace
}  // namespace kcr::apiserver
