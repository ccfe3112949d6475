#include "runtime/client/exec_credential.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "test/fakes/fake_clock.h"
#include "test/runtime/client/test_util.h"

namespace kcr::client {
namespace {

using ::kcr::client::testing::MakeTempDir;
using ::kcr::client::testing::ReadFileOrDie;
using ::kcr::client::testing::TestdataPath;
using ::testing::HasSubstr;

constexpr char kV1[] = "client.authentication.k8s.io/v1";

class ExecCredentialTest : public ::testing::Test {
 protected:
  void SetUp() override { state_ = MakeTempDir("state"); }
  ExecConfig Config(const std::string& mode) {
    ExecConfig c;
    c.api_version = kV1;
    c.command = TestdataPath("exec_plugin.sh");
    c.args = {state_, mode};
    c.env = {{"EXTRA_VAR", "extra-value"}};
    return c;
  }
  int Runs() { return std::stoi(ReadFileOrDie(state_ + "/count")); }
  std::string state_;
  kcr::testing::FakeClock clock_;
};

TEST_F(ExecCredentialTest, RunsPluginAndCachesWithoutExpiry) {
  ExecClusterInfo cluster{"https://k:6443", "", false, ""};
  ExecCredentialProvider p(Config("ok"), cluster, &clock_);
  auto c = p.Get();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->token, "exec-token-1");
  EXPECT_FALSE(c->expiration.has_value());
  clock_.Advance(absl::Hours(100));
  EXPECT_EQ(p.Get()->token, "exec-token-1");
  EXPECT_EQ(p.runs(), 1);
  EXPECT_EQ(Runs(), 1);
  EXPECT_EQ(ReadFileOrDie(state_ + "/extra"), "extra-value");
  rapidjson::Document info;
  info.Parse(ReadFileOrDie(state_ + "/info").c_str());
  ASSERT_TRUE(info.IsObject());
  EXPECT_STREQ(info["kind"].GetString(), "ExecCredential");
  EXPECT_STREQ(info["apiVersion"].GetString(), kV1);
  EXPECT_FALSE(info["spec"]["interactive"].GetBool());
  EXPECT_FALSE(info["spec"].HasMember("cluster"));
}

TEST_F(ExecCredentialTest, ReRunsAfterExpiry) {
  // The fake clock starts at 1700000000 (2023-11-14T22:13:20Z); the
  // credential expires ten minutes later.
  setenv("EXEC_EXPIRY", "2023-11-14T22:23:20Z", 1);
  ExecCredentialProvider p(Config("ok"), {}, &clock_);
  auto c = p.Get();
  unsetenv("EXEC_EXPIRY");
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE(c->expiration.has_value());
  EXPECT_EQ(*c->expiration, absl::FromUnixSeconds(1700000600));
  clock_.Advance(absl::Minutes(9));
  EXPECT_EQ(p.Get()->token, "exec-token-1");
  clock_.Advance(absl::Minutes(1));
  EXPECT_EQ(p.Get()->token, "exec-token-2");
  EXPECT_EQ(p.runs(), 2);
}

TEST_F(ExecCredentialTest, InvalidateAfterUnauthorizedReRuns) {
  ExecCredentialProvider p(Config("ok"), {}, &clock_);
  absl::Time start = clock_.Now();
  EXPECT_EQ(p.Get()->token, "exec-token-1");
  p.Invalidate(start);
  EXPECT_EQ(p.Get()->token, "exec-token-2");
}

TEST_F(ExecCredentialTest, ClusterInfoAndV1beta1) {
  ExecConfig config = Config("ok");
  config.api_version = "client.authentication.k8s.io/v1beta1";
  config.provide_cluster_info = true;
  setenv("EXEC_API_VERSION", "client.authentication.k8s.io/v1beta1", 1);
  ExecCredentialProvider p(config, {"https://k:6443", "name", false, "PEM"},
                           &clock_);
  auto c = p.Get();
  unsetenv("EXEC_API_VERSION");
  ASSERT_TRUE(c.ok()) << c.status();
  rapidjson::Document info;
  info.Parse(ReadFileOrDie(state_ + "/info").c_str());
  EXPECT_STREQ(info["spec"]["cluster"]["server"].GetString(), "https://k:6443");
  EXPECT_STREQ(info["spec"]["cluster"]["tls-server-name"].GetString(), "name");
  EXPECT_STREQ(
      info["spec"]["cluster"]["certificate-authority-data"].GetString(),
      "UEVN");
}

TEST_F(ExecCredentialTest, ClientCertificate) {
  ExecCredentialProvider p(Config("cert"), {}, &clock_);
  auto c = p.Get();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->client_certificate_data, "CERT");
  EXPECT_EQ(c->client_key_data, "KEY");
  EXPECT_TRUE(c->token.empty());
}

TEST_F(ExecCredentialTest, Failures) {
  struct Case {
    const char* mode;
    const char* want;
  } cases[] = {
      {"fail", "failed: exit status 3"},
      {"garbage", "output is not a JSON object"},
      {"wrong-version",
       "plugin returned version client.authentication.k8s.io/v1alpha1"},
  };
  for (const auto& c : cases) {
    ExecCredentialProvider p(Config(c.mode), {}, &clock_);
    auto got = p.Get();
    ASSERT_FALSE(got.ok()) << c.mode;
    EXPECT_EQ(got.status().code(), absl::StatusCode::kUnauthenticated);
    EXPECT_THAT(std::string(got.status().message()), HasSubstr(c.want))
        << c.mode;
  }
  ExecConfig missing = Config("ok");
  missing.command = "/nonexistent/kcr-plugin";
  missing.install_hint = "install kcr-plugin first";
  auto got = ExecCredentialProvider(missing, {}, &clock_).Get();
  EXPECT_THAT(std::string(got.status().message()),
              HasSubstr("cannot run /nonexistent/kcr-plugin"));
  EXPECT_THAT(std::string(got.status().message()),
              HasSubstr("install kcr-plugin first"));
}

TEST(ParseExecCredentialTest, Validation) {
  EXPECT_FALSE(
      ParseExecCredential(R"({"apiVersion":"v","kind":"ExecCredential"})", "v")
          .ok());
  EXPECT_FALSE(
      ParseExecCredential(
          R"({"apiVersion":"v","kind":"ExecCredential","status":{}})", "v")
          .ok());
  EXPECT_FALSE(
      ParseExecCredential(
          R"({"apiVersion":"v","kind":"ExecCredential","status":{"clientCertificateData":"c"}})",
          "v")
          .ok());
  EXPECT_FALSE(
      ParseExecCredential(
          R"({"apiVersion":"v","kind":"ExecCredential","status":{"token":"t","expirationTimestamp":"soon"}})",
          "v")
          .ok());
  EXPECT_FALSE(
      ParseExecCredential(
          R"({"apiVersion":"v","kind":"Pod","status":{"token":"t"}})", "v")
          .ok());
  EXPECT_TRUE(
      ParseExecCredential(
          R"({"apiVersion":"v","kind":"ExecCredential","status":{"token":"t"}})",
          "v")
          .ok());
}

}  // namespace
}  // namespace kcr::client
