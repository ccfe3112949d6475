#include "runtime/metrics/metrics_auth.h"

#include <openssl/sha.h>

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "api/errors/errors.h"
#include "api/object.h"
#include "base/context.h"
#include "glog/logging.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace kcr::metrics {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void Key(Writer& w, std::string_view s) {
  w.Key(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}
void String(Writer& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}
void Strings(Writer& w, const std::vector<std::string>& list) {
  w.StartArray();
  for (const std::string& s : list) String(w, s);
  w.EndArray();
}

std::string_view StrAt(const api::Object& o, std::string_view pointer) {
  const rapidjson::Value* v = o.Find(pointer);
  return v != nullptr && v->IsString()
             ? std::string_view(v->GetString(), v->GetStringLength())
             : std::string_view();
}

std::vector<std::string> StringsAt(const rapidjson::Value* v) {
  std::vector<std::string> out;
  if (v == nullptr || !v->IsArray()) return out;
  for (const auto& s : v->GetArray()) {
    if (s.IsString()) out.emplace_back(s.GetString(), s.GetStringLength());
  }
  return out;
}

// Whether a failed review may succeed when asked again.
bool Retriable(const absl::Status& s) {
  return absl::IsUnavailable(s) || absl::IsDeadlineExceeded(s) ||
         api::IsInternalError(s) || api::IsServiceUnavailable(s) ||
         api::IsServerTimeout(s) || api::IsTimeout(s) ||
         api::IsTooManyRequests(s);
}

class ApiServerReviewer : public AccessReviewer {
 public:
  ApiServerReviewer(client::RestClient* client, absl::Duration timeout)
      : client_(client), timeout_(timeout) {}

  absl::StatusOr<std::optional<UserInfo>> ReviewToken(
      const std::string& token) override {
    rapidjson::StringBuffer buf;
    Writer w(buf);
    w.StartObject();
    Key(w, "apiVersion");
    String(w, "authentication.k8s.io/v1");
    Key(w, "kind");
    String(w, "TokenReview");
    // An object needs metadata (api::Object::Parse), empty as client-go's.
    Key(w, "metadata");
    w.StartObject();
    w.EndObject();
    Key(w, "spec");
    w.StartObject();
    Key(w, "token");
    String(w, token);
    w.EndObject();
    w.EndObject();
    absl::StatusOr<api::ObjectPtr> review =
        Create({"authentication.k8s.io", "v1", "tokenreviews"},
               std::string_view(buf.GetString(), buf.GetSize()));
    if (!review.ok()) return review.status();
    const rapidjson::Value* ok = (*review)->Find("/status/authenticated");
    if (ok == nullptr || !ok->IsBool() || !ok->GetBool()) {
      return std::optional<UserInfo>();
    }
    UserInfo user;
    user.username = std::string(StrAt(**review, "/status/user/username"));
    user.uid = std::string(StrAt(**review, "/status/user/uid"));
    user.groups = StringsAt((*review)->Find("/status/user/groups"));
    if (const rapidjson::Value* extra = (*review)->Find("/status/user/extra");
        extra != nullptr && extra->IsObject()) {
      for (const auto& m : extra->GetObject()) {
        user.extra[std::string(m.name.GetString(), m.name.GetStringLength())] =
            StringsAt(&m.value);
      }
    }
    return std::optional<UserInfo>(std::move(user));
  }

  absl::StatusOr<bool> ReviewAccess(const UserInfo& user,
                                    const std::string& verb,
                                    const std::string& path) override {
    rapidjson::StringBuffer buf;
    Writer w(buf);
    w.StartObject();
    Key(w, "apiVersion");
    String(w, "authorization.k8s.io/v1");
    Key(w, "kind");
    String(w, "SubjectAccessReview");
    // An object needs metadata (api::Object::Parse), empty as client-go's.
    Key(w, "metadata");
    w.StartObject();
    w.EndObject();
    Key(w, "spec");
    w.StartObject();
    Key(w, "user");
    String(w, user.username);
    if (!user.uid.empty()) {
      Key(w, "uid");
      String(w, user.uid);
    }
    Key(w, "groups");
    Strings(w, user.groups);
    if (!user.extra.empty()) {
      Key(w, "extra");
      w.StartObject();
      for (const auto& [k, v] : user.extra) {
        Key(w, k);
        Strings(w, v);
      }
      w.EndObject();
    }
    Key(w, "nonResourceAttributes");
    w.StartObject();
    Key(w, "path");
    String(w, path);
    Key(w, "verb");
    String(w, verb);
    w.EndObject();
    w.EndObject();
    w.EndObject();
    absl::StatusOr<api::ObjectPtr> review =
        Create({"authorization.k8s.io", "v1", "subjectaccessreviews"},
               std::string_view(buf.GetString(), buf.GetSize()));
    if (!review.ok()) return review.status();
    const rapidjson::Value* allowed = (*review)->Find("/status/allowed");
    return allowed != nullptr && allowed->IsBool() && allowed->GetBool();
  }

 private:
  absl::StatusOr<api::ObjectPtr> Create(api::GroupVersionResource gvr,
                                        std::string_view json) {
    absl::StatusOr<api::ObjectPtr> object = api::Object::Parse(json);
    if (!object.ok()) return object.status();
    const client::Resource resource =
        client::Resource::ClusterScoped(std::move(gvr));
    absl::Duration backoff = absl::Milliseconds(500);
    absl::Status last;
    for (int attempt = 0; attempt < 5; ++attempt) {
      if (attempt > 0) {
        absl::SleepFor(backoff);
        backoff *= 1.5;
      }
      auto [ctx, cancel] = WithTimeout(Context::Background(), timeout_);
      absl::StatusOr<api::ObjectPtr> created =
          client_->Create(ctx, resource, **object);
      cancel();
      if (created.ok() || !Retriable(created.status())) return created;
      last = created.status();
    }
    return last;
  }

