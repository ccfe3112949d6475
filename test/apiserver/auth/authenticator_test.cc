// The authenticators: the static token file (kube's CSV, bad lines named
// by file and line), service-account tokens (signed, expiring, bound to
// the ServiceAccount's uid; forged, truncated and foreign ones refused),
// client certificates, anonymous requests and malformed headers.
#include "apiserver/auth/authenticator.h"

#include <openssl/evp.h>
#include <openssl/pem.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_split.h"
#include "apiserver/auth/token_file.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/fakes/fake_clock.h"

namespace kcr::apiserver::auth {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Outcome = Authentication::Outcome;

TEST(TokenFileTest, ParsesKubesCsv) {
  auto tokens = ParseTokenFile(
      "t1,alice,1,\"devs,qa\"\n"
      "\n"
      "t2, bob ,2\r\n"
      ",nobody,3\n"
      "t3,carol,4,ops\n",
      "tokens.csv");
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  ASSERT_EQ(tokens->size(), 3u);
  EXPECT_EQ(tokens->at("t1").name, "alice");
  EXPECT_EQ(tokens->at("t1").uid, "1");
  EXPECT_THAT(tokens->at("t1").groups, ElementsAre("devs", "qa"));
  EXPECT_EQ(tokens->at("t2").name, "bob ");
  EXPECT_TRUE(tokens->at("t2").groups.empty());
  EXPECT_THAT(tokens->at("t3").groups, ElementsAre("ops"));
}

TEST(TokenFileTest, BadLinesNameFileAndLine) {
  auto s = ParseTokenFile("t1,alice,1\nt2,bob\n", "/etc/tokens.csv").status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "token file /etc/tokens.csv line 2: must have at least 3 columns "
            "(token, user name, user uid), found 2");
  s = ParseTokenFile("t1,\"alice,1\n", "f").status();
  EXPECT_THAT(s.message(), HasSubstr("token file f line 1: "));
  s = ParseTokenFile("t1,,1\n", "f").status();
  EXPECT_EQ(s.message(), "token file f line 1: empty user name");
  s = ParseTokenFile("t1,al\"ice,1\n", "f").status();
  EXPECT_THAT(s.message(), HasSubstr("bare \""));
  EXPECT_EQ(ReadTokenFile("/nonexistent/tokens.csv").status().code(),
            absl::StatusCode::kNotFound);
}

class AuthenticatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServiceAccountTokenOptions so;
    so.clock = &clock_;
    auto tokens = ServiceAccountTokens::Create(so);
    ASSERT_TRUE(tokens.ok()) << tokens.status();
    tokens_ = std::move(*tokens);
    AuthenticatorOptions ao;
    ao.tokens["static"] = UserInfo{"alice", "1", {"devs"}, {}};
    ao.service_account_tokens = tokens_;
    ao.api_audiences = {kDefaultServiceAccountIssuer};
    ao.service_account_uid = [this](const std::string& ns,
                                    const std::string& name) {
      return ns == "default" && name == "robot" ? sa_uid_ : std::string();
    };
    ao.anonymous = true;
    authenticator_ = std::make_unique<Authenticator>(ao);
    ao.anonymous = false;
    strict_ = std::make_unique<Authenticator>(ao);
  }

  std::string Issue(absl::Duration ttl = absl::Hours(1),
                    std::vector<std::string> audiences = {
                        kDefaultServiceAccountIssuer}) {
    auto t =
        tokens_->Issue("default", "robot", sa_uid_, audiences, ttl, nullptr);
    EXPECT_TRUE(t.ok()) << t.status();
    return *t;
  }

  Outcome OutcomeOf(const std::string& header) {
    return authenticator_->AuthenticateRequest(header, "", {}).outcome;
  }

  testing::FakeClock clock_;
  std::string sa_uid_ = "uid-1";
  std::shared_ptr<ServiceAccountTokens> tokens_;
  std::unique_ptr<Authenticator> authenticator_;
  std::unique_ptr<Authenticator> strict_;
};

TEST_F(AuthenticatorTest, StaticTokenAndGroups) {
  Authentication a =
      authenticator_->AuthenticateRequest("Bearer static", "", {});
  ASSERT_EQ(a.outcome, Outcome::kAuthenticated);
  EXPECT_EQ(a.user.name, "alice");
  EXPECT_THAT(a.user.groups, ElementsAre("devs", kAllAuthenticated));
  EXPECT_EQ(OutcomeOf("bearer static"), Outcome::kAuthenticated);
  EXPECT_EQ(OutcomeOf("Bearer wrong"), Outcome::kRejected);
}

