#include "api/types/secret.h"

#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kcr {
namespace api {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

ObjectPtr Parse(std::string_view json) {
  absl::StatusOr<ObjectPtr> obj = Object::Parse(json);
  EXPECT_TRUE(obj.ok()) << obj.status();
  return obj.ok() ? *obj : nullptr;
}

// "hunter2-password" and "admin" in base64.
constexpr char kSecret[] =
    R"({"apiVersion":"v1","kind":"Secret","metadata":{"name":"db","namespace":"prod"},)"
    R"("type":"kubernetes.io/basic-auth",)"
    R"("data":{"password":"aHVudGVyMi1wYXNzd29yZA==","username":"YWRtaW4="}})";

TEST(SecretViewTest, DataStaysBase64) {
  absl::StatusOr<SecretView> s = SecretView::Create(Parse(kSecret));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->type(), "kubernetes.io/basic-auth");
  EXPECT_EQ(s->data().Get("username"), "YWRtaW4=");
  EXPECT_EQ(*s->Decoded("password"), "hunter2-password");
  EXPECT_EQ(s->Decoded("missing").status().code(), absl::StatusCode::kNotFound);
}

TEST(SecretViewTest, DebugStringNeverPrintsValues) {
  absl::StatusOr<SecretView> s = SecretView::Create(Parse(kSecret));
  ASSERT_TRUE(s.ok());
  const std::string debug = s->DebugString();
  EXPECT_EQ(debug,
            "Secret prod/db type=kubernetes.io/basic-auth "
            "data={password: 16 bytes, username: 5 bytes}");
  std::ostringstream os;
  os << *s;
  for (const std::string& text : {debug, os.str()}) {
    EXPECT_THAT(text, Not(HasSubstr("hunter2")));
    EXPECT_THAT(text, Not(HasSubstr("aHVudGVy")));
    EXPECT_THAT(text, Not(HasSubstr("admin")));
    EXPECT_THAT(text, Not(HasSubstr("YWRtaW4")));
  }
}

TEST(SecretViewTest, BadFields) {
  absl::StatusOr<SecretView> bad64 = SecretView::Create(Parse(
      R"({"kind":"Secret","metadata":{},"data":{"k":"!!not base64!!"}})"));
  ASSERT_TRUE(bad64.ok());
  absl::StatusOr<std::string> decoded = bad64->Decoded("k");
  EXPECT_EQ(decoded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(decoded.status().message(), Not(HasSubstr("not base64!!")));
  EXPECT_EQ(SecretView::Create(Parse(R"({"metadata":{},"data":{"k":true}})"))
                .status()
                .message(),
            "data.k is not a string");
  EXPECT_FALSE(
      SecretView::Create(Parse(R"({"metadata":{},"stringData":[]})")).ok());
  absl::StatusOr<SecretView> plain =
      SecretView::Create(Parse(R"({"metadata":{"name":"s"},"type":5})"));
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->type(), "Opaque");
  EXPECT_EQ(plain->DebugString(), "Secret s type=Opaque data={}");
}

TEST(SecretBuilderTest, EncodesAndCopies) {
  SecretBuilder b("team-a", "db");
  b.SetType("Opaque").SetData("token", "s3cr3t");
  absl::StatusOr<SecretView> source = SecretView::Create(Parse(kSecret));
  b.SetEncodedData("password", *source->data().Get("password"));
  absl::StatusOr<ObjectPtr> built = b.Build();
  ASSERT_TRUE(built.ok());
  absl::StatusOr<SecretView> s = SecretView::Create(*built);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->data().Get("token"), "czNjcjN0");
  EXPECT_EQ(*s->Decoded("password"), "hunter2-password");
}

}  // namespace
}  // namespace api
}  // namespace kcr
