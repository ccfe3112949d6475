// The helpers the built-in controllers share (stored_objects.h).
#include "apiserver/kube_controllers/stored_objects.h"

#include <string>
#include <utility>

#include "api/object_builder.h"
#include "gtest/gtest.h"
#include "test/apiserver/registry_fixture.h"

namespace kcr::apiserver {
namespace {

class StatusWriteOfTest : public RegistryFixture {};

TEST_F(StatusWriteOfTest, CarriesTypeIdentityPreconditionAndAnnotationsOnly) {
  absl::StatusOr<api::ObjectPtr> d = api::Object::Parse(
      R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web",)"
      R"("namespace":"default","uid":"u1","resourceVersion":"42",)"
      R"("labels":{"app":"web"},"annotations":{"a":"1"}},)"
      R"("spec":{"replicas":1},"status":{"replicas":1}})");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(StatusWriteOf(**d).ToJson(),
            R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":)"
            R"({"name":"web","namespace":"default","resourceVersion":"42"}})");
  EXPECT_EQ(StatusWriteOf(**d, /*with_annotations=*/true).ToJson(),
            R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":)"
            R"({"name":"web","namespace":"default","resourceVersion":"42",)"
            R"("annotations":{"a":"1"}}})");
  absl::StatusOr<api::ObjectPtr> node = api::Object::Parse(
      R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n",)"
      R"("resourceVersion":"7"}})");
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(StatusWriteOf(**node, true).ToJson(),
            R"({"apiVersion":"v1","kind":"Node","metadata":)"
            R"({"name":"n","resourceVersion":"7"}})");
}

// The status subresource takes only the status from the body: the short
// body stores what the whole object would.
TEST_F(StatusWriteOfTest, StoresWhatTheWholeObjectWould) {
  ResourceInfoPtr pods = Resource("", "v1", "pods");
  absl::StatusOr<WriteResult> created = registry_.Create(
      *pods, "default",
      FromJson(R"({"metadata":{"name":"p","labels":{"app":"web"}},)"
               R"("spec":{"containers":[{"name":"c","image":"nginx"}]}})"));
  ASSERT_TRUE(created.ok()) << created.status();
  const api::ObjectPtr pod = created->object;
  const char kStatus[] = R"({"phase":"Running","podIP":"10.244.0.1"})";

  api::ObjectBuilder whole = pod->ToBuilder();
  ASSERT_TRUE(whole.SetJson("/status", kStatus).ok());
  WriteOptions w;
  w.subresource = "status";
  w.dry_run = true;
  absl::StatusOr<WriteResult> from_whole =
      registry_.Update(*pods, "default", "p", std::move(whole), w);
  ASSERT_TRUE(from_whole.ok()) << from_whole.status();

  api::ObjectBuilder short_body = StatusWriteOf(*pod);
  ASSERT_TRUE(short_body.SetJson("/status", kStatus).ok());
  w.dry_run = false;
  absl::StatusOr<WriteResult> from_short =
      registry_.Update(*pods, "default", "p", std::move(short_body), w);
  ASSERT_TRUE(from_short.ok()) << from_short.status();

  // The same object but for the resourceVersion the real write took.
  api::ObjectBuilder expected = from_whole->object->ToBuilder();
  expected.SetResourceVersion(from_short->object->resource_version());
  EXPECT_EQ(from_short->object->ToJson(), expected.ToJson());
  EXPECT_NE(from_short->object->resource_version(), pod->resource_version());
}

}  // namespace
}  // namespace kcr::apiserver
