#include "runtime/metrics/healthz.h"

#include <atomic>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/runtime/metrics/raw_http.h"

namespace kcr::metrics {
namespace {

using ::kcr::metrics::testing::Body;
using ::kcr::metrics::testing::Get;
using ::testing::StartsWith;

HttpGet Aggregate(std::string query = "") {
  HttpGet get;
  get.path = "/healthz";
  get.query = std::move(query);
  return get;
}

TEST(HealthChecksTest, NoChecksIsPing) {
  HealthChecks checks;
  HttpReply r = checks.Answer(Aggregate(), "");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "ok");
  r = checks.Answer(Aggregate("verbose"), "");
  EXPECT_EQ(r.body, "[+]ping ok\nhealthz check passed\n");
  EXPECT_EQ(checks.Answer(Aggregate(), "ping").status, 200);
  EXPECT_EQ(checks.Answer(Aggregate(), "other").status, 404);
}

TEST(HealthChecksTest, FailureListsEveryCheckAndWithholdsReasons) {
  HealthChecks checks;
  ASSERT_TRUE(
      checks
          .Add("b-sync",
               [] { return absl::UnavailableError("caches not synced"); })
          .ok());
  ASSERT_TRUE(checks.Add("a-ping", [] { return absl::OkStatus(); }).ok());
  HttpReply r = checks.Answer(Aggregate(), "");
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.body,
            "[+]a-ping ok\n[-]b-sync failed: reason withheld\n"
            "healthz check failed\n");
  r = checks.Answer(Aggregate(), "b-sync");
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.body, "internal server error: caches not synced\n");
  r = checks.Answer(Aggregate(), "a-ping");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "ok");
}

TEST(HealthChecksTest, ADetailIsShownInTheVerboseListAndOnItsOwnPath) {
  HealthChecks checks;
  std::atomic<bool> up{true};
  ASSERT_TRUE(checks
                  .AddWithDetail("db",
                                 [&]() -> absl::StatusOr<std::string> {
                                   if (!up) return absl::UnavailableError("x");
                                   return std::string("{\"rows\":\n42}");
                                 })
                  .ok());
  ASSERT_TRUE(checks.Add("ping", [] { return absl::OkStatus(); }).ok());
  ASSERT_TRUE(checks
                  .AddWithDetail("quiet",
                                 []() -> absl::StatusOr<std::string> {
                                   return std::string();
                                 })
                  .ok());
  HttpReply r = checks.Answer(Aggregate(), "");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "ok");
  r = checks.Answer(Aggregate("verbose"), "");
  EXPECT_EQ(r.body,
            "[+]db ok: {\"rows\": 42}\n[+]ping ok\n[+]quiet ok\n"
            "healthz check passed\n");
  r = checks.Answer(Aggregate(), "db");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "{\"rows\": 42}");
  EXPECT_EQ(checks.Answer(Aggregate(), "quiet").body, "ok");
  up = false;
  r = checks.Answer(Aggregate("verbose"), "");
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.body,
            "[-]db failed: reason withheld\n[+]ping ok\n[+]quiet ok\n"
            "healthz check failed\n");
  EXPECT_EQ(checks.Answer(Aggregate(), "db").status, 500);
  EXPECT_EQ(checks.AddWithDetail("a/b", nullptr).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(HealthChecksTest, ExcludeSkipsAndWarnsAboutUnknownNames) {
  HealthChecks checks;
  ASSERT_TRUE(checks.Add("bad", [] { return absl::InternalError("x"); }).ok());
  HttpReply r = checks.Answer(Aggregate("exclude=bad"), "");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "ok");
  r = checks.Answer(Aggregate("exclude=bad&exclude=nope&verbose"), "");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body,
            "[+]bad excluded: ok\nwarn: some health checks cannot be "
            "excluded: no matches for \"nope\"\nhealthz check passed\n");
}

TEST(HealthChecksTest, BadNamesAreRefused) {
  HealthChecks checks;
  EXPECT_FALSE(checks.Add("", [] { return absl::OkStatus(); }).ok());
  EXPECT_FALSE(checks.Add("a/b", [] { return absl::OkStatus(); }).ok());
}

TEST(HealthChecksTest, ServedOverHttpAndFlipsWithItsCheck) {
  auto endpoint = HttpEndpoint::Create({.bind_address = "127.0.0.1:0"});
  ASSERT_TRUE(endpoint.ok()) << endpoint.status();
  HealthChecks ready;
  std::atomic<bool> synced{false};
  ASSERT_TRUE(ready
                  .Add("informer-sync",
                       [&] {
                         return synced.load()
                                    ? absl::OkStatus()
                                    : absl::UnavailableError("not synced");
                       })
                  .ok());
  ready.ServeOn(**endpoint, "/readyz");
  (*endpoint)->Start();
  const int port = (*endpoint)->port();
  EXPECT_THAT(Get(port, "/readyz"),
              StartsWith("HTTP/1.1 500 Internal Server Error\r\n"));
  EXPECT_THAT(Get(port, "/readyz/informer-sync"), StartsWith("HTTP/1.1 500"));
  synced = true;
  EXPECT_EQ(Body(Get(port, "/readyz")), "ok");
  EXPECT_EQ(Body(Get(port, "/readyz/informer-sync")), "ok");
  EXPECT_THAT(Get(port, "/readyz/nope"), StartsWith("HTTP/1.1 404"));
}

}  // namespace
}  // namespace kcr::metrics
