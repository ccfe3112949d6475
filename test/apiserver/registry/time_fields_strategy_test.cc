// Timestamps of built-in kinds, through the registry as requests reach
// them.
#include "apiserver/registry/time_fields_strategy.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/apiserver/registry_fixture.h"

namespace kcr::apiserver {
namespace {

using ::testing::HasSubstr;

class TimeFieldsStrategyTest : public RegistryFixture {
 protected:
  TimeFieldsStrategyTest()
      : leases_(Resource("coordination.k8s.io", "v1", "leases")),
        events_(Resource("", "v1", "events")) {}

  ResourceInfoPtr leases_;
  ResourceInfoPtr events_;
};

TEST_F(TimeFieldsStrategyTest, LeaseMicroTimesAreStoredInUtcWithMicroseconds) {
  absl::StatusOr<WriteResult> created = registry_.Create(
      *leases_, "default",
      FromJson(R"({"metadata":{"name":"l"},"spec":{"holderIdentity":"a",)"
               R"("acquireTime":"2026-11-24T22:00:00.5+01:00",)"
               R"("renewTime":"2026-11-24T21:00:01.123456Z"}})"));
  ASSERT_TRUE(created.ok()) << created.status();
  const std::string json = created->object->ToJson();
  EXPECT_THAT(json,
              HasSubstr(R"("acquireTime":"2026-11-24T21:00:00.500000Z")"));
  EXPECT_THAT(json, HasSubstr(R"("renewTime":"2026-11-24T21:00:01.123456Z")"));
  absl::StatusOr<WriteResult> patched =
      registry_.Patch(*leases_, "default", "l", api::PatchType::kMerge,
                      R"({"spec":{"renewTime":"2026-11-24T16:00:02-05:00"}})");
  ASSERT_TRUE(patched.ok()) << patched.status();
  EXPECT_THAT(patched->object->ToJson(),
              HasSubstr(R"("renewTime":"2026-11-24T21:00:02.000000Z")"));
}

TEST_F(TimeFieldsStrategyTest, EventTimesAreWholeSecondsAndMicroTimes) {
  absl::StatusOr<WriteResult> created = registry_.Create(
      *events_, "default",
      FromJson(R"({"metadata":{"name":"e"},"involvedObject":{},)"
               R"("reason":"R","firstTimestamp":"2026-11-24T21:00:00.9Z",)"
               R"("lastTimestamp":"2026-11-24T23:00:00+02:00",)"
               R"("eventTime":"2026-11-24T21:00:00.25Z"})"));
  ASSERT_TRUE(created.ok()) << created.status();
  const std::string json = created->object->ToJson();
  EXPECT_THAT(json, HasSubstr(R"("firstTimestamp":"2026-11-24T21:00:00Z")"));
  EXPECT_THAT(json, HasSubstr(R"("lastTimestamp":"2026-11-24T21:00:00Z")"));
  EXPECT_THAT(json, HasSubstr(R"("eventTime":"2026-11-24T21:00:00.250000Z")"));
}

TEST_F(TimeFieldsStrategyTest, NotATimeIsRefused) {
  absl::StatusOr<WriteResult> created = registry_.Create(
      *leases_, "default",
      FromJson(R"({"metadata":{"name":"l"},"spec":{"renewTime":"soon"}})"));
  ASSERT_FALSE(created.ok());
  EXPECT_THAT(std::string(created.status().message()),
              HasSubstr("spec.renewTime: Invalid value: \"soon\""));
  EXPECT_FALSE(registry_.Get(*leases_, "default", "l").ok());
}

// Times already in the stored form are kept as sent; ones that only look
// like it (a day the month does not have, an hour past 23)
// still go through the full parse, as any other text.
TEST_F(TimeFieldsStrategyTest, FormattedTimesAreKeptAndLookalikesParsed) {
  absl::StatusOr<WriteResult> created = registry_.Create(
      *events_, "default",
      FromJson(R"({"metadata":{"name":"e"},"involvedObject":{},)"
               R"("reason":"R","firstTimestamp":"2024-02-29T23:59:59Z",)"
               R"("lastTimestamp":"2026-11-24T21:00:00.000000Z",)"
               R"("eventTime":"2026-11-24T21:00:00.123456Z"})"));
  ASSERT_TRUE(created.ok()) << created.status();
  const std::string json = created->object->ToJson();
  EXPECT_THAT(json, HasSubstr(R"("firstTimestamp":"2024-02-29T23:59:59Z")"));
  EXPECT_THAT(json, HasSubstr(R"("lastTimestamp":"2026-11-24T21:00:00Z")"));
  EXPECT_THAT(json, HasSubstr(R"("eventTime":"2026-11-24T21:00:00.123456Z")"));

  for (const char* bad : {"2026-02-29T00:00:00Z", "2026-13-01T00:00:00Z",
                          "2026-11-31T00:00:00Z", "2026-11-24T25:00:00Z",
                          "2026-11-24T21:60:00Z", "2026-1a-24T21:00:00Z"}) {
    absl::StatusOr<WriteResult> refused = registry_.Create(
        *leases_, "default",
        FromJson(absl::StrCat(R"({"metadata":{"name":"bad"},"spec":{)",
                              R"("renewTime":")", bad, R"("}})")));
    EXPECT_FALSE(refused.ok()) << bad;
  }
}

}  // namespace
}  // namespace kcr::apiserver
