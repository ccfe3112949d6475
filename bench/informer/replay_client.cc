#include "bench/informer/replay_client.h"

#include "absl/strings/str_cat.h"

namespace kcr::bench {

absl::StatusOr<std::unique_ptr<client::RestClient>> NewReplayClient(
    int64_t port) {
  client::Config config;
  config.host = absl::StrCat("http://127.0.0.1:", port);
  client::ClientOptions options;
  options.parse_options.strip_managed_fields = true;
  return client::NewRestClient(config, options);
}

}  // namespace kcr::bench
