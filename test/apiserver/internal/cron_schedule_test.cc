#include "apiserver/internal/cron_schedule.h"

#include <string>

#include "absl/time/time.h"
#include "api/types/time.h"
#include "gtest/gtest.h"

namespace kcr {
namespace apiserver {
namespace {

absl::Time At(const std::string& rfc3339) {
  absl::StatusOr<absl::Time> t = api::ParseTime(rfc3339);
  EXPECT_TRUE(t.ok()) << rfc3339;
  return t.ok() ? *t : absl::InfinitePast();
}

std::string Next(const std::string& spec, const std::string& after,
                 const absl::TimeZone& zone = absl::UTCTimeZone()) {
  absl::StatusOr<CronSchedule> s = CronSchedule::Parse(spec);
  EXPECT_TRUE(s.ok()) << spec << ": " << s.status();
  if (!s.ok()) return "";
  const absl::Time next = s->Next(At(after), zone);
  if (next == absl::InfiniteFuture()) return "never";
  return api::FormatRfc3339(next);
}

std::string Error(const std::string& spec) {
  absl::StatusOr<CronSchedule> s = CronSchedule::Parse(spec);
  return s.ok() ? "" : std::string(s.status().message());
}

TEST(CronScheduleTest, NextMinuteHourAndDay) {
  EXPECT_EQ(Next("* * * * *", "2024-05-01T10:00:00Z"), "2024-05-01T10:01:00Z");
  EXPECT_EQ(Next("* * * * *", "2024-05-01T10:00:30Z"), "2024-05-01T10:01:00Z");
  EXPECT_EQ(Next("*/15 * * * *", "2024-05-01T10:14:59Z"),
            "2024-05-01T10:15:00Z");
  EXPECT_EQ(Next("30 2 * * *", "2024-05-01T10:00:00Z"), "2024-05-02T02:30:00Z");
  EXPECT_EQ(Next("0 0 1 jan *", "2024-05-01T10:00:00Z"),
            "2025-01-01T00:00:00Z");
  EXPECT_EQ(Next("0 9-17/4 * * mon-fri", "2024-05-03T17:00:00Z"),  // a Friday
            "2024-05-06T09:00:00Z");
  EXPECT_EQ(Next("0 0 29 2 *", "2024-03-01T00:00:00Z"), "2028-02-29T00:00:00Z");
  EXPECT_EQ(Next("0 0 30 2 *", "2024-03-01T00:00:00Z"), "never");
}

TEST(CronScheduleTest, DayOfMonthOrDayOfWeekUnlessOneIsStar) {
  // Both restricted: either matches (the 13th, or a Friday).
  EXPECT_EQ(Next("0 0 13 * 5", "2024-05-01T00:00:00Z"), "2024-05-03T00:00:00Z");
  // Day of week is *: the 13th only.
  EXPECT_EQ(Next("0 0 13 * *", "2024-05-01T00:00:00Z"), "2024-05-13T00:00:00Z");
  // */1 keeps the star; */2 does not.
  EXPECT_EQ(Next("0 0 13 * */1", "2024-05-01T00:00:00Z"),
            "2024-05-13T00:00:00Z");
}

TEST(CronScheduleTest, Descriptors) {
  EXPECT_EQ(Next("@hourly", "2024-05-01T10:20:00Z"), "2024-05-01T11:00:00Z");
  EXPECT_EQ(Next("@daily", "2024-05-01T10:20:00Z"), "2024-05-02T00:00:00Z");
  EXPECT_EQ(Next("@midnight", "2024-05-01T10:20:00Z"), "2024-05-02T00:00:00Z");
  EXPECT_EQ(Next("@weekly", "2024-05-01T10:20:00Z"), "2024-05-05T00:00:00Z");
  EXPECT_EQ(Next("@monthly", "2024-05-01T10:20:00Z"), "2024-06-01T00:00:00Z");
  EXPECT_EQ(Next("@yearly", "2024-05-01T10:20:00Z"), "2025-01-01T00:00:00Z");
  EXPECT_EQ(Next("@annually", "2024-05-01T10:20:00Z"), "2025-01-01T00:00:00Z");
  EXPECT_EQ(Next("@every 90s", "2024-05-01T10:20:00Z"), "2024-05-01T10:21:30Z");
  EXPECT_EQ(Next("@every 1h30m", "2024-05-01T10:20:00Z"),
            "2024-05-01T11:50:00Z");
}

TEST(CronScheduleTest, TimeZones) {
  absl::TimeZone berlin;
  ASSERT_TRUE(absl::LoadTimeZone("Europe/Berlin", &berlin));
  // 09:00 in Berlin (UTC+2 in May).
  EXPECT_EQ(Next("0 9 * * *", "2024-05-01T10:00:00Z", berlin),
            "2024-05-02T07:00:00Z");
  EXPECT_EQ(Next("CRON_TZ=Europe/Berlin 0 9 * * *", "2024-05-01T10:00:00Z"),
            "2024-05-02T07:00:00Z");
  EXPECT_EQ(Next("TZ=America/New_York 0 9 * * *", "2024-05-01T10:00:00Z"),
            "2024-05-01T13:00:00Z");
  // The prefix wins over the zone given.
  EXPECT_EQ(Next("TZ=UTC 0 9 * * *", "2024-05-01T10:00:00Z", berlin),
            "2024-05-02T09:00:00Z");
  // 02:30 does not exist in Berlin on 2024-03-31: skipped.
  EXPECT_EQ(Next("30 2 * * *", "2024-03-30T12:00:00Z", berlin),
            "2024-04-01T00:30:00Z");
  EXPECT_TRUE(CronSchedule::Parse("TZ=UTC * * * * *")->has_zone_prefix());
  EXPECT_FALSE(CronSchedule::Parse("* * * * *")->has_zone_prefix());
  EXPECT_TRUE(LoadCronTimeZone("Asia/Tokyo").ok());
  EXPECT_EQ(LoadCronTimeZone("Mars/Olympus").status().message(),
            "unknown time zone Mars/Olympus");
}

TEST(CronScheduleTest, Errors) {
  EXPECT_EQ(Error(""), "empty spec string");
  EXPECT_EQ(Error("* * * *"), "expected exactly 5 fields, found 4: [* * * *]");
  EXPECT_EQ(Error("60 * * * *"), "end of range (60) above maximum (59): 60");
  EXPECT_EQ(Error("@often"), "unrecognized descriptor: @often");
  EXPECT_EQ(Error("TZ=Mars/Olympus * * * * *"),
            "provided bad location Mars/Olympus: unknown time zone "
            "Mars/Olympus");
  EXPECT_EQ(Error("* * * * mon-sun/x"),
            "failed to parse int from x: strconv.Atoi: parsing \"x\": invalid "
            "syntax");
}

}  // namespace
}  // namespace apiserver
}  // namespace kcr
