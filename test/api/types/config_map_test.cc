#include "api/types/config_map.h"

#include "gtest/gtest.h"
#include "test/api/testdata_util.h"

namespace kcr {
namespace api {
namespace {

ObjectPtr Parse(std::string_view json) {
  absl::StatusOr<ObjectPtr> obj = Object::Parse(json);
  EXPECT_TRUE(obj.ok()) << obj.status();
  return obj.ok() ? *obj : nullptr;
}

TEST(ConfigMapViewTest, ReadsFixture) {
  absl::StatusOr<ConfigMapView> cm =
      ConfigMapView::Create(Parse(testing::ReadTestdata("configmap.json")));
  ASSERT_TRUE(cm.ok());
  EXPECT_EQ(cm->data().size(), 4u);
  EXPECT_EQ(cm->data().Get("LOG_LEVEL"), "info");
  EXPECT_TRUE(cm->binary_data().empty());
  EXPECT_FALSE(cm->immutable());
}

TEST(ConfigMapViewTest, BadData) {
  EXPECT_EQ(ConfigMapView::Create(
                Parse(R"({"kind":"ConfigMap","metadata":{},"data":{"k":1}})"))
                .status()
                .message(),
            "data.k is not a string");
  EXPECT_EQ(ConfigMapView::Create(Parse(R"({"metadata":{},"binaryData":[]})"))
                .status()
                .message(),
            "binaryData is not an object");
  EXPECT_FALSE(
      ConfigMapView::Create(Parse(R"({"kind":"Secret","metadata":{}})")).ok());
  absl::StatusOr<ConfigMapView> empty =
      ConfigMapView::Create(Parse(R"({"metadata":{},"data":null})"));
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->data().empty());
}

TEST(ConfigMapBuilderTest, CopyBetweenNamespaces) {
  ObjectPtr source = Parse(testing::ReadTestdata("configmap.json"));
  absl::StatusOr<ConfigMapView> view = ConfigMapView::Create(source);
  ASSERT_TRUE(view.ok());
  ConfigMapBuilder b("team-a", "web-frontend-config");
  b.SetAllData(view->data().ToMap()).SetData("a/b~c", "x");
  b.SetBinaryData("blob", std::string("\x00\x01\xff", 3));
  absl::StatusOr<ObjectPtr> copy = b.Build();
  ASSERT_TRUE(copy.ok());
  absl::StatusOr<ConfigMapView> copied = ConfigMapView::Create(*copy);
  ASSERT_TRUE(copied.ok());
  EXPECT_EQ((*copy)->namespace_(), "team-a");
  EXPECT_EQ(copied->data().size(), 5u);
  EXPECT_EQ(copied->data().Get("nginx.conf"), view->data().Get("nginx.conf"));
  EXPECT_EQ(copied->data().Get("a/b~c"), "x");
  EXPECT_EQ(copied->binary_data().Get("blob"), "AAH/");
}

}  // namespace
}  // namespace api
}  // namespace kcr
