#include "api/types/owner_reference.h"

#include "api/object_builder.h"
#include "gtest/gtest.h"

namespace kcr {
namespace api {
namespace {

ObjectPtr Parse(std::string_view json) {
  absl::StatusOr<ObjectPtr> obj = Object::Parse(json);
  EXPECT_TRUE(obj.ok()) << obj.status();
  return *obj;
}

TEST(OwnerReferenceTest, ControllerOf) {
  ObjectPtr owner = Parse(
      R"({"apiVersion":"example.org/v1","kind":"Nginx","metadata":{"name":"web","namespace":"ns","uid":"u-1"}})");
  OwnerReference ref = NewControllerRef(*owner);
  EXPECT_EQ(ref, (OwnerReference{"example.org/v1", "Nginx", "web", "u-1", true,
                                 true}));
  ObjectBuilder b("apps/v1", "Deployment");
  b.SetName("web-deploy")
      .AddOwnerReference({"v1", "ConfigMap", "other", "u-2", false, false});
  b.AddOwnerReference(ref.view());
  ObjectPtr owned = *b.Build();
  std::optional<OwnerReference> controller = ControllerOf(*owned);
  ASSERT_TRUE(controller.has_value());
  EXPECT_EQ(*controller, ref);
  EXPECT_TRUE(IsControlledBy(*owned, *owner));
  EXPECT_EQ(OwnerReferencesOf(*owned).size(), 2u);
  EXPECT_EQ(OwnerReferencesOf(*owned)[0].name, "other");
  EXPECT_FALSE(ControllerOf(*owner).has_value());
  ObjectPtr stranger = Parse(R"({"metadata":{"uid":"u-9"}})");
  EXPECT_FALSE(IsControlledBy(*owned, *stranger));
  ObjectPtr no_uid = Parse(R"({"metadata":{}})");
  EXPECT_FALSE(IsControlledBy(*no_uid, *no_uid));
}

TEST(OwnerReferenceTest, BadReferencesAreRejectedAtParse) {
  EXPECT_FALSE(
      Object::Parse(R"({"metadata":{"ownerReferences":[{"controller":1}]}})")
          .ok());
  // Missing fields read as empty.
  ObjectPtr obj =
      Parse(R"({"metadata":{"ownerReferences":[{"controller":true}]}})");
  std::optional<OwnerReference> c = ControllerOf(*obj);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->uid, "");
  EXPECT_FALSE(c->block_owner_deletion);
}

}  // namespace
}  // namespace api
}  // namespace kcr
