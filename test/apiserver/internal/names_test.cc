// Generated uids and names.
#include "apiserver/internal/names.h"

#include <string>

#include "gtest/gtest.h"

namespace kcr::apiserver {
namespace {

// A random (version 4, RFC 4122 variant) UUID in lower-case hex, as
// kube-apiserver's uuid.NewUUID gives.
TEST(NamesTest, NewUidIsARandomUuid) {
  const std::string hex = "0123456789abcdef";
  std::string previous;
  for (int n = 0; n < 200; ++n) {
    const std::string uid = NewUid();
    ASSERT_EQ(uid.size(), 36u) << uid;
    for (size_t i = 0; i < uid.size(); ++i) {
      if (i == 8 || i == 13 || i == 18 || i == 23) {
        EXPECT_EQ(uid[i], '-') << uid;
      } else {
        EXPECT_NE(hex.find(uid[i]), std::string::npos) << uid;
      }
    }
    EXPECT_EQ(uid[14], '4') << uid;
    EXPECT_NE(std::string("89ab").find(uid[19]), std::string::npos) << uid;
    EXPECT_NE(uid, previous);
    previous = uid;
  }
}

TEST(NamesTest, GenerateNameAddsFiveCharacters) {
  EXPECT_EQ(GenerateName("web-").size(), 9u);
  EXPECT_EQ(GenerateName(std::string(70, 'a')).size(), 63u);
}

}  // namespace
}  // namespace kcr::apiserver
