#include "apiserver/internal/duration.h"

#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace kcr::apiserver {
namespace {

TEST(HumanDurationTest, MatchesApimachinery) {
  const auto h = [](absl::Duration d) { return HumanDuration(d); };
  EXPECT_EQ(h(absl::Seconds(-2)), "<invalid>");
  EXPECT_EQ(h(absl::Milliseconds(-1500)), "0s");
  EXPECT_EQ(h(absl::Seconds(0)), "0s");
  EXPECT_EQ(h(absl::Seconds(5)), "5s");
  EXPECT_EQ(h(absl::Seconds(119)), "119s");
  EXPECT_EQ(h(absl::Seconds(120)), "2m");
  EXPECT_EQ(h(absl::Seconds(125)), "2m5s");
  EXPECT_EQ(h(absl::Minutes(3)), "3m");
  EXPECT_EQ(h(absl::Minutes(10) + absl::Seconds(30)), "10m");
  EXPECT_EQ(h(absl::Minutes(179)), "179m");
  EXPECT_EQ(h(absl::Hours(3)), "3h");
  EXPECT_EQ(h(absl::Hours(5)), "5h");
  EXPECT_EQ(h(absl::Hours(5) + absl::Minutes(7)), "5h7m");
  EXPECT_EQ(h(absl::Hours(8) + absl::Minutes(7)), "8h");
  EXPECT_EQ(h(absl::Hours(47)), "47h");
  EXPECT_EQ(h(absl::Hours(48)), "2d");
  EXPECT_EQ(h(absl::Hours(3 * 24 + 4)), "3d4h");
  EXPECT_EQ(h(absl::Hours(8 * 24 + 4)), "8d");
  EXPECT_EQ(h(absl::Hours(24 * 729)), "729d");
  EXPECT_EQ(h(absl::Hours(24 * 730)), "2y");
  EXPECT_EQ(h(absl::Hours(24 * 760)), "2y30d");
  EXPECT_EQ(h(absl::Hours(24 * 365 * 9 + 24 * 40)), "9y");
}

}  // namespace
}  // namespace kcr::apiserver