TEST_F(AuthenticatorTest, AnonymousAndMalformedHeaders) {
  Authentication a = authenticator_->AuthenticateRequest("", "", {});
  EXPECT_EQ(a.outcome, Outcome::kAnonymous);
  EXPECT_EQ(a.user.name, kAnonymousUser);
  EXPECT_THAT(a.user.groups, ElementsAre(kAllUnauthenticated));
  // Not a bearer credential: no credential at all, as kube reads it.
  EXPECT_EQ(OutcomeOf("Basic YWxpY2U6cHc="), Outcome::kAnonymous);
  EXPECT_EQ(OutcomeOf("Bearer"), Outcome::kAnonymous);
  EXPECT_EQ(OutcomeOf("Bearer "), Outcome::kAnonymous);
  EXPECT_EQ(OutcomeOf(std::string("Bearer \0\xff\x01", 10)),
            Outcome::kRejected);
  EXPECT_EQ(OutcomeOf("Bearer " + std::string(1 << 20, 'x')),
            Outcome::kRejected);
  EXPECT_EQ(OutcomeOf("Bearer a.b.c"), Outcome::kRejected);
  EXPECT_EQ(OutcomeOf("Bearer ..."), Outcome::kRejected);
  EXPECT_EQ(strict_->AuthenticateRequest("", "", {}).outcome,
            Outcome::kRejected);
  EXPECT_EQ(strict_->AuthenticateRequest("Basic x", "", {}).outcome,
            Outcome::kRejected);
}

TEST_F(AuthenticatorTest, ClientCertificate) {
  Authentication a =
      strict_->AuthenticateRequest("", "carol", {"ops", "system:masters"});
  ASSERT_EQ(a.outcome, Outcome::kAuthenticated);
  EXPECT_EQ(a.user.name, "carol");
  EXPECT_THAT(a.user.groups,
              ElementsAre("ops", "system:masters", kAllAuthenticated));
}

