#include "api/types/time.h"

#include "gtest/gtest.h"

namespace kcr {
namespace api {
namespace {

TEST(TimeTest, FormatsAndParses) {
  absl::Time t = absl::FromUnixMicros(1795341600123456);  // 2026-11-22
  EXPECT_EQ(FormatRfc3339(t), "2026-11-22T10:00:00Z");
  EXPECT_EQ(FormatRfc3339Micro(t), "2026-11-22T10:00:00.123456Z");
  EXPECT_EQ(FormatRfc3339Micro(absl::FromUnixSeconds(1795341600)),
            "2026-11-22T10:00:00.000000Z");
  absl::StatusOr<absl::Time> parsed = ParseTime("2026-11-22T10:00:00.123456Z");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(*parsed, t);
  parsed = ParseTime("2026-11-22T12:00:00+02:00");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(*parsed, absl::FromUnixSeconds(1795341600));
  EXPECT_FALSE(ParseTime("yesterday").ok());
  EXPECT_FALSE(ParseTime("").ok());
}

}  // namespace
}  // namespace api
}  // namespace kcr
