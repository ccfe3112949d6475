// Authentication and RBAC enforced by the local API server, seen through
// kubectl and the official Python client as different users: static
// tokens, service-account tokens from `kubectl create token` (expired, of a
// deleted ServiceAccount), client certificates, allowed and forbidden
// requests with kube's 403 message, `kubectl auth can-i` (and --list,
// --as), `kubectl auth whoami`, the escalation rule, and hostile
// Authorization headers.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "apiserver/api_server.h"
#include "base/tls_certs.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/apiserver/test_client.h"
#include "test/fakes/fake_clock.h"
#include "test/integration/kubectl_harness.h"
#include "test/integration/process_util.h"

namespace kcr {
namespace integration {
namespace {

using apiserver::ProcessResult;
using apiserver::RunProcess;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kPython[] = "/usr/bin/python3";

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

class KubectlRbacEnforcementTest : public ::testing::Test {
 protected:
  void SetUp() override { StartServer(Clock::Real()); }

  void StartServer(const Clock* clock) {
    const char* tmp = getenv("TEST_TMPDIR");
    dir_ = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/rbac-", getpid());
    mkdir(dir_.c_str(), 0700);
    auto material = GenerateTlsMaterial();
    ASSERT_TRUE(material.ok()) << material.status();
    material_ = *material;
    auto files = WriteTlsFiles(material_, dir_);
    ASSERT_TRUE(files.ok()) << files.status();
    files_ = *files;
    WriteFile(dir_ + "/tokens.csv",
              "admin-token,admin,1,\"system:masters\"\n"
              "alice-token,alice,2,\"devs\"\n"
              "bob-token,bob,3\n");
    apiserver::ApiServerOptions options;
    options.tls_cert_file = files_.server_cert;
    options.tls_key_file = files_.server_key;
    options.tls_ca_file = files_.ca_cert;
    options.client_ca_file = files_.ca_cert;
    options.token_auth_file = dir_ + "/tokens.csv";
    options.authorization_mode = "RBAC";
    options.clock = clock;
    options.controllers.node_simulator = false;
    auto server = apiserver::ApiServer::Start(std::move(options));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    admin_ = Kubectl("admin", "token: admin-token");
    alice_ = Kubectl("alice", "token: alice-token");
  }

  // A kubectl whose kubeconfig carries `user_yaml` (under `user:`).
  std::unique_ptr<KubectlHarness> Kubectl(const std::string& name,
                                          const std::string& user_yaml) {
    const std::string kubeconfig = absl::StrCat(dir_, "/", name, ".kubeconfig");
    WriteFile(kubeconfig,
              absl::StrCat("apiVersion: v1\nkind: Config\nclusters:\n"
                           "- name: local\n  cluster:\n    server: ",
                           server_->url(),
                           "\n    certificate-authority: ", files_.ca_cert,
                           "\ncontexts:\n- name: local\n  context:\n"
                           "    cluster: local\n    user: u\n"
                           "    namespace: default\n"
                           "current-context: local\nusers:\n- name: u\n"
                           "  user:\n    ",
                           user_yaml, "\n"));
    const std::string home = absl::StrCat(dir_, "/home-", name);
    mkdir(home.c_str(), 0700);
    return std::make_unique<KubectlHarness>(kubeconfig, home);
  }

  KubectlResult Admin(const std::vector<std::string>& args,
                      const std::string& stdin_text = "") {
    KubectlResult r = admin_->Run(args, stdin_text);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r;
  }