TEST_F(AuthenticatorTest, ServiceAccountToken) {
  const std::string token = Issue();
  Authentication a =
      authenticator_->AuthenticateRequest("Bearer " + token, "", {});
  ASSERT_EQ(a.outcome, Outcome::kAuthenticated) << a.error;
  EXPECT_EQ(a.user.name, "system:serviceaccount:default:robot");
  EXPECT_EQ(a.user.uid, "uid-1");
  EXPECT_THAT(a.user.groups,
              ElementsAre(kAllServiceAccounts, "system:serviceaccounts:default",
                          kAllAuthenticated));
  // Kube's claims.
  std::vector<std::string> parts = absl::StrSplit(token, '.');
  ASSERT_EQ(parts.size(), 3u);
  std::string header, claims;
  ASSERT_TRUE(absl::WebSafeBase64Unescape(parts[0], &header));
  ASSERT_TRUE(absl::WebSafeBase64Unescape(parts[1], &claims));
  EXPECT_THAT(header, HasSubstr(R"("alg":"RS256")"));
  EXPECT_THAT(header, HasSubstr(R"("kid":")"));
  for (
      const char* claim :
      {R"("aud":["https://kubernetes.default.svc.cluster.local"])",
       R"("iss":"https://kubernetes.default.svc.cluster.local")",
       R"("sub":"system:serviceaccount:default:robot")", R"("exp":)",
       R"("iat":)", R"("nbf":)",
       R"("kubernetes.io":{"namespace":"default","serviceaccount":{"name":"robot","uid":"uid-1"}})"}) {
    EXPECT_THAT(claims, HasSubstr(claim));
  }
}

TEST_F(AuthenticatorTest, ExpiredTokenIsRefused) {
  const std::string token = Issue(absl::Minutes(10));
  clock_.Advance(absl::Minutes(9));
  EXPECT_EQ(OutcomeOf("Bearer " + token), Outcome::kAuthenticated);
  clock_.Advance(absl::Minutes(1));
  Authentication a = authenticator_->AuthenticateToken(token);
  EXPECT_EQ(a.outcome, Outcome::kRejected);
  EXPECT_THAT(a.error, HasSubstr("expired"));
}

TEST_F(AuthenticatorTest, RecreatedServiceAccountInvalidatesTokens) {
  const std::string token = Issue();
  sa_uid_ = "";
  EXPECT_THAT(authenticator_->AuthenticateToken(token).error,
              HasSubstr("has been deleted"));
  sa_uid_ = "uid-2";
  EXPECT_EQ(authenticator_->AuthenticateToken(token).outcome,
            Outcome::kRejected);
  EXPECT_EQ(authenticator_->AuthenticateToken(Issue()).outcome,
            Outcome::kAuthenticated);
}

TEST_F(AuthenticatorTest, ForgedTruncatedAndForeignTokensAreRefused) {
  const std::string token = Issue();
  std::vector<std::string> parts = absl::StrSplit(token, '.');
  // Claims changed (another user), signature kept.
  std::string claims;
  ASSERT_TRUE(absl::WebSafeBase64Unescape(parts[1], &claims));
  const size_t at = claims.find("robot");
  claims.replace(at, 5, "admin");
  std::string forged_claims;
  absl::WebSafeBase64Escape(claims, &forged_claims);
  EXPECT_THAT(
      authenticator_
          ->AuthenticateToken(parts[0] + "." + forged_claims + "." + parts[2])
          .error,
      HasSubstr("bad signature"));
  // alg none.
  std::string none;
  absl::WebSafeBase64Escape(R"({"alg":"none"})", &none);
  EXPECT_EQ(
      authenticator_->AuthenticateToken(none + "." + parts[1] + ".").outcome,
      Outcome::kRejected);
  for (size_t cut : {size_t{1}, token.size() / 2, token.size() - 1}) {
    EXPECT_EQ(authenticator_->AuthenticateToken(token.substr(0, cut)).outcome,
              Outcome::kRejected)
        << cut;
  }
  // Signed by another key.
  ServiceAccountTokenOptions so;
  so.clock = &clock_;
  auto other = ServiceAccountTokens::Create(so);
  ASSERT_TRUE(other.ok());
  auto foreign =
      (*other)->Issue("default", "robot", sa_uid_,
                      {kDefaultServiceAccountIssuer}, absl::Hours(1), nullptr);
  ASSERT_TRUE(foreign.ok());
  EXPECT_EQ(authenticator_->AuthenticateToken(*foreign).outcome,
            Outcome::kRejected);
  // Another audience.
  EXPECT_THAT(
      authenticator_->AuthenticateToken(Issue(absl::Hours(1), {"vault"})).error,
      HasSubstr("audiences"));
  Authentication a = authenticator_->AuthenticateToken(
      Issue(absl::Hours(1), {"vault"}), {"vault"});
  EXPECT_EQ(a.outcome, Outcome::kAuthenticated);
  EXPECT_THAT(a.audiences, ElementsAre("vault"));
}

TEST(ServiceAccountTokensTest, KeyFile) {
  const char* tmp = getenv("TEST_TMPDIR");
  const std::string dir = tmp != nullptr ? tmp : "/tmp";
  ServiceAccountTokenOptions so;
  so.key_file = dir + "/missing.key";
  EXPECT_EQ(ServiceAccountTokens::Create(so).status().code(),
            absl::StatusCode::kNotFound);
  so.key_file = dir + "/not-a.key";
  FILE* f = fopen(so.key_file.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fputs("not a key\n", f);
  fclose(f);
  EXPECT_EQ(ServiceAccountTokens::Create(so).status().code(),
            absl::StatusCode::kInvalidArgument);
  // Two issuers with the same key (a restarted server) accept each other's
  // tokens.
  so.key_file = dir + "/sa.key";
  EVP_PKEY* key = EVP_RSA_gen(2048);
  ASSERT_NE(key, nullptr);
  f = fopen(so.key_file.c_str(), "w");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr),
            1);
  fclose(f);
  EVP_PKEY_free(key);
  auto first = ServiceAccountTokens::Create(so);
  auto second = ServiceAccountTokens::Create(so);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(second.ok()) << second.status();
  auto token =
      (*first)->Issue("ns", "sa", "uid", {"aud"}, absl::Hours(1), nullptr);
  ASSERT_TRUE(token.ok());
  auto claims = (*second)->Verify(*token);
  ASSERT_TRUE(claims.ok()) << claims.status();
  EXPECT_EQ(claims->ns, "ns");
  EXPECT_EQ(claims->name, "sa");
  EXPECT_EQ(claims->uid, "uid");
  EXPECT_THAT(claims->audiences, ElementsAre("aud"));
}

}  // namespace
}  // namespace kcr::apiserver::auth
