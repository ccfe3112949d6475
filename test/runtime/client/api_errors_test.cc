#include "runtime/client/api_errors.h"

#include <string>

#include "gtest/gtest.h"
#include "rapidjson/document.h"

namespace kcr::client {
namespace {

TEST(ApiErrorsTest, NotFoundKeepsReasonMessageAndDetails) {
  absl::Status s = ToStatus(404, R"({"kind":"Status","apiVersion":"v1",
      "metadata":{},"status":"Failure","message":"configmaps \"cm1\" not found",
      "reason":"NotFound","details":{"name":"cm1","kind":"configmaps"},"code":404})");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "configmaps \"cm1\" not found");
  EXPECT_TRUE(client::IsNotFound(s));
  EXPECT_FALSE(IsConflict(s));
  EXPECT_FALSE(client::IsAlreadyExists(s));
  EXPECT_EQ(ReasonForError(s), "NotFound");
  auto api = GetApiStatus(s);
  ASSERT_TRUE(api.has_value());
  EXPECT_EQ(api->code, 404);
  EXPECT_EQ(api->name, "cm1");
  EXPECT_EQ(api->kind, "configmaps");
}

struct Case {
  int code;
  const char* reason;
  absl::StatusCode want;
  bool (*predicate)(const absl::Status&);
};

TEST(ApiErrorsTest, EveryReasonMapsAndMatchesItsPredicate) {
  const Case cases[] = {
      {400, "BadRequest", absl::StatusCode::kInvalidArgument, client::IsBadRequest},
      {401, "Unauthorized", absl::StatusCode::kUnauthenticated, IsUnauthorized},
      {403, "Forbidden", absl::StatusCode::kPermissionDenied, IsForbidden},
      {404, "NotFound", absl::StatusCode::kNotFound, IsNotFound},
      {405, "MethodNotAllowed", absl::StatusCode::kUnimplemented,
       IsMethodNotSupported},
      {409, "AlreadyExists", absl::StatusCode::kAlreadyExists, IsAlreadyExists},
      {409, "Conflict", absl::StatusCode::kAborted, IsConflict},
      {410, "Expired", absl::StatusCode::kFailedPrecondition, IsResourceExpired},
      {410, "Gone", absl::StatusCode::kFailedPrecondition, IsResourceExpired},
      {410, "Gone", absl::StatusCode::kFailedPrecondition, IsGone},
      {422, "Invalid", absl::StatusCode::kInvalidArgument, IsInvalid},
      {429, "TooManyRequests", absl::StatusCode::kResourceExhausted,
       IsTooManyRequests},
      {500, "InternalError", absl::StatusCode::kInternal, IsInternalError},
      {500, "ServerTimeout", absl::StatusCode::kDeadlineExceeded, IsServerTimeout},
      {503, "ServiceUnavailable", absl::StatusCode::kUnavailable,
       IsServiceUnavailable},
      {504, "Timeout", absl::StatusCode::kDeadlineExceeded, IsTimeout},
  };
  for (const Case& c : cases) {
    std::string body = std::string(R"({"kind":"Status","status":"Failure","reason":")") +
                       c.reason + R"(","message":"m","code":)" + std::to_string(c.code) + "}";
    absl::Status s = ToStatus(c.code, body);
    EXPECT_EQ(s.code(), c.want) << c.reason;
    EXPECT_TRUE(c.predicate(s)) << c.reason;
    EXPECT_EQ(s.message(), "m");
  }
}

TEST(ApiErrorsTest, ConflictIsNotAlreadyExists) {
  absl::Status conflict = ToStatus(409, R"({"kind":"Status","reason":"Conflict",
      "message":"Operation cannot be fulfilled on configmaps \"cm1\": the object has been modified","code":409})");
  EXPECT_TRUE(IsConflict(conflict));
  EXPECT_FALSE(client::IsAlreadyExists(conflict));
  absl::Status exists = ToStatus(409, R"({"kind":"Status","reason":"AlreadyExists","code":409,"message":"x"})");
  EXPECT_TRUE(client::IsAlreadyExists(exists));
  EXPECT_FALSE(IsConflict(exists));
}

