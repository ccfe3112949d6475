#include "api/meta/percent_decode.h"

#include "gtest/gtest.h"

namespace kcr {
namespace api {
namespace {

TEST(PercentDecodeTest, DecodesHexPairs) {
  EXPECT_EQ(PercentDecode("system%3Anode%3aa", false), "system:node:a");
  EXPECT_EQ(PercentDecode("%41", false), "A");
  EXPECT_EQ(PercentDecode("a%2Fb%20c", false), "a/b c");
}

TEST(PercentDecodeTest, KeepsWhatIsNotAnEscape) {
  EXPECT_EQ(PercentDecode("100%", false), "100%");
  EXPECT_EQ(PercentDecode("%4", false), "%4");
  EXPECT_EQ(PercentDecode("%zz%41", false), "%zzA");
}

TEST(PercentDecodeTest, PlusIsASpaceOnlyInQueries) {
  EXPECT_EQ(PercentDecode("a+b", true), "a b");
  EXPECT_EQ(PercentDecode("a+b", false), "a+b");
  EXPECT_EQ(PercentDecode("a%2Bb", true), "a+b");
}

}  // namespace
}  // namespace api
}  // namespace kcr