  client::RestClient* const client_;
  const absl::Duration timeout_;
};

// The bearer token of an Authorization header, or "", read as kube's
// bearertoken authenticator does: the scheme case-insensitive, the token
// the second of the space-separated words (anything after it ignored).
std::string BearerToken(std::string_view header) {
  const std::string trimmed(absl::StripAsciiWhitespace(
      absl::string_view(header.data(), header.size())));
  const size_t space = trimmed.find(' ');
  if (space == std::string::npos) return "";
  if (!absl::EqualsIgnoreCase(absl::string_view(trimmed).substr(0, space),
                              "bearer")) {
    return "";
  }
  const size_t next = trimmed.find(' ', space + 1);
  return trimmed.substr(space + 1, next == std::string::npos
                                       ? std::string::npos
                                       : next - space - 1);
}

std::string TokenKey(const std::string& token) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(token.data()), token.size(),
         digest);
  return std::string(reinterpret_cast<const char*>(digest), sizeof(digest));
}

HttpReply Text(int status, std::string body) {
  return HttpReply{status, "text/plain; charset=utf-8", body + "\n"};
}

}  // namespace

std::unique_ptr<AccessReviewer> NewApiServerReviewer(client::RestClient* client,
                                                     absl::Duration timeout) {
  return std::make_unique<ApiServerReviewer>(client, timeout);
}

MetricsAuth::MetricsAuth(AccessReviewer* reviewer, const Clock* clock,
                         MetricsAuthOptions options)
    : reviewer_(reviewer), clock_(clock), options_(options) {}

template <typename T>
void MetricsAuth::Put(Cache<T>* cache, std::string key, T value,
                      absl::Duration ttl) {
  const absl::Time now = clock_->Now();
  if (cache->size() >= options_.max_entries) {
    absl::erase_if(*cache,
                   [&](const auto& e) { return e.second.expires <= now; });
    // Still full of live entries (a flood of distinct tokens): start over
    // rather than grow.
    if (cache->size() >= options_.max_entries) cache->clear();
  }
  (*cache)[std::move(key)] = Entry<T>{std::move(value), now + ttl};
}

std::optional<HttpReply> MetricsAuth::Check(const HttpGet& get) {
  const std::string token = BearerToken(get.authorization);
  if (token.empty()) return Text(401, "Unauthorized");
  const std::string token_key = TokenKey(token);

  std::optional<std::optional<UserInfo>> user;
  {
    MutexLock lock(&mu_);
    auto it = tokens_.find(token_key);
    if (it != tokens_.end() && it->second.expires > clock_->Now()) {
      user = it->second.value;
    }
  }
  if (!user.has_value()) {
    absl::StatusOr<std::optional<UserInfo>> reviewed =
        reviewer_->ReviewToken(token);
    MutexLock lock(&mu_);
    ++token_reviews_;
    if (!reviewed.ok()) {
      LOG(WARNING) << "metrics: authentication failed: " << reviewed.status();
      return Text(500, "Authentication failed");
    }
    user = *reviewed;
    Put(&tokens_, token_key, *reviewed, options_.token_ttl);
  }
  if (!user->has_value()) return Text(401, "Unauthorized");
  const UserInfo& who = **user;

  const std::string verb = get.head ? "head" : "get";
  std::string access_key =
      absl::StrCat(who.username, "\n", who.uid, "\n", verb, "\n", get.path);
  for (const std::string& g : who.groups) absl::StrAppend(&access_key, "\n", g);
  std::optional<bool> allowed;
  {
    MutexLock lock(&mu_);
    auto it = access_.find(access_key);
    if (it != access_.end() && it->second.expires > clock_->Now()) {
      allowed = it->second.value;
    }
  }
  if (!allowed.has_value()) {
    absl::StatusOr<bool> reviewed =
        reviewer_->ReviewAccess(who, verb, get.path);
    MutexLock lock(&mu_);
    ++access_reviews_;
    if (!reviewed.ok()) {
      LOG(WARNING) << "metrics: authorization for user " << who.username
                   << " failed: " << reviewed.status();
      return Text(500, absl::StrCat("Authorization for user ", who.username,
                                    " failed"));
    }
    allowed = *reviewed;
    Put(&access_, std::move(access_key), *reviewed,
        *reviewed ? options_.allow_ttl : options_.deny_ttl);
  }
  if (!*allowed) {
    VLOG(4) << "metrics: authorization denied for user " << who.username
            << " verb=" << verb << " path=" << get.path;
    return Text(403,
                absl::StrCat("Authorization denied for user ", who.username));
  }
  return std::nullopt;
}

HttpEndpoint::Handler MetricsAuth::Protect(HttpEndpoint::Handler handler) {
  return [this, handler = std::move(handler)](const HttpGet& get) {
    if (std::optional<HttpReply> refused = Check(get)) return *refused;
    return handler(get);
  };
}

int64_t MetricsAuth::token_reviews() const {
  MutexLock lock(&mu_);
  return token_reviews_;
}

int64_t MetricsAuth::access_reviews() const {
  MutexLock lock(&mu_);
  return access_reviews_;
}

}  // namespace kcr::metrics
