// cmd/local-apiserver --secure: HTTPS with a generated CA that the written
// kubeconfig trusts, and bearer-token authentication. kubectl verifies the
// certificate; another CA and a wrong token are refused.
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/tls_certs.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/integration/process_util.h"

namespace kcr::apiserver {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kBinary[] = "cmd/local-apiserver/local-apiserver";
constexpr char kKubectl[] = "/usr/bin/kubectl";

class SecureApiServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(access(kKubectl, X_OK), 0) << "these tests need kubectl";
    dir_ = ::testing::TempDir() + "/secure-" + std::to_string(getpid());
    // The certificate directory does not exist yet: the server makes it.
    ASSERT_EQ(system(("mkdir -p " + dir_ + "/home").c_str()), 0);
    server_ = std::make_unique<LocalApiServerProcess>(
        kBinary, dir_,
        std::vector<std::string>{"--secure",
                                 "--cert-dir=" + dir_ + "/certs/new",
                                 "--token=s3cret", "--tls-san=api.test"});
    ASSERT_TRUE(server_->ok()) << server_->error();
  }

  void TearDown() override {
    if (server_ != nullptr) {
      EXPECT_EQ(server_->Stop(), std::optional<int>(0));
    }
  }

  ProcessResult Kubectl(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {kKubectl,
                                     "--kubeconfig=" + server_->kubeconfig()};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv, {{"HOME", dir_ + "/home"},
                             {"KUBECACHEDIR", dir_ + "/home/cache"}});
  }

  std::string dir_;
  std::unique_ptr<LocalApiServerProcess> server_;
};

TEST_F(SecureApiServerTest, KubectlTrustsTheGeneratedCa) {
  EXPECT_THAT(server_->url(), StartsWith("https://127.0.0.1:"));
  EXPECT_THAT(ReadFile(server_->kubeconfig()),
              HasSubstr("certificate-authority-data:"));
  EXPECT_THAT(ReadFile(dir_ + "/certs/new/ca.crt"),
              HasSubstr("BEGIN CERTIFICATE"));

  ProcessResult r = Kubectl({"get", "namespaces"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("kube-system"));
}

// Responses larger than one TLS record (16 KiB): a document, an object and
// a watch event of 40 KB each arrive whole.
TEST_F(SecureApiServerTest, ResponsesLargerThanATlsRecord) {
  ProcessResult r = Kubectl({"get", "--raw", "/openapi/v2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(r.out.size(), 100000u);
  const std::string big(40000, 'x');
  r = Kubectl({"create", "configmap", "big", "--from-literal=k=" + big});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Kubectl({"get", "configmap", "big", "-o", "jsonpath={.data.k}"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, big);
  r = Kubectl({"get", "--raw",
               "/api/v1/namespaces/default/configmaps?watch=1&"
               "timeoutSeconds=1&fieldSelector=metadata.name%3Dbig"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(big));
}

TEST_F(SecureApiServerTest, WrongTokenIsUnauthorized) {
  ProcessResult r = Kubectl({"--token=wrong", "get", "namespaces"});
  EXPECT_NE(r.exit_code, 0);
  // kubectl words a 401 this way.
  EXPECT_THAT(r.err, HasSubstr("You must be logged in to the server"));
}

TEST_F(SecureApiServerTest, AnotherCaIsRefused) {
  absl::StatusOr<TlsMaterial> other = GenerateTlsMaterial();
  ASSERT_TRUE(other.ok()) << other.status();
  const std::string ca = dir_ + "/other-ca.crt";
  std::ofstream(ca) << other->ca_cert_pem;
  ProcessResult r =
      Kubectl({"--certificate-authority=" + ca, "--server=" + server_->url(),
               "get", "namespaces"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("certificate"));
}

}  // namespace
}  // namespace kcr::apiserver
