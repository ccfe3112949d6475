#include "runtime/client/rest_config.h"

#include <cstdlib>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/runtime/client/test_util.h"

namespace kcr::client {
namespace {

using ::kcr::client::testing::MakeTempDir;
using ::kcr::client::testing::ReadFileOrDie;
using ::kcr::client::testing::TestdataPath;
using ::kcr::client::testing::WriteFile;
using ::testing::HasSubstr;

constexpr char kConfig[] = R"(current-context: dev
clusters:
- name: c1
  cluster: {server: "https://127.0.0.1:6443", certificate-authority: ca.pem}
- name: insecure
  cluster: {server: "https://h", insecure-skip-tls-verify: true}
- name: both
  cluster: {server: "https://h", insecure-skip-tls-verify: true, certificate-authority: ca.pem}
- name: noserver
  cluster: {tls-server-name: x}
users:
- name: alice
  user: {token: abc, client-certificate: c.pem, client-key: k.pem}
- name: halfcert
  user: {client-certificate: c.pem}
- name: basic
  user: {username: u, password: p}
- name: tokenfile
  user: {tokenFile: /t, token: fallback}
- name: provider
  user: {auth-provider: {name: gcp}}
contexts:
- name: dev
  context: {cluster: c1, user: alice, namespace: team}
- name: insecure
  context: {cluster: insecure, user: basic}
- name: both
  context: {cluster: both}
- name: noserver
  context: {cluster: noserver}
- name: nocluster
  context: {cluster: ghost}
- name: nouser
  context: {cluster: c1, user: ghost}
- name: halfcert
  context: {cluster: c1, user: halfcert}
- name: tokenfile
  context: {cluster: c1, user: tokenfile}
- name: provider
  context: {cluster: c1, user: provider}
)";

class RestConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("kube");
    WriteFile(dir_ + "/config", kConfig);
  }
  absl::StatusOr<Config> Load(const std::string& context) {
    LoadingRules rules;
    rules.explicit_path = dir_ + "/config";
    rules.context = context;
    return LoadFromKubeconfig(rules);
  }
  std::string dir_;
};

TEST_F(RestConfigTest, CurrentContext) {
  auto c = Load("");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->host, "https://127.0.0.1:6443");
  EXPECT_EQ(c->tls.ca_file, dir_ + "/ca.pem");
  EXPECT_EQ(c->tls.cert_file, dir_ + "/c.pem");
  EXPECT_EQ(c->bearer_token, "abc");
  EXPECT_EQ(c->namespace_, "team");
  EXPECT_EQ(c->qps, 5);
  EXPECT_EQ(c->burst, 10);
}

TEST_F(RestConfigTest, NamedContexts) {
  auto c = Load("insecure");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->tls.insecure);
  EXPECT_EQ(c->username, "u");
  EXPECT_EQ(c->namespace_, "default");
  auto t = Load("tokenfile");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->bearer_token_file, "/t");
  EXPECT_EQ(t->bearer_token, "fallback");
}

TEST_F(RestConfigTest, BrokenContextsNameFileAndField) {
  struct Case {
    const char* context;
    const char* want;
  } cases[] = {
      {"both",
       "specifying a root certificates file with the insecure flag is not "
       "allowed"},
      {"noserver", "clusters[name=noserver].cluster.server is missing"},
      {"nocluster", "refers to cluster \"ghost\", which is not defined"},
      {"nouser", "refers to user \"ghost\", which is not defined"},
      {"halfcert", "users[name=halfcert].user.client-key is missing"},
      {"provider", "auth-provider is not supported"},
      {"absent", "context \"absent\" is not defined"},
  };
  for (const auto& c : cases) {
    auto config = Load(c.context);
    ASSERT_FALSE(config.ok()) << c.context;
    EXPECT_THAT(std::string(config.status().message()), HasSubstr(c.want))
        << c.context;
    EXPECT_THAT(std::string(config.status().message()),
                HasSubstr(dir_ + "/config"))
        << c.context;
  }
}

