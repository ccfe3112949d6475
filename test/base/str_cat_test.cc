#include "base/str_cat.h"

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"

namespace kcr {
namespace {

TEST(CatTest, NothingIsEmpty) { EXPECT_EQ(Cat(), ""); }

TEST(CatTest, EveryKindOfStringInOrder) {
  const std::string s = "std::string";
  const std::string_view sv = "std::string_view";
  const absl::string_view asv = "absl::string_view";
  const char* cs = "const char*";
  EXPECT_EQ(Cat(s, "|", sv, "|", asv, "|", cs, '|', "literal"),
            "std::string|std::string_view|absl::string_view|const "
            "char*|literal");
}

TEST(CatTest, ViewsAreNotReadPastTheirEnd) {
  const std::string_view prefix =
      std::string_view("namespace/name").substr(0, 9);
  EXPECT_EQ(Cat(prefix, "/x"), "namespace/x");
  const absl::string_view absl_prefix =
      absl::string_view("namespace/name").substr(0, 9);
  EXPECT_EQ(Cat(absl_prefix, "/x"), "namespace/x");
}

TEST(CatTest, IntegersInDecimalCharsAsThemselves) {
  EXPECT_EQ(Cat('a', 1, 'b'), "a1b");
  EXPECT_EQ(Cat(int64_t{-9000000000}, " ", uint32_t{42}, " ", size_t{0}),
            "-9000000000 42 0");
  EXPECT_EQ(Cat(static_cast<short>(-3), static_cast<unsigned char>(7)), "-37");
}

TEST(CatTest, EmptyPiecesAddNothing) {
  EXPECT_EQ(
      Cat("", std::string(), std::string_view(), absl::string_view(), "x"),
      "x");
}

TEST(CatAppendTest, AppendsToWhatIsThere) {
  std::string out = "/api/v1";
  const std::string_view ns = "default";
  CatAppend(&out, "/namespaces/", ns, "/", std::string("pods"), '?',
            "limit=", 500);
  EXPECT_EQ(out, "/api/v1/namespaces/default/pods?limit=500");
  CatAppend(&out);
  EXPECT_EQ(out, "/api/v1/namespaces/default/pods?limit=500");
}

}  // namespace
}  // namespace kcr
