#include "api/errors/errors.h"

#include <iterator>
#include <optional>
#include <string>

#include "gtest/gtest.h"
#include "rapidjson/document.h"

namespace kcr {
namespace api {
namespace {

using Predicate = bool (*)(const absl::Status&);

// Every reason apimachinery knows, with its HTTP code, the one absl code
// both the client and the server give it, its predicate, and the reason a
// status without payload of that absl code turns back into (server side).
struct Row {
  int http_code;
  const char* reason;
  absl::StatusCode code;
  Predicate predicate;
  const char* reason_from_code;  // FromStatus of a plain status
  int http_from_code;
};

constexpr absl::StatusCode kInvalid = absl::StatusCode::kInvalidArgument;
constexpr absl::StatusCode kUnimpl = absl::StatusCode::kUnimplemented;

const Row kRows[] = {
    {400, "BadRequest", kInvalid, IsBadRequest, "BadRequest", 400},
    {401, "Unauthorized", absl::StatusCode::kUnauthenticated, IsUnauthorized,
     "Unauthorized", 401},
    {403, "Forbidden", absl::StatusCode::kPermissionDenied, IsForbidden,
     "Forbidden", 403},
    {404, "NotFound", absl::StatusCode::kNotFound, IsNotFound, "NotFound", 404},
    {405, "MethodNotAllowed", kUnimpl, IsMethodNotSupported, "InternalError",
     500},
    {406, "NotAcceptable", kUnimpl, IsNotAcceptable, "InternalError", 500},
    {409, "AlreadyExists", absl::StatusCode::kAlreadyExists, IsAlreadyExists,
     "AlreadyExists", 409},
    {409, "Conflict", absl::StatusCode::kAborted, IsConflict, "Conflict", 409},
    {410, "Expired", absl::StatusCode::kOutOfRange, IsResourceExpired,
     "Expired", 410},
    {410, "Gone", absl::StatusCode::kOutOfRange, IsGone, "Expired", 410},
    {413, "RequestEntityTooLarge", kInvalid, IsRequestEntityTooLarge,
     "BadRequest", 400},
    {415, "UnsupportedMediaType", kUnimpl, IsUnsupportedMediaType,
     "InternalError", 500},
    {422, "Invalid", kInvalid, IsInvalid, "BadRequest", 400},
    {429, "TooManyRequests", absl::StatusCode::kResourceExhausted,
     IsTooManyRequests, "InternalError", 500},
    {500, "InternalError", absl::StatusCode::kInternal, IsInternalError,
     "InternalError", 500},
    {500, "ServerTimeout", absl::StatusCode::kDeadlineExceeded, IsServerTimeout,
     "Timeout", 504},
    {503, "ServiceUnavailable", absl::StatusCode::kUnavailable,
     IsServiceUnavailable, "ServiceUnavailable", 503},
    {504, "Timeout", absl::StatusCode::kDeadlineExceeded, IsTimeout, "Timeout",
     504},
};

const Predicate kAllPredicates[] = {
    IsNotFound,
    IsAlreadyExists,
    IsConflict,
    IsInvalid,
    IsBadRequest,
    IsUnauthorized,
    IsForbidden,
    IsMethodNotSupported,
    IsNotAcceptable,
    IsGone,
    IsResourceExpired,
    IsRequestEntityTooLarge,
    IsUnsupportedMediaType,
    IsTooManyRequests,
    IsInternalError,
    IsServerTimeout,
    IsServiceUnavailable,
    IsTimeout,
};

StatusError Error(int code, const char* reason) {
  StatusError e;
  e.code = code;
  e.reason = reason;
  e.message = std::string("m ") + reason;
  return e;
}

TEST(ErrorsTest, EveryReasonMapsToOneCodeAndOnlyItsPredicate) {
  for (const Row& row : kRows) {
    SCOPED_TRACE(row.reason);
    const absl::Status s = Error(row.http_code, row.reason).ToStatus();
    EXPECT_EQ(s.code(), row.code);
    EXPECT_EQ(AbslCodeFor(row.http_code, row.reason), row.code);
    EXPECT_EQ(s.message(), std::string("m ") + row.reason);
    EXPECT_EQ(ReasonForError(s), row.reason);
    // Only its own predicate: not the other reason of the same HTTP code.
    for (size_t i = 0; i < std::size(kAllPredicates); ++i) {
      EXPECT_EQ(kAllPredicates[i](s), kAllPredicates[i] == row.predicate)
          << "predicate #" << i;
    }

    // The same error read back from its JSON, as a client reads a body.
    rapidjson::Document doc;
    const std::string json = Error(row.http_code, row.reason).ToJson();
    doc.Parse(json.data(), json.size());
    ASSERT_FALSE(doc.HasParseError());
    const absl::Status read = StatusFromObject(doc);
    EXPECT_EQ(read.code(), row.code);
    EXPECT_TRUE(row.predicate(read));

    // A status without payload of that absl code, as a server answers it.
    const StatusError back =
        StatusError::FromStatus(absl::Status(row.code, "plain"));
    EXPECT_EQ(back.reason, row.reason_from_code);
    EXPECT_EQ(back.code, row.http_from_code);
    // ... and the answer maps to the same absl code again, except where the
    // absl code is shared and the server falls back to 500.
    if (back.code != 500 || row.code == absl::StatusCode::kInternal) {
      EXPECT_EQ(back.ToStatus().code(), row.code);
    }
  }
}

TEST(ErrorsTest, UnknownReasonsFallBackToTheHttpCode) {
  struct Case {
    int http_code;
    absl::StatusCode code;
    Predicate predicate;  // null: none
  };
  const Case cases[] = {
      {400, kInvalid, IsBadRequest},
      {401, absl::StatusCode::kUnauthenticated, IsUnauthorized},
      {403, absl::StatusCode::kPermissionDenied, IsForbidden},
      {404, absl::StatusCode::kNotFound, IsNotFound},
      {405, kUnimpl, IsMethodNotSupported},
      {406, kUnimpl, IsNotAcceptable},
      {409, absl::StatusCode::kAborted, IsConflict},
      {410, absl::StatusCode::kOutOfRange, IsGone},
      {413, kInvalid, IsRequestEntityTooLarge},
      {415, kUnimpl, IsUnsupportedMediaType},
      {422, kInvalid, IsInvalid},
      {429, absl::StatusCode::kResourceExhausted, IsTooManyRequests},
      {500, absl::StatusCode::kInternal, IsInternalError},
      {502, absl::StatusCode::kInternal, nullptr},
      {503, absl::StatusCode::kUnavailable, IsServiceUnavailable},
      {504, absl::StatusCode::kDeadlineExceeded, IsTimeout},
      {418, absl::StatusCode::kUnknown, nullptr},
      {302, absl::StatusCode::kUnknown, nullptr},
  };
  for (const Case& c : cases) {
    for (const char* reason : {"", "SomethingNew"}) {
      SCOPED_TRACE(::testing::Message()
                   << c.http_code << " '" << reason << "'");
      const absl::Status s = Error(c.http_code, reason).ToStatus();
      EXPECT_EQ(s.code(), c.code);
      for (Predicate p : kAllPredicates) EXPECT_EQ(p(s), p == c.predicate);
    }
  }
  // A known reason wins over the code: IsNotFound is not fooled by a 404
  // that names another reason.
  EXPECT_FALSE(api::IsNotFound(Error(404, "Gone").ToStatus()));
  EXPECT_TRUE(IsGone(Error(404, "Gone").ToStatus()));
  // Except for the two predicates apimachinery keeps code-based.
  EXPECT_TRUE(IsTooManyRequests(Error(429, "ServerTimeout").ToStatus()));
  EXPECT_TRUE(IsRequestEntityTooLarge(Error(413, "BadRequest").ToStatus()));
}

TEST(ErrorsTest, ReasonsForAnswersWithoutStatus) {
  EXPECT_EQ(ReasonForHttpCode(400), "BadRequest");
  EXPECT_EQ(ReasonForHttpCode(404), "NotFound");
  EXPECT_EQ(ReasonForHttpCode(409), "Conflict");
  EXPECT_EQ(ReasonForHttpCode(410), "Expired");
  EXPECT_EQ(ReasonForHttpCode(413), "RequestEntityTooLarge");
  EXPECT_EQ(ReasonForHttpCode(500), "InternalError");
  EXPECT_EQ(ReasonForHttpCode(502), "InternalError");
  EXPECT_EQ(ReasonForHttpCode(504), "Timeout");
  EXPECT_EQ(ReasonForHttpCode(418), "");
}

TEST(ErrorsTest, StatusesWithoutPayloadAreNotApiErrors) {
  for (const absl::Status& s :
       {absl::NotFoundError("x"), absl::AlreadyExistsError("x"),
        absl::UnavailableError("connection refused"),
        absl::CancelledError("context canceled"),
        absl::DeadlineExceededError("context deadline exceeded"),
        absl::OkStatus()}) {
    EXPECT_FALSE(GetStatusError(s).has_value()) << s;
    EXPECT_EQ(ReasonForError(s), "") << s;
    for (Predicate p : kAllPredicates) EXPECT_FALSE(p(s)) << s;
    EXPECT_EQ(SuggestsClientDelay(s), std::nullopt);
  }
}

// A message may quote bytes a client sent that are not UTF-8 (a name from
// the URL): the Status is still JSON, with U+FFFD for them as Go writes.
TEST(ErrorsTest, BodiesAreUtf8WhateverTheMessageQuotes) {
  StatusError e = StatusError::NotFound({"", "configmaps"}, "a\xff");
  e.causes.push_back({"FieldValueInvalid", "bad \xc3", "metadata.name"});
  EXPECT_EQ(
      e.ToJson(),
      "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
      "\"status\":\"Failure\",\"message\":\"configmaps \\\"a\xef\xbf\xbd\\\" "
      "not found\",\"reason\":\"NotFound\",\"details\":{\"name\":"
      "\"a\xef\xbf\xbd\",\"kind\":\"configmaps\",\"causes\":[{\"reason\":"
      "\"FieldValueInvalid\",\"message\":\"bad \xef\xbf\xbd\",\"field\":"
      "\"metadata.name\"}]},\"code\":404}");
}

TEST(ErrorsTest, BodiesAreWhatKubeApiserverWrites) {
  EXPECT_EQ(
      StatusError::NotFound({"", "configmaps"}, "cm1").ToJson(),
      R"({"kind":"Status","apiVersion":"v1","metadata":{},)"
      R"("status":"Failure","message":"configmaps \"cm1\" not found",)"
      R"("reason":"NotFound","details":{"name":"cm1","kind":"configmaps"},)"
      R"("code":404})");
  EXPECT_EQ(StatusError::NotFound({"apps", "deployments"}, "web").message,
            "deployments.apps \"web\" not found");
  EXPECT_EQ(StatusError::StaleConflict({"", "configmaps"}, "cm1").message,
            "Operation cannot be fulfilled on configmaps \"cm1\": the object "
            "has been modified; please apply your changes to the latest "
            "version and try again");
  EXPECT_EQ(StatusError::Forbidden({"", "pods"}, "", "no").message,
            "pods is forbidden: no");
  EXPECT_EQ(
      StatusError::MethodNotSupported({"apps", "deployments"}, "watch").message,
      "watch is not supported on resources of kind \"deployments.apps\"");
  EXPECT_EQ(
      StatusError::InternalError("boom").ToJson(),
      R"({"kind":"Status","apiVersion":"v1","metadata":{},)"
      R"("status":"Failure","message":"Internal error occurred: boom",)"
      R"("reason":"InternalError","details":{"causes":[{"message":"boom"}]},)"
      R"("code":500})");
  EXPECT_EQ(StatusError::TooManyRequests("slow", 3).ToJson(),
            R"({"kind":"Status","apiVersion":"v1","metadata":{},)"
            R"("status":"Failure","message":"slow","reason":"TooManyRequests",)"
            R"("details":{"retryAfterSeconds":3},"code":429})");
}

TEST(ErrorsTest, InvalidHasACausePerFieldError) {
  FieldError required;
  required.type = FieldError::Type::kRequired;
  required.field = "metadata.name";
  const StatusError one =
      StatusError::Invalid({"", "ConfigMap"}, "x", {required});
  EXPECT_EQ(one.code, 422);
  EXPECT_EQ(one.message,
            "ConfigMap \"x\" is invalid: metadata.name: Required value");
  EXPECT_EQ(one.kind, "ConfigMap");
  ASSERT_EQ(one.causes.size(), 1u);
  EXPECT_EQ(one.causes[0], (StatusCause{"FieldValueRequired", "Required value",
                                        "metadata.name"}));

  FieldError replicas;
  replicas.type = FieldError::Type::kInvalid;
  replicas.field = "spec.replicas";
  replicas.value = "-1";
  replicas.detail = "must be greater than or equal to 0";
  const StatusError two =
      StatusError::Invalid({"apps", "Deployment"}, "web", {required, replicas});
  EXPECT_EQ(
      two.message,
      "Deployment.apps \"web\" is invalid: [metadata.name: Required value, "
      "spec.replicas: Invalid value: -1: must be greater than or equal to 0]");
  EXPECT_EQ(two.causes.size(), 2u);
  EXPECT_EQ(two.group, "apps");
}

TEST(ErrorsTest, EverythingRoundTripsThroughTheStatus) {
  StatusError e = StatusError::Conflict({"apps", "deployments"}, "web", "why");
  e.uid = "u-1";
  e.causes.push_back({"FieldManagerConflict", "conflict with m", ".spec"});
  e.retry_after_seconds = 2;
  const absl::Status s = e.ToStatus();
  std::optional<StatusError> back = GetStatusError(s);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->ToJson(), e.ToJson());
  EXPECT_EQ(StatusError::FromStatus(s).ToJson(), e.ToJson());
  EXPECT_EQ(back->name, "web");
  EXPECT_EQ(back->group, "apps");
  EXPECT_EQ(back->kind, "deployments");
  EXPECT_EQ(back->uid, "u-1");
  EXPECT_EQ(back->retry_after_seconds, 2);
  EXPECT_EQ(back->causes, e.causes);
}

TEST(ErrorsTest, PlainStatusesBecomeTheServersAnswer) {
  const StatusError nf = StatusError::FromStatus(absl::NotFoundError("gone"));
  EXPECT_EQ(
      nf.ToJson(),
      R"({"kind":"Status","apiVersion":"v1","metadata":{},)"
      R"("status":"Failure","message":"gone","reason":"NotFound","code":404})");
  const StatusError other =
      StatusError::FromStatus(absl::ResourceExhaustedError("threads"));
  EXPECT_EQ(other.code, 500);
  EXPECT_EQ(other.message, "Internal error occurred: threads");
}

TEST(ErrorsTest, SuggestsClientDelay) {
  StatusError throttled = StatusError::TooManyRequests("slow", 3);
  EXPECT_EQ(SuggestsClientDelay(throttled.ToStatus()), 3);
  StatusError server_timeout = Error(500, "ServerTimeout");
  server_timeout.retry_after_seconds = 0;
  EXPECT_EQ(SuggestsClientDelay(server_timeout.ToStatus()), 0);
  EXPECT_EQ(SuggestsClientDelay(Error(500, "ServerTimeout").ToStatus()),
            std::nullopt);  // no details
  StatusError unavailable = Error(503, "ServiceUnavailable");
  unavailable.retry_after_seconds = 5;
  EXPECT_EQ(SuggestsClientDelay(unavailable.ToStatus()), 5);
  EXPECT_EQ(SuggestsClientDelay(Error(404, "NotFound").ToStatus()),
            std::nullopt);
}

TEST(ErrorsTest, StatusFromWatchErrorObject) {
  rapidjson::Document d;
  d.Parse(
      R"json({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
      "message":"too old resource version: 100 (200)","reason":"Expired","code":410})json");
  const absl::Status s = StatusFromObject(d);
  EXPECT_TRUE(IsResourceExpired(s));
  EXPECT_EQ(s.code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(s.message(), "too old resource version: 100 (200)");

  rapidjson::Document ok;
  ok.Parse(R"({"kind":"Status","status":"Success","code":200})");
  EXPECT_TRUE(StatusFromObject(ok).ok());

  rapidjson::Document bare;
  bare.Parse(R"({"kind":"Status","reason":"InternalError"})");
  const absl::Status b = StatusFromObject(bare);
  EXPECT_TRUE(IsInternalError(b));
  EXPECT_EQ(b.message(), "InternalError");
  EXPECT_EQ(GetStatusError(b)->code, 500);

  rapidjson::Document not_object;
  not_object.Parse("[1]");
  EXPECT_EQ(StatusFromObject(not_object).code(), absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace api
}  // namespace kcr