TEST_F(RestConfigTest, LoadingOrder) {
  std::string other = MakeTempDir("other");
  WriteFile(
      other + "/a",
      "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\n"
      "clusters:\n- name: c\n  cluster: {server: 'https://from-env'}\n");
  WriteFile(
      other + "/home",
      "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\n"
      "clusters:\n- name: c\n  cluster: {server: 'https://from-home'}\n");
  LoadingRules rules;
  rules.kubeconfig_env = "/nonexistent:" + other + "/a";
  rules.default_path = other + "/home";
  EXPECT_EQ(LoadFromKubeconfig(rules)->host, "https://from-env");
  rules.explicit_path = dir_ + "/config";
  EXPECT_EQ(LoadFromKubeconfig(rules)->host, "https://127.0.0.1:6443");
  rules.explicit_path.clear();
  rules.kubeconfig_env = "";
  EXPECT_EQ(LoadFromKubeconfig(rules)->host, "https://from-home");
  rules.explicit_path = other + "/missing";
  EXPECT_EQ(LoadFromKubeconfig(rules).status().code(),
            absl::StatusCode::kNotFound);
  // An explicit path that is missing is an error even with in-cluster env.
  EXPECT_FALSE(BuildConfig(rules).ok());
}

TEST_F(RestConfigTest, LoadingOrderFromTheEnvironment) {
  const std::string home = MakeTempDir("home");
  WriteFile(
      home + "/.kube/config",
      "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\n"
      "clusters:\n- name: c\n  cluster: {server: 'https://from-home'}\n");
  const char* old_home = std::getenv("HOME");
  const std::string saved_home = old_home != nullptr ? old_home : "";
  setenv("HOME", home.c_str(), 1);
  // An empty KUBECONFIG is as good as none: ~/.kube/config.
  setenv("KUBECONFIG", "", 1);
  auto c = LoadFromKubeconfig();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->host, "https://from-home");
  // KUBECONFIG wins over ~/.kube/config.
  setenv("KUBECONFIG", (home + "/missing:" + dir_ + "/config").c_str(), 1);
  c = LoadFromKubeconfig();
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->host, "https://127.0.0.1:6443");
  // A KUBECONFIG naming only missing files says so, and does not fall back
  // to ~/.kube/config (as kubectl).
  setenv("KUBECONFIG", (home + "/missing").c_str(), 1);
  c = LoadFromKubeconfig();
  EXPECT_EQ(c.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(c.status().message()), HasSubstr(home + "/missing"));
  unsetenv("KUBECONFIG");
  setenv("HOME", saved_home.c_str(), 1);
}

TEST_F(RestConfigTest, MergedListResolvesAcrossFiles) {
  // The context comes from one file, its cluster and user from others, each
  // file's relative paths against its own directory.
  const std::string a = MakeTempDir("a");
  const std::string b = MakeTempDir("b");
  WriteFile(a + "/config", R"(current-context: mixed
contexts:
- name: mixed
  context: {cluster: cb, user: ub, namespace: from-a}
clusters:
- name: cb
  cluster: {server: 'https://first-wins', certificate-authority: ca-a.pem}
)");
  WriteFile(b + "/config", R"(current-context: ignored
clusters:
- name: cb
  cluster: {server: 'https://second'}
users:
- name: ub
  user: {tokenFile: token, client-certificate: certs/c.pem, client-key: certs/k.pem}
)");
  LoadingRules rules;
  rules.kubeconfig_env = a + "/config:" + b + "/config";
  auto c = LoadFromKubeconfig(rules);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->host, "https://first-wins");
  EXPECT_EQ(c->tls.ca_file, a + "/ca-a.pem");
  EXPECT_EQ(c->bearer_token_file, b + "/token");
  EXPECT_EQ(c->tls.cert_file, b + "/certs/c.pem");
  EXPECT_EQ(c->tls.key_file, b + "/certs/k.pem");
  EXPECT_EQ(c->namespace_, "from-a");
  // The user's file, not the context's, is named when the user is broken.
  WriteFile(b + "/config",
            "users:\n- name: ub\n  user: {client-certificate: c.pem}\n");
  c = LoadFromKubeconfig(rules);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr(b + "/config"));
  EXPECT_THAT(std::string(c.status().message()),
              HasSubstr("users[name=ub].user.client-key"));
}

class InClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir("sa");
    WriteFile(dir_ + "/token", "sa-token\n");
    WriteFile(dir_ + "/ca.crt", ReadFileOrDie(TestdataPath("ca.pem")));
    WriteFile(dir_ + "/namespace", "from-file");
    setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    unsetenv("POD_NAMESPACE");
  }
  void TearDown() override {
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    unsetenv("POD_NAMESPACE");
  }
  InClusterOptions Options() {
    InClusterOptions o;
    o.service_account_dir = dir_;
    return o;
  }
  std::string dir_;
};

TEST_F(InClusterTest, ReadsServiceAccount) {
  auto c = InClusterConfig(Options());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->host, "https://10.96.0.1:443");
  EXPECT_EQ(c->bearer_token, "sa-token");
  EXPECT_EQ(c->bearer_token_file, dir_ + "/token");
  EXPECT_EQ(c->tls.ca_file, dir_ + "/ca.crt");
  EXPECT_EQ(c->namespace_, "from-file");
  EXPECT_TRUE(ValidateConfig(*c).ok());
}

TEST_F(InClusterTest, PodNamespaceFirstThenFileThenDefault) {
  setenv("POD_NAMESPACE", "from-env", 1);
  EXPECT_EQ(InClusterConfig(Options())->namespace_, "from-env");
  unsetenv("POD_NAMESPACE");
  std::filesystem::remove(dir_ + "/namespace");
  EXPECT_EQ(InClusterConfig(Options())->namespace_, "default");
}

TEST_F(InClusterTest, Ipv6HostIsBracketed) {
  setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
  EXPECT_EQ(InClusterConfig(Options())->host, "https://[fd00::1]:443");
}

TEST_F(InClusterTest, NotInClusterAndMissingFiles) {
  unsetenv("KUBERNETES_SERVICE_PORT");
  auto c = InClusterConfig(Options());
  EXPECT_EQ(c.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(c.status().message()),
              HasSubstr("not running in a cluster"));
  setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  std::filesystem::remove(dir_ + "/ca.crt");
  c = InClusterConfig(Options());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr(dir_ + "/ca.crt"));
  std::filesystem::remove(dir_ + "/token");
  c = InClusterConfig(Options());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr(dir_ + "/token"));
}

TEST_F(InClusterTest, BuildConfigFallsBackToInCluster) {
  LoadingRules rules;
  rules.kubeconfig_env = "";
  rules.default_path = dir_ + "/no-such-kubeconfig";
  auto c = BuildConfig(rules, Options());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->host, "https://10.96.0.1:443");
  // A kubeconfig that exists wins.
  std::string kube = MakeTempDir("kube");
  WriteFile(
      kube + "/config",
      "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\n"
      "clusters:\n- name: c\n  cluster: {server: 'https://k'}\n");
  rules.default_path = kube + "/config";
  EXPECT_EQ(BuildConfig(rules, Options())->host, "https://k");
  // A broken one is an error, not a fallback.
  WriteFile(kube + "/config", "clusters: 7\n");
  EXPECT_FALSE(BuildConfig(rules, Options()).ok());
}

TEST(ValidateConfigTest, Combinations) {
  Config c;
  EXPECT_FALSE(ValidateConfig(c).ok());
  c.host = "https://h";
  EXPECT_TRUE(ValidateConfig(c).ok());
  c.tls.insecure = true;
  c.tls.ca_data = "pem";
  EXPECT_THAT(std::string(ValidateConfig(c).message()),
              HasSubstr("root certificates file with the insecure flag"));
  c.tls.ca_data.clear();
  c.bearer_token = "t";
  c.username = "u";
  EXPECT_FALSE(ValidateConfig(c).ok());
}

TEST(UserAgentTest, Format) {
  EXPECT_THAT(DefaultUserAgent(),
              ::testing::MatchesRegex("kcr/[0-9.]+ \\(linux/[a-z0-9_]+\\)"));
}

}  // namespace
}  // namespace kcr::client