TEST(ApiErrorsTest, BodyWithoutStatusUsesTheHttpCode) {
  absl::Status s = ToStatus(404, "<html>nope</html>");
  EXPECT_TRUE(client::IsNotFound(s));
  EXPECT_EQ(ReasonForError(s), "NotFound");
  EXPECT_NE(s.message().find("404"), std::string::npos);
  EXPECT_NE(s.message().find("<html>nope</html>"), std::string::npos);

  absl::Status empty = ToStatus(502, "");
  EXPECT_EQ(empty.code(), absl::StatusCode::kInternal);
  EXPECT_NE(empty.message().find("502"), std::string::npos);

  absl::Status garbage = ToStatus(500, "{not json");
  EXPECT_TRUE(IsInternalError(garbage));
}

TEST(ApiErrorsTest, UnknownReasonFallsBackToCode) {
  absl::Status s = ToStatus(404, R"({"kind":"Status","code":404,"message":"gone away"})");
  EXPECT_TRUE(client::IsNotFound(s));
  absl::Status t = ToStatus(429, R"({"kind":"Status","reason":"Unknown","code":429,"message":"slow"})");
  EXPECT_TRUE(IsTooManyRequests(t));
}

TEST(ApiErrorsTest, RetryAfterFromDetailsOrHeader) {
  absl::Status s = ToStatus(429, R"({"kind":"Status","reason":"TooManyRequests",
      "code":429,"message":"slow down","details":{"retryAfterSeconds":3}})");
  EXPECT_EQ(SuggestsClientDelay(s), 3);
  absl::Status h = ToStatus(429, "too many", "7");
  EXPECT_EQ(SuggestsClientDelay(h), 7);
  EXPECT_TRUE(IsTooManyRequests(h));
  absl::Status none = ToStatus(404, "x", "5");
  EXPECT_EQ(SuggestsClientDelay(none), std::nullopt);
  EXPECT_EQ(SuggestsClientDelay(absl::UnavailableError("x")), std::nullopt);
}

TEST(ApiErrorsTest, InvalidKeepsCauses) {
  absl::Status s = ToStatus(422, R"({"kind":"Status","reason":"Invalid","code":422,
      "message":"ConfigMap \"x\" is invalid: metadata.name: Required value",
      "details":{"kind":"ConfigMap","causes":[{"reason":"FieldValueRequired",
      "message":"Required value","field":"metadata.name"}]}})");
  auto api = GetApiStatus(s);
  ASSERT_TRUE(api.has_value());
  ASSERT_EQ(api->causes.size(), 1u);
  EXPECT_EQ(api->causes[0].field, "metadata.name");
  EXPECT_EQ(api->causes[0].reason, "FieldValueRequired");
}

TEST(ApiErrorsTest, TransportErrorsCarryNoApiStatus) {
  absl::Status s = absl::UnavailableError("connection refused");
  EXPECT_FALSE(GetApiStatus(s).has_value());
  EXPECT_FALSE(client::IsNotFound(s));
  EXPECT_FALSE(IsServiceUnavailable(s));
  EXPECT_EQ(ReasonForError(s), "");
  EXPECT_FALSE(client::IsNotFound(absl::OkStatus()));
}

TEST(ApiErrorsTest, StatusFromWatchErrorObject) {
  rapidjson::Document d;
  d.Parse(R"json({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
      "message":"too old resource version: 100 (200)","reason":"Expired","code":410})json");
  absl::Status s = StatusFromObject(d);
  EXPECT_TRUE(IsResourceExpired(s));
  EXPECT_EQ(s.message(), "too old resource version: 100 (200)");
  rapidjson::Document ok;
  ok.Parse(R"({"kind":"Status","status":"Success","code":200})");
  EXPECT_TRUE(StatusFromObject(ok).ok());
}

TEST(ApiErrorsTest, MakeApiErrorRoundTrips) {
  ApiStatus api;
  api.code = 409;
  api.reason = "Conflict";
  api.message = "stale";
  api.name = "n";
  absl::Status s = MakeApiError(api);
  EXPECT_TRUE(IsConflict(s));
  EXPECT_EQ(GetApiStatus(s)->name, "n");
}

}  // namespace
}  // namespace kcr::client
