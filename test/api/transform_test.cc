#include "api/transform.h"

#include <string>

#include "api/object_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/api/testdata_util.h"

namespace kcr {
namespace api {
namespace {

using ::kcr::api::testing::Minify;
using ::kcr::api::testing::ReadTestdata;

TEST(StripManagedFieldsTest, RemovesOnlyManagedFields) {
  std::string json = Minify(ReadTestdata("pod.json"));
  absl::StatusOr<ObjectPtr> pod = Object::Parse(json);
  ASSERT_TRUE(pod.ok());
  ASSERT_NE((*pod)->Find("/metadata/managedFields"), nullptr);
  absl::StatusOr<ObjectPtr> stripped = StripManagedFields()(*pod);
  ASSERT_TRUE(stripped.ok());
  EXPECT_EQ((*stripped)->Find("/metadata/managedFields"), nullptr);
  EXPECT_EQ((*stripped)->name(), (*pod)->name());
  EXPECT_EQ((*stripped)->Label("app"), "web-frontend");
  EXPECT_LT((*stripped)->SpaceUsed(), (*pod)->SpaceUsed());
  // Same result as stripping during the parse.
  absl::StatusOr<ObjectPtr> at_parse =
      Object::Parse(json, {.strip_managed_fields = true});
  ASSERT_TRUE(at_parse.ok());
  EXPECT_EQ((*stripped)->ToJson(), (*at_parse)->ToJson());
  EXPECT_EQ((*stripped)->SpaceUsed(), (*at_parse)->SpaceUsed());
}

TEST(StripManagedFieldsTest, NoCopyWhenAbsent) {
  absl::StatusOr<ObjectPtr> obj = Object::Parse(R"({"metadata":{"name":"a"}})");
  ASSERT_TRUE(obj.ok());
  absl::StatusOr<ObjectPtr> out = StripManagedFields()(*obj);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->get(), obj->get());
  EXPECT_FALSE(StripManagedFields()(nullptr).ok());
}

TEST(ObjectDecoderTest, DefaultStripsAtParse) {
  ObjectDecoder decoder;
  absl::StatusOr<ObjectPtr> pod = decoder.Decode(ReadTestdata("pod.json"));
  ASSERT_TRUE(pod.ok());
  EXPECT_EQ((*pod)->Find("/metadata/managedFields"), nullptr);
  EXPECT_FALSE(decoder.Decode("{").ok());
}

TEST(ObjectDecoderTest, DefaultCanBeTurnedOff) {
  ObjectDecoder decoder(
      {.strip_managed_fields_at_parse = false, .transform = nullptr});
  absl::StatusOr<ObjectPtr> pod = decoder.Decode(ReadTestdata("pod.json"));
  ASSERT_TRUE(pod.ok());
  EXPECT_NE((*pod)->Find("/metadata/managedFields"), nullptr);
}

TEST(ObjectDecoderTest, CustomTransform) {
  // A user transform that also drops the last-applied annotation, and one
  // that rejects objects.
  TransformFunc drop_annotation =
      [](ObjectPtr obj) -> absl::StatusOr<ObjectPtr> {
    ObjectBuilder b = obj->ToBuilder();
    b.RemoveAnnotation("prometheus.io/port");
    return b.Build();
  };
  ObjectDecoder decoder(
      {.strip_managed_fields_at_parse = true, .transform = drop_annotation});
  absl::StatusOr<ObjectPtr> pod = decoder.Decode(ReadTestdata("pod.json"));
  ASSERT_TRUE(pod.ok());
  EXPECT_FALSE((*pod)->Annotation("prometheus.io/port").has_value());
  EXPECT_EQ((*pod)->Find("/metadata/managedFields"), nullptr);

  ObjectDecoder rejecting(
      {.strip_managed_fields_at_parse = false,
       .transform = [](ObjectPtr) -> absl::StatusOr<ObjectPtr> {
         return absl::FailedPreconditionError("no");
       }});
  EXPECT_EQ(rejecting.Decode(R"({"metadata":{}})").status().code(),
            absl::StatusCode::kFailedPrecondition);
  ObjectDecoder null_result(
      {.strip_managed_fields_at_parse = false,
       .transform = [](ObjectPtr) -> absl::StatusOr<ObjectPtr> {
         return ObjectPtr();
       }});
  EXPECT_FALSE(null_result.Decode(R"({"metadata":{}})").ok());
}

TEST(ObjectDecoderTest, ApplyToParsedObject) {
  absl::StatusOr<ObjectPtr> pod = Object::Parse(ReadTestdata("pod.json"));
  ASSERT_TRUE(pod.ok());
  ObjectDecoder decoder;
  absl::StatusOr<ObjectPtr> cached = decoder.Apply(*pod);
  ASSERT_TRUE(cached.ok());
  EXPECT_EQ((*cached)->Find("/metadata/managedFields"), nullptr);
  EXPECT_FALSE(decoder.Apply(nullptr).ok());
}

}  // namespace
}  // namespace api
}  // namespace kcr
