// TokenSource: where a bearer token comes from, and CachedFileTokenSource,
// which reads it from a file that someone else rotates (a projected
// service-account token the kubelet rewrites, a tokenFile in a kubeconfig).
//
// As client-go's transport.NewCachedFileTokenSource: the file is re-read
// when the cached token is a minute old, and on the next request after the
// server answered 401 to a request sent with the cached token. A failed
// re-read keeps the last good token (logged), so a file briefly missing
// during rotation does not fail requests.
#ifndef KCR_RUNTIME_CLIENT_TOKEN_SOURCE_H_
#define KCR_RUNTIME_CLIENT_TOKEN_SOURCE_H_

#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/clock.h"
#include "base/mutex.h"

namespace kcr::client {

// Thread-safe.
class TokenSource {
 public:
  virtual ~TokenSource() = default;
  // The token to send now.
  virtual absl::StatusOr<std::string> Token() = 0;
  // The server rejected a request sent at `request_start`: forget a token
  // obtained before then, so that the next Token() fetches a fresh one.
  virtual void Invalidate(absl::Time request_start) = 0;
};

class CachedFileTokenSource final : public TokenSource {
 public:
  // How long a token read from the file is used before re-reading.
  static constexpr absl::Duration kDefaultPeriod = absl::Minutes(1);

  // `fallback` is used when the file cannot be read and no token was read
  // yet (a kubeconfig with both token and tokenFile). `clock` is not owned;
  // null means the real clock.
  CachedFileTokenSource(std::string path, std::string fallback = "",
                        const Clock* clock = nullptr,
                        absl::Duration period = kDefaultPeriod);

  // The cached token, re-reading the file first if the cache is older than
  // the period or was invalidated. Surrounding whitespace is trimmed.
  // kUnauthenticated (naming the file) if the file cannot be read or is
  // empty and there is neither a previous token nor a fallback.
  absl::StatusOr<std::string> Token() override;
  void Invalidate(absl::Time request_start) override;

  // How many times the file has been read (for tests and metrics).
  int reads() const;

 private:
  const std::string path_;
  const std::string fallback_;
  const Clock* const clock_;
  const absl::Duration period_;
  mutable Mutex mu_;
  std::string token_ ABSL_GUARDED_BY(mu_);
  absl::Time read_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  bool stale_ ABSL_GUARDED_BY(mu_) = true;
  int reads_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace kcr::client

#endif  // KCR_RUNTIME_CLIENT_TOKEN_SOURCE_H_
