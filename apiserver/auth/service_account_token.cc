#include "apiserver/auth/service_account_token.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/x509.h>

#include <cstdio>
#include <mutex>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_split.h"
#include "api/json/json_util.h"
#include "base/str_cat.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace kcr {
namespace apiserver {
namespace auth {

struct ServiceAccountTokens::Key {
  // Generated keys are made on first use: a server that never issues a
  // token does not pay for an RSA key.
  std::once_flag generate;
  EVP_PKEY* pkey = nullptr;
  std::string kid;
  ~Key() { EVP_PKEY_free(pkey); }
};

namespace {

absl::Status Unauthenticated(std::string_view why) {
  return absl::UnauthenticatedError(
      Cat("invalid service account token: ", why));
}

std::string B64(std::string_view s) {
  std::string out;
  absl::WebSafeBase64Escape(absl::string_view(s.data(), s.size()), &out);
  return out;
}

// kube's keyIDFromPublicKey: base64url(sha256(DER public key)).
std::string KeyId(EVP_PKEY* pkey) {
  unsigned char* der = nullptr;
  const int n = i2d_PUBKEY(pkey, &der);
  if (n <= 0) return "";
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(der, static_cast<size_t>(n), digest);
  OPENSSL_free(der);
  return B64(std::string_view(reinterpret_cast<char*>(digest), sizeof(digest)));
}

int64_t Unix(absl::Time t) { return absl::ToUnixSeconds(t); }

}  // namespace

absl::StatusOr<std::unique_ptr<ServiceAccountTokens>>
ServiceAccountTokens::Create(ServiceAccountTokenOptions options) {
  auto key = std::make_unique<Key>();
  if (!options.key_file.empty()) {
    FILE* f = fopen(options.key_file.c_str(), "r");
    if (f == nullptr) {
      return absl::NotFoundError(
          Cat("cannot read service account key file ", options.key_file));
    }
    key->pkey = PEM_read_PrivateKey(f, nullptr, nullptr, nullptr);
    fclose(f);
    if (key->pkey == nullptr ||
        EVP_PKEY_get_base_id(key->pkey) != EVP_PKEY_RSA) {
      return absl::InvalidArgumentError(Cat("service account key file ",
                                            options.key_file,
                                            " holds no RSA private key (PEM)"));
    }
    key->kid = KeyId(key->pkey);
    std::call_once(key->generate, [] {});
  }
  return std::unique_ptr<ServiceAccountTokens>(
      new ServiceAccountTokens(std::move(options), std::move(key)));
}

ServiceAccountTokens::ServiceAccountTokens(ServiceAccountTokenOptions options,
                                           std::unique_ptr<Key> key)
    : options_(std::move(options)), key_(std::move(key)) {}

ServiceAccountTokens::~ServiceAccountTokens() = default;

EVP_PKEY* ServiceAccountTokens::SigningKey() const {
  std::call_once(key_->generate, [this] {
    key_->pkey = EVP_RSA_gen(2048);
    if (key_->pkey != nullptr) key_->kid = KeyId(key_->pkey);
  });
  return key_->pkey;
}

absl::StatusOr<std::string> ServiceAccountTokens::Issue(
    const std::string& ns, const std::string& name, const std::string& uid,
    const std::vector<std::string>& audiences, absl::Duration ttl,
    absl::Time* expiry) const {
  EVP_PKEY* pkey = SigningKey();
  if (pkey == nullptr) {
    return absl::InternalError("cannot generate the service account key");
  }
  const absl::Time now = options_.clock->Now();
  const absl::Time exp = now + ttl;
  unsigned char jti[16];
  RAND_bytes(jti, sizeof(jti));
  std::string jti_hex = absl::BytesToHexString(
      absl::string_view(reinterpret_cast<char*>(jti), sizeof(jti)));
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("aud");
  w.StartArray();
  for (const std::string& a : audiences) w.String(a.c_str(), a.size());
  w.EndArray();
  w.Key("exp");
  w.Int64(Unix(exp));
  w.Key("iat");
  w.Int64(Unix(now));
  w.Key("iss");
  w.String(options_.issuer.c_str(), options_.issuer.size());
  w.Key("jti");
  w.String(jti_hex.c_str(), jti_hex.size());
  w.Key("kubernetes.io");
  w.StartObject();
  w.Key("namespace");
  w.String(ns.c_str(), ns.size());
  w.Key("serviceaccount");
  w.StartObject();
  w.Key("name");
  w.String(name.c_str(), name.size());
  w.Key("uid");
  w.String(uid.c_str(), uid.size());
  w.EndObject();
  w.EndObject();
  w.Key("nbf");
  w.Int64(Unix(now));
  w.Key("sub");
  const std::string sub = Cat("system:serviceaccount:", ns, ":", name);
  w.String(sub.c_str(), sub.size());
  w.EndObject();
  const std::string header =
      Cat(R"({"alg":"RS256","kid":")", key_->kid, R"("})");
  const std::string signing_input = Cat(
      B64(header), ".", B64(std::string_view(buf.GetString(), buf.GetSize())));
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  size_t sig_len = 0;
  std::string sig;
  bool ok =
      ctx != nullptr &&
      EVP_DigestSignInit(ctx, nullptr, EVP_sha256(), nullptr, pkey) == 1 &&
      EVP_DigestSign(
          ctx, nullptr, &sig_len,
          reinterpret_cast<const unsigned char*>(signing_input.data()),
          signing_input.size()) == 1;
  if (ok) {
    sig.resize(sig_len);
    ok = EVP_DigestSign(
             ctx, reinterpret_cast<unsigned char*>(sig.data()), &sig_len,
             reinterpret_cast<const unsigned char*>(signing_input.data()),
             signing_input.size()) == 1;
    sig.resize(sig_len);
  }
  EVP_MD_CTX_free(ctx);
  if (!ok) return absl::InternalError("cannot sign the service account token");
  if (expiry != nullptr) *expiry = exp;
  return Cat(signing_input, ".", B64(sig));
}

absl::StatusOr<ServiceAccountClaims> ServiceAccountTokens::Verify(
    const std::string& token) const {
  std::vector<absl::string_view> parts = absl::StrSplit(token, '.');
  if (parts.size() != 3) return Unauthenticated("not a JWT");
  std::string header, payload, sig;
  if (!absl::WebSafeBase64Unescape(parts[0], &header) ||
      !absl::WebSafeBase64Unescape(parts[1], &payload) ||
      !absl::WebSafeBase64Unescape(parts[2], &sig)) {
    return Unauthenticated("malformed base64");
  }
  rapidjson::Document h;
  if (!json::ParseJson(header, &h).ok() || !h.IsObject() ||
      json::StringMember(h, "alg") != "RS256") {
    return Unauthenticated("unexpected header");
  }
  const std::string signing_input =
      Cat(std::string_view(parts[0].data(), parts[0].size()), ".",
          std::string_view(parts[1].data(), parts[1].size()));
  EVP_PKEY* pkey = SigningKey();
  if (pkey == nullptr) return Unauthenticated("no key");
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  const bool verified =
      ctx != nullptr &&
      EVP_DigestVerifyInit(ctx, nullptr, EVP_sha256(), nullptr, pkey) == 1 &&
      EVP_DigestVerify(
          ctx, reinterpret_cast<const unsigned char*>(sig.data()), sig.size(),
          reinterpret_cast<const unsigned char*>(signing_input.data()),
          signing_input.size()) == 1;
  EVP_MD_CTX_free(ctx);
  if (!verified) return Unauthenticated("bad signature");
  rapidjson::Document c;
  if (!json::ParseJson(payload, &c).ok() || !c.IsObject()) {
    return Unauthenticated("malformed claims");
  }
  if (json::StringMember(c, "iss") != options_.issuer) {
    return Unauthenticated("another issuer");
  }
  auto int_claim = [&c](const char* name, int64_t* out) {
    auto it = c.FindMember(name);
    if (it == c.MemberEnd() || !it->value.IsInt64()) return false;
    *out = it->value.GetInt64();
    return true;
  };
  int64_t exp = 0, iat = 0, nbf = 0;
  if (!int_claim("exp", &exp) || !int_claim("iat", &iat)) {
    return Unauthenticated("no exp or iat");
  }
  if (!int_claim("nbf", &nbf)) nbf = iat;
  const int64_t now = Unix(options_.clock->Now());
  if (now >= exp) return Unauthenticated("token has expired");
  // kube allows a minute of clock skew on nbf.
  if (now + 60 < nbf) return Unauthenticated("token is not valid yet");
  ServiceAccountClaims claims;
  claims.expiry = absl::FromUnixSeconds(exp);
  claims.issued_at = absl::FromUnixSeconds(iat);
  auto aud = c.FindMember("aud");
  if (aud != c.MemberEnd() && aud->value.IsArray()) {
    for (const auto& a : aud->value.GetArray()) {
      if (a.IsString()) claims.audiences.emplace_back(a.GetString());
    }
  } else if (aud != c.MemberEnd() && aud->value.IsString()) {
    claims.audiences.emplace_back(aud->value.GetString());
  }
  auto k8s = c.FindMember("kubernetes.io");
  if (k8s == c.MemberEnd() || !k8s->value.IsObject()) {
    return Unauthenticated("no kubernetes.io claim");
  }
  claims.ns = json::StringMember(k8s->value, "namespace");
  auto sa = k8s->value.FindMember("serviceaccount");
  if (sa != k8s->value.MemberEnd() && sa->value.IsObject()) {
    claims.name = json::StringMember(sa->value, "name");
    claims.uid = json::StringMember(sa->value, "uid");
  }
  if (claims.ns.empty() || claims.name.empty() ||
      json::StringMember(c, "sub") !=
          Cat("system:serviceaccount:", claims.ns, ":", claims.name)) {
    return Unauthenticated("claims do not name a service account");
  }
  return claims;
}

}  // namespace auth
}  // namespace apiserver
}  // namespace kcr
