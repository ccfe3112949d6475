#include "runtime/client/token_source.h"

#include <filesystem>
#include <string>

#include "gtest/gtest.h"
#include "test/fakes/fake_clock.h"
#include "test/runtime/client/test_util.h"

namespace kcr::client {
namespace {

using ::kcr::client::testing::MakeTempDir;
using ::kcr::client::testing::WriteFile;

class TokenSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = MakeTempDir("t") + "/token";
    WriteFile(path_, "one\n");
  }
  std::string path_;
  kcr::testing::FakeClock clock_;
};

TEST_F(TokenSourceTest, ReReadsOncePerMinute) {
  CachedFileTokenSource source(path_, "", &clock_);
  EXPECT_EQ(*source.Token(), "one");
  WriteFile(path_, "two");
  clock_.Advance(absl::Seconds(59));
  EXPECT_EQ(*source.Token(), "one");  // cached
  EXPECT_EQ(source.reads(), 1);
  clock_.Advance(absl::Seconds(1));
  EXPECT_EQ(*source.Token(), "two");
  EXPECT_EQ(source.reads(), 2);
  EXPECT_EQ(*source.Token(), "two");
  EXPECT_EQ(source.reads(), 2);
}

TEST_F(TokenSourceTest, UnauthorizedForcesReReadAtOnce) {
  CachedFileTokenSource source(path_, "", &clock_);
  absl::Time request_start = clock_.Now();
  EXPECT_EQ(*source.Token(), "one");
  WriteFile(path_, "two");
  clock_.Advance(absl::Seconds(1));
  source.Invalidate(request_start);
  EXPECT_EQ(*source.Token(), "two");
  EXPECT_EQ(source.reads(), 2);
}

TEST_F(TokenSourceTest, UnauthorizedForAnOlderRequestKeepsANewerToken) {
  CachedFileTokenSource source(path_, "", &clock_);
  absl::Time old_request = clock_.Now() - absl::Seconds(5);
  EXPECT_EQ(*source.Token(), "one");
  source.Invalidate(old_request);  // sent before this token was read
  EXPECT_EQ(*source.Token(), "one");
  EXPECT_EQ(source.reads(), 1);
}

TEST_F(TokenSourceTest, MissingFileKeepsPreviousTokenThenFallback) {
  CachedFileTokenSource source(path_, "", &clock_);
  EXPECT_EQ(*source.Token(), "one");
  std::filesystem::remove(path_);
  clock_.Advance(absl::Minutes(2));
  EXPECT_EQ(*source.Token(), "one");

  CachedFileTokenSource with_fallback(path_ + ".x", "static", &clock_);
  EXPECT_EQ(*with_fallback.Token(), "static");

  CachedFileTokenSource nothing(path_ + ".x", "", &clock_);
  auto t = nothing.Token();
  EXPECT_EQ(t.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_NE(t.status().message().find(path_ + ".x"), std::string::npos);
}

TEST_F(TokenSourceTest, EmptyFileIsNotAToken) {
  WriteFile(path_, "  \n");
  CachedFileTokenSource source(path_, "", &clock_);
  EXPECT_FALSE(source.Token().ok());
  WriteFile(path_, "three");
  EXPECT_EQ(*source.Token(), "three");  // nothing cached: read again
}

}  // namespace
}  // namespace kcr::client
