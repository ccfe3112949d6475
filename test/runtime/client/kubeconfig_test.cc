#include "runtime/client/kubeconfig.h"

#include <string>

#include "absl/strings/escaping.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/runtime/client/test_util.h"

namespace kcr::client {
namespace {

using ::kcr::client::testing::MakeTempDir;
using ::kcr::client::testing::WriteFile;
using ::testing::HasSubstr;

constexpr char kFull[] = R"(apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: c1
  cluster:
    server: https://10.0.0.1:6443
    certificate-authority: certs/ca.pem
    tls-server-name: api.example
- name: c2
  cluster:
    server: https://c2.example
    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==
    insecure-skip-tls-verify: false
users:
- name: alice
  user:
    token: abc
    tokenFile: tok
    client-certificate: /abs/cert.pem
    client-key-data: a2V5
    as: bob
    as-groups: [g1, g2]
- name: plugin
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: ./bin/plugin
      args: [get-token, --x]
      env:
      - name: A
        value: "1"
      installHint: install it
      provideClusterInfo: true
contexts:
- name: dev
  context: {cluster: c1, user: alice, namespace: team}
- name: ops
  context: {cluster: c2, user: plugin}
)";

TEST(KubeconfigTest, ParsesEveryField) {
  auto k = ParseKubeconfig(kFull, "/home/u/.kube/config");
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->current_context, "dev");
  const auto& c1 = k->clusters.at("c1");
  EXPECT_EQ(c1.server, "https://10.0.0.1:6443");
  EXPECT_EQ(c1.certificate_authority, "/home/u/.kube/certs/ca.pem");
  EXPECT_EQ(c1.tls_server_name, "api.example");
  EXPECT_EQ(k->clusters.at("c2").certificate_authority_data,
            "-----BEGIN CERTIFICATE-----\n");
  const auto& alice = k->users.at("alice");
  EXPECT_EQ(alice.token, "abc");
  EXPECT_EQ(alice.token_file, "/home/u/.kube/tok");
  EXPECT_EQ(alice.client_certificate, "/abs/cert.pem");
  EXPECT_EQ(alice.client_key_data, "key");
  EXPECT_EQ(alice.impersonate, "bob");
  EXPECT_THAT(alice.impersonate_groups, ::testing::ElementsAre("g1", "g2"));
  const auto& exec = *k->users.at("plugin").exec;
  EXPECT_EQ(exec.api_version, "client.authentication.k8s.io/v1beta1");
  EXPECT_EQ(exec.command, "/home/u/.kube/bin/plugin");
  EXPECT_THAT(exec.args, ::testing::ElementsAre("get-token", "--x"));
  ASSERT_EQ(exec.env.size(), 1u);
  EXPECT_EQ(exec.env[0].first, "A");
  EXPECT_EQ(exec.env[0].second, "1");
  EXPECT_TRUE(exec.provide_cluster_info);
  EXPECT_EQ(k->contexts.at("dev").namespace_, "team");
  EXPECT_EQ(k->contexts.at("ops").user, "plugin");
}

TEST(KubeconfigTest, ExecCommandWithoutSlashIsLookedUpOnPath) {
  auto k = ParseKubeconfig(R"(users:
- name: u
  user:
    exec: {apiVersion: client.authentication.k8s.io/v1, command: aws}
)",
                           "/etc/kube/config");
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(k->users.at("u").exec->command, "aws");
}

TEST(KubeconfigTest, ErrorsNameFileAndField) {
  struct Case {
    const char* yaml;
    const char* want;
  } cases[] = {
      {"clusters:\n- name: c\n  cluster:\n    certificate-authority-data: "
       "'!!notbase64'\n",
       "/k/config: clusters[0].cluster.certificate-authority-data: invalid "
       "base64"},
      {"users:\n- name: u\n  user:\n    client-key-data: '%%%'\n",
       "/k/config: users[0].user.client-key-data: invalid base64"},
      {"clusters:\n- cluster: {server: x}\n",
       "/k/config: clusters[0].name: is missing"},
      {"clusters:\n- name: c\n  cluster:\n    server: [a, b]\n",
       "/k/config: clusters[0].cluster.server: must be a string"},
      {"clusters:\n- name: c\n  cluster:\n    insecure-skip-tls-verify: "
       "maybe\n",
       "clusters[0].cluster.insecure-skip-tls-verify: must be true or false"},
      {"users:\n- name: u\n  user:\n    exec: {command: x}\n",
       "users[0].user.exec.apiVersion: is missing"},
      {"users:\n- name: u\n  user:\n    exec: {apiVersion: v1}\n",
       "users[0].user.exec.command: is missing"},
      {"users:\n- name: u\n  user:\n    exec: {apiVersion: v, command: c, env: "
       "[{value: x}]}\n",
       "users[0].user.exec.env[0].name: is missing"},
      {"contexts: {a: b}\n", "/k/config: contexts: must be a list"},
      {"kind: Pod\n", "kind is \"Pod\", not \"Config\""},
      {"- a\n- b\n", "top level is not a mapping"},
      {"clusters: [\n", "not valid YAML"},
  };
  for (const auto& c : cases) {
    auto k = ParseKubeconfig(c.yaml, "/k/config");
    ASSERT_FALSE(k.ok()) << c.yaml;
    EXPECT_EQ(k.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(k.status().message()), HasSubstr(c.want)) << c.yaml;
    EXPECT_THAT(std::string(k.status().message()),
                HasSubstr("kubeconfig /k/config"));
  }
}

TEST(KubeconfigTest, EmptyDocumentIsEmptyConfig) {
  auto k = ParseKubeconfig("", "/k");
  ASSERT_TRUE(k.ok());
  EXPECT_TRUE(k->clusters.empty());
}

TEST(KubeconfigTest, MergesFilesFirstWins) {
  std::string dir = MakeTempDir("merge");
  WriteFile(dir + "/a", R"(clusters:
- name: shared
  cluster: {server: https://from-a}
users:
- name: ua
  user: {token: ta}
contexts:
- name: ctx-a
  context: {cluster: shared, user: ua}
)");
  WriteFile(dir + "/b", R"(current-context: ctx-b
clusters:
- name: shared
  cluster: {server: https://from-b}
- name: only-b
  cluster: {server: https://b}
contexts:
- name: ctx-b
  context: {cluster: only-b}
)");
  auto k = LoadKubeconfigFiles(
      {dir + "/a", dir + "/missing", dir + "/b", dir + "/a"});
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->clusters.at("shared").server, "https://from-a");
  EXPECT_EQ(k->clusters.at("only-b").server, "https://b");
  EXPECT_EQ(k->current_context, "ctx-b");  // a sets none
  EXPECT_EQ(k->contexts.size(), 2u);
  EXPECT_EQ(k->files.size(), 2u);

  auto none = LoadKubeconfigFiles({dir + "/x", dir + "/y"});
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);

  WriteFile(dir + "/broken", "clusters: 5\n");
  auto broken = LoadKubeconfigFiles({dir + "/a", dir + "/broken"});
  EXPECT_THAT(std::string(broken.status().message()),
              HasSubstr(dir + "/broken"));
}

TEST(KubeconfigTest, SplitPath) {
  EXPECT_THAT(SplitKubeconfigPath("/a::/b:"),
              ::testing::ElementsAre("/a", "/b"));
  EXPECT_TRUE(SplitKubeconfigPath("").empty());
}

}  // namespace
}  // namespace kcr::client
