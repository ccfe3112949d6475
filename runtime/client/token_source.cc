#include "runtime/client/token_source.h"

#include <fstream>
#include <iterator>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "glog/logging.h"

namespace kcr::client {

CachedFileTokenSource::CachedFileTokenSource(std::string path,
                                             std::string fallback,
                                             const Clock* clock,
                                             absl::Duration period)
    : path_(std::move(path)),
      fallback_(std::move(fallback)),
      clock_(clock != nullptr ? clock : Clock::Real()),
      period_(period) {}

absl::StatusOr<std::string> CachedFileTokenSource::Token() {
  MutexLock lock(&mu_);
  const absl::Time now = clock_->Now();
  if (!stale_ && now - read_at_ < period_) return token_;
  ++reads_;
  std::ifstream in(path_, std::ios::binary);
  std::string text;
  if (in) {
    text.assign((std::istreambuf_iterator<char>(in)),
                std::istreambuf_iterator<char>());
  }
  std::string token(absl::StripAsciiWhitespace(text));
  if (!token.empty()) {
    if (token != token_ && !token_.empty()) {
      VLOG(2) << "token file re-read with a new token path=" << path_;
    }
    token_ = std::move(token);
    read_at_ = now;
    stale_ = false;
    return token_;
  }
  // Keep serving what we had; try again at the next period.
  const std::string problem = in ? "is empty" : "cannot be read";
  if (!token_.empty()) {
    LOG(WARNING) << "token file " << path_ << " " << problem
                 << "; using the previous token";
    read_at_ = now;
    stale_ = false;
    return token_;
  }
  if (!fallback_.empty()) {
    LOG(WARNING) << "token file " << path_ << " " << problem
                 << "; using the static token";
    return fallback_;
  }
  return absl::UnauthenticatedError(
      absl::StrCat("token file ", path_, " ", problem));
}

void CachedFileTokenSource::Invalidate(absl::Time request_start) {
  MutexLock lock(&mu_);
  // A token read after the request began may already be the new one.
  if (read_at_ <= request_start) stale_ = true;
}

int CachedFileTokenSource::reads() const {
  MutexLock lock(&mu_);
  return reads_;
}

}  // namespace kcr::client
