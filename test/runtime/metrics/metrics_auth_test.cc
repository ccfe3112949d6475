#include "runtime/metrics/metrics_auth.h"

#include <string>

#include "absl/container/flat_hash_map.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/fakes/fake_clock.h"

namespace kcr::metrics {
namespace {

using ::kcr::testing::FakeClock;
using ::testing::HasSubstr;

// Tokens "alice" (may read /metrics), "bob" (may not) and "broken" (the
// server cannot be reached); anything else does not authenticate.
class FakeReviewer : public AccessReviewer {
 public:
  absl::StatusOr<std::optional<UserInfo>> ReviewToken(
      const std::string& token) override {
    ++token_calls;
    if (token == "broken") return absl::UnavailableError("connection refused");
    if (token != "alice" && token != "bob") return std::optional<UserInfo>();
    UserInfo u;
    u.username =
        token == "alice" ? "system:serviceaccount:mon:prometheus" : "bob";
    u.groups = {"system:authenticated"};
    return std::optional<UserInfo>(u);
  }
  absl::StatusOr<bool> ReviewAccess(const UserInfo& user,
                                    const std::string& verb,
                                    const std::string& path) override {
    ++access_calls;
    last_verb = verb;
    last_path = path;
    if (fail_access) return absl::InternalError("etcd is away");
    return user.username != "bob" && verb == "get" && path == "/metrics";
  }
  int token_calls = 0;
  int access_calls = 0;
  bool fail_access = false;
  std::string last_verb, last_path;
};

HttpGet Request(std::string authorization, bool head = false) {
  HttpGet get;
  get.path = "/metrics";
  get.head = head;
  get.authorization = std::move(authorization);
  return get;
}

class MetricsAuthTest : public ::testing::Test {
 protected:
  HttpReply Serve(const std::string& authorization, bool head = false) {
    return handler_(Request(authorization, head));
  }

  FakeReviewer reviewer_;
  FakeClock clock_;
  MetricsAuth auth_{&reviewer_, &clock_};
  HttpEndpoint::Handler handler_ = auth_.Protect([](const HttpGet&) {
    return HttpReply{200, "text/plain", "metrics"};
  });
};

TEST_F(MetricsAuthTest, AllowsOnlyAnAuthorisedToken) {
  HttpReply r = Serve("Bearer alice");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "metrics");
  EXPECT_EQ(reviewer_.last_verb, "get");
  EXPECT_EQ(reviewer_.last_path, "/metrics");

  r = Serve("Bearer bob");
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(r.body, "Authorization denied for user bob\n");

  r = Serve("Bearer mallory");
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(r.body, "Unauthorized\n");
}

TEST_F(MetricsAuthTest, MalformedOrMissingCredentialsAre401) {
  for (const std::string& header : std::vector<std::string>{
           "", "Bearer", "Bearer ", "Basic YWxpY2U6eA==", "alice",
           "Bearer  alice", "Bearer\talice", std::string(64 << 10, 'x'),
           "Bearer " + std::string(64 << 10, 'a')}) {
    HttpReply r = Serve(header);
    EXPECT_EQ(r.status, 401) << header.substr(0, 40);
    EXPECT_EQ(r.body, "Unauthorized\n");
  }
  // As kube reads the header: the scheme in any case, the second word.
  EXPECT_EQ(Serve("bearer alice").status, 200);
  EXPECT_EQ(Serve(" BEARER alice extra ").status, 200);
}

TEST_F(MetricsAuthTest, HeadIsAuthorisedAsItsOwnVerb) {
  EXPECT_EQ(Serve("Bearer alice", /*head=*/true).status, 403);
  EXPECT_EQ(reviewer_.last_verb, "head");
}

TEST_F(MetricsAuthTest, CachesReviewsForTheirTtl) {
  ASSERT_EQ(Serve("Bearer alice").status, 200);
  ASSERT_EQ(Serve("Bearer alice").status, 200);
  EXPECT_EQ(reviewer_.token_calls, 1);
  EXPECT_EQ(reviewer_.access_calls, 1);
  // The token's review lasts a minute, the allowed access five.
  clock_.Advance(absl::Seconds(61));
  ASSERT_EQ(Serve("Bearer alice").status, 200);
  EXPECT_EQ(reviewer_.token_calls, 2);
  EXPECT_EQ(reviewer_.access_calls, 1);
  clock_.Advance(absl::Minutes(5));
  ASSERT_EQ(Serve("Bearer alice").status, 200);
  EXPECT_EQ(reviewer_.access_calls, 2);

  // A denial lasts 30 seconds.
  ASSERT_EQ(Serve("Bearer bob").status, 403);
  ASSERT_EQ(Serve("Bearer bob").status, 403);
  EXPECT_EQ(reviewer_.access_calls, 3);
  clock_.Advance(absl::Seconds(31));
  ASSERT_EQ(Serve("Bearer bob").status, 403);
  EXPECT_EQ(reviewer_.access_calls, 4);

  // An unknown token's review is cached too.
  const int before = reviewer_.token_calls;
  Serve("Bearer mallory");
  Serve("Bearer mallory");
  EXPECT_EQ(reviewer_.token_calls, before + 1);
  EXPECT_EQ(auth_.token_reviews(), reviewer_.token_calls);
  EXPECT_EQ(auth_.access_reviews(), reviewer_.access_calls);
}

TEST_F(MetricsAuthTest, FailedReviewsAre500AndNotCached) {
  HttpReply r = Serve("Bearer broken");
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.body, "Authentication failed\n");
  Serve("Bearer broken");
  EXPECT_EQ(reviewer_.token_calls, 2);

  reviewer_.fail_access = true;
  r = Serve("Bearer alice");
  EXPECT_EQ(r.status, 500);
  EXPECT_THAT(r.body, HasSubstr("Authorization for user "
                                "system:serviceaccount:mon:prometheus failed"));
  reviewer_.fail_access = false;
  EXPECT_EQ(Serve("Bearer alice").status, 200);
}

TEST_F(MetricsAuthTest, AFloodOfTokensDoesNotGrowTheCache) {
  MetricsAuthOptions options;
  options.max_entries = 8;
  MetricsAuth small(&reviewer_, &clock_, options);
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(small.Check(Request("Bearer t" + std::to_string(i)))->status,
              401);
  }
  // Still answers, and still caches.
  EXPECT_FALSE(small.Check(Request("Bearer alice")).has_value());
  const int calls = reviewer_.token_calls;
  EXPECT_FALSE(small.Check(Request("Bearer alice")).has_value());
  EXPECT_EQ(reviewer_.token_calls, calls);
}

}  // namespace
}  // namespace kcr::metrics