  std::string dir_;
  TlsMaterial material_;
  TlsFiles files_;
  // Outlives the server that reads it.
  std::unique_ptr<testing::FakeClock> fake_clock_;
  std::unique_ptr<apiserver::ApiServer> server_;
  std::unique_ptr<KubectlHarness> admin_;
  std::unique_ptr<KubectlHarness> alice_;
};

TEST_F(KubectlRbacEnforcementTest, AllowedAndForbiddenWithKubesMessages) {
  KubectlResult r = alice_->Run({"get", "pods"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("Error from server (Forbidden): pods is "
                               "forbidden: User \"alice\" cannot list resource "
                               "\"pods\" in API group \"\" in the namespace "
                               "\"default\""));
  Admin({"create", "role", "pod-reader", "--verb=get,list", "--resource=pods"});
  Admin({"create", "rolebinding", "alice-reads", "--role=pod-reader",
         "--group=devs"});
  r = alice_->Run({"get", "pods"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("No resources found in default namespace."));
  r = alice_->Run({"get", "pods", "-n", "kube-system"});
  EXPECT_THAT(r.err, HasSubstr("pods is forbidden: User \"alice\" cannot list "
                               "resource \"pods\" in API group \"\" in the "
                               "namespace \"kube-system\""));
  r = alice_->Run({"get", "pod", "p", "-o", "name"});
  EXPECT_THAT(r.err, HasSubstr("pods \"p\" not found"));
  r = alice_->Run({"get", "--raw", "/api/v1/namespaces/default/pods/p/log"});
  EXPECT_THAT(r.err, HasSubstr("pods \"p\" is forbidden: User \"alice\" cannot "
                               "get resource \"pods/log\" in API group \"\" in "
                               "the namespace \"default\""));
  r = alice_->Run({"get", "deployments"});
  EXPECT_THAT(r.err, HasSubstr("deployments.apps is forbidden: User \"alice\" "
                               "cannot list resource \"deployments\" in API "
                               "group \"apps\" in the namespace \"default\""));
  r = alice_->Run({"get", "nodes"});
  EXPECT_THAT(r.err, HasSubstr("nodes is forbidden: User \"alice\" cannot list "
                               "resource \"nodes\" in API group \"\" at the "
                               "cluster scope"));
  r = alice_->Run({"get", "--raw", "/metrics"});
  EXPECT_THAT(r.err, HasSubstr("forbidden: User \"alice\" cannot get path "
                               "\"/metrics\""));
  // A bad token.
  r = Kubectl("bad", "token: wrong")->Run({"get", "pods"});
  EXPECT_THAT(r.err, HasSubstr("error: You must be logged in to the server"));
}

TEST_F(KubectlRbacEnforcementTest, CanIAndWhoAmIAreTruthful) {
  Admin({"create", "clusterrolebinding", "alice-view", "--clusterrole=view",
         "--user=alice"});
  EXPECT_EQ(alice_->Run({"auth", "can-i", "list", "pods"}).out, "yes\n");
  EXPECT_EQ(alice_
                ->Run({"auth", "can-i", "get", "deployments.apps", "-n",
                       "kube-system"})
                .out,
            "yes\n");
  EXPECT_EQ(alice_->Run({"auth", "can-i", "delete", "pods"}).out, "no\n");
  EXPECT_EQ(alice_->Run({"auth", "can-i", "get", "secrets"}).out, "no\n");
  EXPECT_EQ(alice_->Run({"auth", "can-i", "get", "/healthz"}).out, "yes\n");
  EXPECT_EQ(alice_->Run({"auth", "can-i", "get", "/metrics"}).out, "no\n");
  EXPECT_EQ(Admin({"auth", "can-i", "delete", "nodes"}).out, "yes\n");
  // Impersonation by a member of system:masters; refused to others.
  EXPECT_EQ(Admin({"auth", "can-i", "list", "pods", "--as=alice"}).out,
            "yes\n");
  EXPECT_EQ(admin_->Run({"auth", "can-i", "list", "pods", "--as=bob"}).out,
            "no\n");
  KubectlResult r = alice_->Run({"get", "pods", "--as=admin"});
  EXPECT_THAT(r.err, HasSubstr("users \"admin\" is forbidden: User \"alice\" "
                               "cannot impersonate resource \"users\" in API "
                               "group \"\" at the cluster scope"));
  // The rules review lists what the view ClusterRole aggregated.
  r = alice_->Run({"auth", "can-i", "--list"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  bool pods = false, reviews = false;
  for (const auto& row : KubectlHarness::Columns(r.out)) {
    if (row.size() == 4 && row[0] == "pods" && row[3] == "[get list watch]") {
      pods = true;
    }
    if (row.size() == 4 &&
        row[0] == "selfsubjectaccessreviews.authorization.k8s.io") {
      reviews = true;
    }
    EXPECT_NE(row[0], "secrets") << r.out;
  }
  EXPECT_TRUE(pods) << r.out;
  EXPECT_TRUE(reviews) << r.out;
  r = alice_->Run({"auth", "whoami", "-o", "jsonpath={.status.userInfo}"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(
      r.out,
      R"({"groups":["devs","system:authenticated"],"uid":"2","username":"alice"})");
}

TEST_F(KubectlRbacEnforcementTest, ServiceAccountTokens) {
  Admin({"create", "serviceaccount", "robot"});
  const std::string token = Admin({"create", "token", "robot"}).out;
  ASSERT_THAT(token, StartsWith("eyJ"));
  auto robot = Kubectl("robot", "token: " + token);
  KubectlResult r = robot->Run({"auth", "whoami", "-o",
                                "jsonpath={.status.userInfo.username} "
                                "{.status.userInfo.groups}"});
  EXPECT_EQ(
      r.out,
      "system:serviceaccount:default:robot "
      R"(["system:serviceaccounts","system:serviceaccounts:default","system:authenticated"])");
  r = robot->Run({"get", "configmaps"});
  EXPECT_THAT(r.err, HasSubstr("User \"system:serviceaccount:default:robot\" "
                               "cannot list resource \"configmaps\""));
  Admin({"create", "rolebinding", "robot-edit", "--clusterrole=edit",
         "--serviceaccount=default:robot"});
  r = robot->Run({"create", "configmap", "c", "--from-literal=k=v"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // A TokenReview answers from the same authenticator.
  r = Admin({"create", "-o",
             "jsonpath={.status.authenticated} "
             "{.status.user.username}",
             "-f", "-"},
            "apiVersion: authentication.k8s.io/v1\nkind: TokenReview\n"
            "spec: {token: " +
                token + "}\n");
  EXPECT_EQ(r.out, "true system:serviceaccount:default:robot");
  // Deleted, then recreated with another uid: the old token is dead.
  Admin({"delete", "serviceaccount", "robot"});
  r = robot->Run({"get", "configmaps"});
  EXPECT_THAT(r.err, HasSubstr("You must be logged in to the server"));
  Admin({"create", "serviceaccount", "robot"});
  r = robot->Run({"get", "configmaps"});
  EXPECT_THAT(r.err, HasSubstr("You must be logged in to the server"));
  r = Admin({"create", "-o", "jsonpath={.status.authenticated}", "-f", "-"},
            "apiVersion: authentication.k8s.io/v1\nkind: TokenReview\n"
            "spec: {token: " +
                token + "}\n");
  EXPECT_EQ(r.out, "");
  // kube's minimum lifetime.
  r = admin_->Run({"create", "token", "robot", "--duration=1m"});
  EXPECT_THAT(r.err, HasSubstr("spec.expirationSeconds: Invalid value: 60: may "
                               "not specify a duration less than 10 minutes"));
  // Tampered and truncated tokens.
  std::string forged = token;
  forged[forged.size() / 2] = forged[forged.size() / 2] == 'A' ? 'B' : 'A';
  EXPECT_THAT(Kubectl("forged", "token: " + forged)->Run({"get", "pods"}).err,
              HasSubstr("You must be logged in to the server"));
  EXPECT_THAT(Kubectl("truncated", "token: " + token.substr(0, 40))
                  ->Run({"get", "pods"})
                  .err,
              HasSubstr("You must be logged in to the server"));
}

TEST_F(KubectlRbacEnforcementTest, ExpiredTokenIsUnauthorized) {
  server_.reset();
  fake_clock_ = std::make_unique<testing::FakeClock>();
  testing::FakeClock& clock = *fake_clock_;
  clock.SetTime(absl::Now());
  ASSERT_NO_FATAL_FAILURE(StartServer(&clock));
  Admin({"create", "serviceaccount", "robot"});
  Admin({"create", "clusterrolebinding", "robot-view", "--clusterrole=view",
         "--serviceaccount=default:robot"});
  const std::string token =
      Admin({"create", "token", "robot", "--duration=10m"}).out;
  auto robot = Kubectl("robot", "token: " + token);
  EXPECT_EQ(robot->Run({"get", "pods"}).exit_code, 0);
  clock.Advance(absl::Minutes(9));
  EXPECT_EQ(robot->Run({"get", "pods"}).exit_code, 0);
  clock.Advance(absl::Minutes(1));
  EXPECT_THAT(robot->Run({"get", "pods"}).err,
              HasSubstr("You must be logged in to the server"));
}

TEST_F(KubectlRbacEnforcementTest, EscalationIsForbidden) {
  Admin({"create", "role", "rbac-writer", "--verb=create,get,list,update,patch",
         "--resource=roles,rolebindings"});
  Admin(
      {"create", "role", "secret-reader", "--verb=get", "--resource=secrets"});
  Admin({"create", "rolebinding", "alice-rbac", "--role=rbac-writer",
         "--user=alice"});
  KubectlResult r = alice_->Run(
      {"create", "role", "mine", "--verb=get", "--resource=secrets"});
  EXPECT_THAT(r.err,
              HasSubstr("roles.rbac.authorization.k8s.io \"mine\" is "
                        "forbidden: user \"alice\" "
                        "(groups=[\"devs\" \"system:authenticated\"]) is "
                        "attempting to grant RBAC permissions not currently "
                        "held:\n{APIGroups:[\"\"], Resources:[\"secrets\"], "
                        "Verbs:[\"get\"]}"));
  // Rules alice holds may be granted.
  r = alice_->Run({"create", "role", "mine", "--verb=get", "--resource=roles"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // Not by a patch either.
  r = alice_->Run(
      {"patch", "role", "mine", "--type=json", "-p",
       R"([{"op":"add","path":"/rules/-","value":{"apiGroups":[""],"resources":["secrets"],"verbs":["list"]}}])"});
  EXPECT_THAT(r.err, HasSubstr("attempting to grant RBAC permissions not "
                               "currently held"));
  r = alice_->Run(
      {"create", "rolebinding", "b", "--role=secret-reader", "--user=alice"});
  EXPECT_THAT(r.err, HasSubstr("rolebindings.rbac.authorization.k8s.io \"b\" "
                               "is forbidden: user \"alice\""));
  // With `bind` on that role, the binding is allowed.
  Admin({"create", "role", "binder", "--verb=bind", "--resource=roles",
         "--resource-name=secret-reader"});
  Admin({"create", "rolebinding", "alice-binds", "--role=binder",
         "--user=alice"});
  r = alice_->Run(
      {"create", "rolebinding", "b", "--role=secret-reader", "--user=bob"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(KubectlRbacEnforcementTest, ClientCertificates) {
  // A certificate for CN=carol, O=system:masters, O=ops signed by the CA.
  const std::string key = dir_ + "/carol.key", csr = dir_ + "/carol.csr",
                    crt = dir_ + "/carol.crt", ca_key = dir_ + "/ca.key";
  WriteFile(ca_key, material_.ca_key_pem);
  ProcessResult p =
      RunProcess({"/usr/bin/openssl", "req", "-new", "-newkey", "rsa:2048",
                  "-nodes", "-keyout", key, "-out", csr, "-subj",
                  "/O=ops/O=system:masters/CN=carol"},
                 {});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  p = RunProcess(
      {"/usr/bin/openssl", "x509", "-req", "-in", csr, "-CA", files_.ca_cert,
       "-CAkey", ca_key, "-CAcreateserial", "-out", crt, "-days", "1"},
      {});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  auto carol = Kubectl(
      "carol", "client-certificate: " + crt + "\n    client-key: " + key);
  KubectlResult r = carol->Run({"auth", "whoami", "-o",
                                "jsonpath={.status.userInfo.username} "
                                "{.status.userInfo.groups}"});
  EXPECT_EQ(r.out, R"(carol ["ops","system:masters","system:authenticated"])");
  EXPECT_EQ(carol->Run({"auth", "can-i", "delete", "nodes"}).out, "yes\n");
}

TEST_F(KubectlRbacEnforcementTest, PythonClientAsDifferentUsers) {
  ASSERT_EQ(access(kPython, X_OK), 0) << kPython << " is missing";
  Admin({"create", "clusterrolebinding", "alice-view", "--clusterrole=view",
         "--user=alice"});
  ProcessResult r = RunProcess({kPython, "-c", R"(
import sys
from kubernetes import client, config
from kubernetes.client.rest import ApiException
config.load_kube_config(config_file=sys.argv[1])
v1 = client.CoreV1Api()
print(len(v1.list_namespaced_pod("kube-system").items))
try:
    v1.list_namespaced_secret("default")
except ApiException as e:
    print(e.status, e.reason)
    import json
    print(json.loads(e.body)["message"])
auth = client.AuthorizationV1Api()
review = auth.create_self_subject_access_review(
    client.V1SelfSubjectAccessReview(spec=client.V1SelfSubjectAccessReviewSpec(
        resource_attributes=client.V1ResourceAttributes(
            verb="list", resource="pods", namespace="default"))))
print(review.status.allowed, review.status.reason)
)",
                                dir_ + "/alice.kubeconfig"},
                               {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(
      r.out,
      "0\n403 Forbidden\nsecrets is forbidden: User \"alice\" cannot list "
      "resource \"secrets\" in API group \"\" in the namespace "
      "\"default\"\nTrue RBAC: allowed by ClusterRoleBinding "
      "\"alice-view\" of ClusterRole \"view\" to User \"alice\"\n");
}

TEST_F(KubectlRbacEnforcementTest, HostileAuthorizationHeaders) {
  // Over plain HTTP with raw requests: the same authenticator.
  apiserver::ApiServerOptions options;
  options.token_auth_file = dir_ + "/tokens.csv";
  options.authorization_mode = "RBAC";
  options.anonymous_auth = false;
  options.controllers.node_simulator = false;
  auto plain = apiserver::ApiServer::Start(std::move(options));
  ASSERT_TRUE(plain.ok()) << plain.status();
  apiserver::TestClient client("127.0.0.1", (*plain)->port());
  for (const std::string& header :
       {std::string(""), std::string("Bearer"), std::string("Bearer "),
        std::string("Basic YWRtaW46YWRtaW4="), std::string("Bearer x y z"),
        std::string("Bearer a.b.c"),
        std::string("Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0."),
        std::string("Bearer ") + std::string(60000, 'A')}) {
    apiserver::TestResponse res = client.Get("/api/v1/namespaces/default/pods",
                                             {{"Authorization", header}});
    EXPECT_EQ(res.status, 401) << header.substr(0, 40);
    EXPECT_EQ(
        res.body,
        R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401})");
  }
  // Control characters: the HTTP parser's clean 400.
  apiserver::TestResponse res = client.Get(
      "/api/v1/pods", {{"Authorization", std::string("Bearer \x01\x02")}});
  EXPECT_EQ(res.status, 400);
  // Past the header limit: 431 before any handler runs.
  std::map<std::string, std::string> huge = {
      {"Authorization", "Bearer " + std::string(60000, 'A')}};
  for (int i = 0; i < 20; ++i) {
    huge["X-Pad-" + std::to_string(i)] = std::string(60000, 'B');
  }
  res = client.Get("/api/v1/pods", huge);
  EXPECT_EQ(res.status, 431);
  res = client.Get("/api/v1/namespaces/default/pods",
                   {{"Authorization", "Bearer admin-token"}});
  EXPECT_EQ(res.status, 200) << res.body;
  // Health stays open.
  EXPECT_EQ(client.Get("/healthz").status, 200);
  // With anonymous requests allowed, no credential is system:anonymous,
  // who may read /version and health only.
  apiserver::ApiServerOptions open;
  open.authorization_mode = "RBAC";
  open.controllers.node_simulator = false;
  auto anonymous = apiserver::ApiServer::Start(std::move(open));
  ASSERT_TRUE(anonymous.ok()) << anonymous.status();
  apiserver::TestClient anonymous_client("127.0.0.1", (*anonymous)->port());
  res = anonymous_client.Get("/api/v1/pods",
                             {{"Authorization", "Basic YWRtaW46YWRtaW4="}});
  EXPECT_EQ(res.status, 403);
  EXPECT_EQ(res.Str("/message"),
            "pods is forbidden: User \"system:anonymous\" cannot list "
            "resource \"pods\" in API group \"\" at the cluster scope");
  res = anonymous_client.Get("/api");
  EXPECT_EQ(res.Str("/message"),
            "forbidden: User \"system:anonymous\" cannot get path \"/api\"");
}

}  // namespace
}  // namespace integration
}  // namespace kcr
