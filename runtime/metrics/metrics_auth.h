// Authentication and authorisation of metrics scrapers, delegated to the
// API server as controller-runtime's filters.WithAuthenticationAndAuthorization
// (and kube-rbac-proxy before it) does: each request's bearer token is
// checked by a TokenReview, and the user it names must be allowed the
// request's verb ("get") on its path ("/metrics") by a SubjectAccessReview
// of that non-resource URL.
//
// Answers, as controller-runtime's: no or an unknown token is a 401
// "Unauthorized"; a user without the permission a 403 "Authorization
// denied for user <name>"; a review that could not be made a 500
// ("Authentication failed", "Authorization for user <name> failed").
//
// Results are cached, keyed by a SHA-256 of the token (the token itself is
// not kept): a token's review for 1 minute, an allowed access for 5
// minutes, a denied one for 30 seconds. Failed reviews are not cached.
//
// The manager needs `create` on tokenreviews (authentication.k8s.io) and
// subjectaccessreviews (authorization.k8s.io): the system:auth-delegator
// ClusterRole. A scraper needs `get` on the nonResourceURL /metrics.
//
// Thread-safe.
#ifndef KCR_RUNTIME_METRICS_METRICS_AUTH_H_
#define KCR_RUNTIME_METRICS_METRICS_AUTH_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "base/mutex.h"
#include "runtime/client/rest_client.h"
#include "runtime/metrics/http_endpoint.h"

namespace kcr::metrics {

// Who a token belongs to, as a TokenReview tells.
struct UserInfo {
  std::string username;
  std::string uid;
  std::vector<std::string> groups;
  std::map<std::string, std::vector<std::string>> extra;
};

// The two reviews, asked of an API server.
class AccessReviewer {
 public:
  virtual ~AccessReviewer() = default;
  // The user `token` authenticates as, or nullopt when it does not
  // authenticate. An error when the review could not be made.
  virtual absl::StatusOr<std::optional<UserInfo>> ReviewToken(
      const std::string& token) = 0;
  // Whether `user` may `verb` the non-resource URL `path`. An error when
  // the review could not be made.
  virtual absl::StatusOr<bool> ReviewAccess(const UserInfo& user,
                                            const std::string& verb,
                                            const std::string& path) = 0;
};

// Reviews through `client`: POST tokenreviews and subjectaccessreviews,
// each bounded by `timeout` and tried up to 5 times (500 ms apart, growing
// by 1.5) when the server cannot be reached or answers 5xx. `client` must
// outlive the reviewer.
std::unique_ptr<AccessReviewer> NewApiServerReviewer(
    client::RestClient* client, absl::Duration timeout = absl::Seconds(10));

struct MetricsAuthOptions {
  absl::Duration token_ttl = absl::Minutes(1);
  absl::Duration allow_ttl = absl::Minutes(5);
  absl::Duration deny_ttl = absl::Seconds(30);
  // Entries kept per cache; expired ones are dropped first when full.
  size_t max_entries = 4096;
};

class MetricsAuth {
 public:
  // `reviewer` and `clock` must outlive this.
  MetricsAuth(AccessReviewer* reviewer, const Clock* clock,
              MetricsAuthOptions options = {});

  // nullopt when the request may go on; else the answer that refuses it.
  std::optional<HttpReply> Check(const HttpGet& get);

  // `handler` behind Check.
  HttpEndpoint::Handler Protect(HttpEndpoint::Handler handler);

  // Reviews asked of the server (not answered from the caches).
  int64_t token_reviews() const;
  int64_t access_reviews() const;

 private:
  template <typename T>
  struct Entry {
    T value;
    absl::Time expires;
  };
  template <typename T>
  using Cache = absl::flat_hash_map<std::string, Entry<T>>;

  template <typename T>
  void Put(Cache<T>* cache, std::string key, T value, absl::Duration ttl)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  AccessReviewer* const reviewer_;
  const Clock* const clock_;
  const MetricsAuthOptions options_;
  mutable Mutex mu_;
  Cache<std::optional<UserInfo>> tokens_ ABSL_GUARDED_BY(mu_);
  Cache<bool> access_ ABSL_GUARDED_BY(mu_);
  int64_t token_reviews_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t access_reviews_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace kcr::metrics

#endif  // KCR_RUNTIME_METRICS_METRICS_AUTH_H_
