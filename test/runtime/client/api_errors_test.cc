#include "runtime/client/api_errors.h"

#include <string>

#include "api/errors/errors.h"
#include "gtest/gtest.h"

namespace kcr::client {
namespace {

TEST(ApiErrorsTest, StatusBodyKeepsReasonMessageAndDetails) {
  absl::Status s =
      StatusFromResponse(404, R"({"kind":"Status","apiVersion":"v1",
      "metadata":{},"status":"Failure","message":"configmaps \"cm1\" not found",
      "reason":"NotFound","details":{"name":"cm1","kind":"configmaps"},"code":404})");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "configmaps \"cm1\" not found");
  EXPECT_TRUE(api::IsNotFound(s));
  EXPECT_FALSE(api::IsConflict(s));
  EXPECT_EQ(api::ReasonForError(s), "NotFound");
  auto e = api::GetStatusError(s);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->code, 404);
  EXPECT_EQ(e->name, "cm1");
  EXPECT_EQ(e->kind, "configmaps");
}

// Both sides of the wire: what the local API server writes for each reason
// reads back on the client with the absl code and predicate the server
// gave it in process.
TEST(ApiErrorsTest, EveryServerErrorReadsBackAsTheServerMeantIt) {
  const api::StatusError errors[] = {
      api::StatusError::BadRequest("bad"),
      api::StatusError::Unauthorized(),
      api::StatusError::Forbidden({"", "pods"}, "p", "no"),
      api::StatusError::NotFound({"apps", "deployments"}, "web"),
      api::StatusError::PathNotFound(),
      api::StatusError::MethodNotSupported({"", "pods"}, "watch"),
      api::StatusError::NotAcceptable("only json"),
      api::StatusError::AlreadyExists({"", "configmaps"}, "cm"),
      api::StatusError::StaleConflict({"", "configmaps"}, "cm"),
      api::StatusError::Expired("too old resource version: 1 (5)"),
      api::StatusError::RequestEntityTooLarge("limit is 3145728"),
      api::StatusError::UnsupportedMediaType("not yaml"),
      api::StatusError::Invalid({"", "ConfigMap"}, "cm", {}),
      api::StatusError::TooManyRequests("slow down", 2),
      api::StatusError::InternalError("boom"),
      api::StatusError::ServiceUnavailable("later"),
  };
  for (const api::StatusError& e : errors) {
    SCOPED_TRACE(e.ToJson());
    const absl::Status server_side = e.ToStatus();
    const absl::Status client_side = StatusFromResponse(e.code, e.ToJson());
    EXPECT_EQ(client_side.code(), server_side.code());
    EXPECT_EQ(client_side.message(), server_side.message());
    EXPECT_EQ(api::GetStatusError(client_side)->ToJson(), e.ToJson());
  }
}

TEST(ApiErrorsTest, BodyWithoutStatusUsesTheHttpCode) {
  absl::Status s = StatusFromResponse(404, "<html>nope</html>");
  EXPECT_TRUE(api::IsNotFound(s));
  EXPECT_EQ(api::ReasonForError(s), "NotFound");
  EXPECT_NE(s.message().find("404"), std::string::npos);
  EXPECT_NE(s.message().find("<html>nope</html>"), std::string::npos);

  absl::Status empty = StatusFromResponse(502, "");
  EXPECT_EQ(empty.code(), absl::StatusCode::kInternal);
  EXPECT_TRUE(api::IsInternalError(empty));  // as client-go's generic response
  EXPECT_NE(empty.message().find("502"), std::string::npos);

  EXPECT_TRUE(api::IsInternalError(StatusFromResponse(500, "{not json")));
  // JSON, but not a Status.
  absl::Status object = StatusFromResponse(409, R"({"kind":"ConfigMap"})");
  EXPECT_TRUE(api::IsConflict(object));
  EXPECT_EQ(object.code(), absl::StatusCode::kAborted);

  absl::Status teapot = StatusFromResponse(418, "");
  EXPECT_EQ(teapot.code(), absl::StatusCode::kUnknown);
  EXPECT_EQ(api::GetStatusError(teapot)->code, 418);
}

TEST(ApiErrorsTest, StatusWithoutCodeOrMessageTakesTheAnswers) {
  absl::Status s =
      StatusFromResponse(404, R"({"kind":"Status","message":"gone away"})");
  EXPECT_TRUE(api::IsNotFound(s));
  EXPECT_EQ(api::GetStatusError(s)->code, 404);
  absl::Status t = StatusFromResponse(
      429, R"({"kind":"Status","reason":"TooManyRequests"})");
  EXPECT_TRUE(api::IsTooManyRequests(t));
  EXPECT_EQ(t.message(), "TooManyRequests (HTTP 429)");
  // A body claiming success on a failed answer is still a failure.
  absl::Status odd = StatusFromResponse(
      500, R"({"kind":"Status","status":"Success","code":200})");
  EXPECT_FALSE(odd.ok());
  EXPECT_TRUE(api::IsInternalError(odd));
}

TEST(ApiErrorsTest, RetryAfterFromDetailsOrHeader) {
  absl::Status s =
      StatusFromResponse(429, R"({"kind":"Status","reason":"TooManyRequests",
      "code":429,"message":"slow down","details":{"retryAfterSeconds":3}})",
                         "9");
  EXPECT_EQ(api::SuggestsClientDelay(s), 3);
  absl::Status h = StatusFromResponse(429, "too many", "7");
  EXPECT_EQ(api::SuggestsClientDelay(h), 7);
  EXPECT_TRUE(api::IsTooManyRequests(h));
  EXPECT_EQ(api::SuggestsClientDelay(StatusFromResponse(429, "x", "soon")),
            std::nullopt);
  EXPECT_EQ(api::SuggestsClientDelay(StatusFromResponse(503, "x")),
            std::nullopt);
}

TEST(ApiErrorsTest, InvalidKeepsCauses) {
  absl::Status s =
      StatusFromResponse(422, R"({"kind":"Status","reason":"Invalid","code":422,
      "message":"ConfigMap \"x\" is invalid: metadata.name: Required value",
      "details":{"kind":"ConfigMap","causes":[{"reason":"FieldValueRequired",
      "message":"Required value","field":"metadata.name"}]}})");
  EXPECT_TRUE(api::IsInvalid(s));
  auto e = api::GetStatusError(s);
  ASSERT_TRUE(e.has_value());
  ASSERT_EQ(e->causes.size(), 1u);
  EXPECT_EQ(e->causes[0].field, "metadata.name");
  EXPECT_EQ(e->causes[0].reason, "FieldValueRequired");
}

}  // namespace
}  // namespace kcr::client
