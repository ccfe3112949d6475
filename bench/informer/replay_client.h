// The REST client kcr's two harness programs (kcr_client_bench,
// kcr_informer_bench) talk to the replay server with: plain HTTP on
// loopback, client-go's default QPS, managedFields stripped while parsing
// (what an informer's client does).
#ifndef KCR_BENCH_INFORMER_REPLAY_CLIENT_H_
#define KCR_BENCH_INFORMER_REPLAY_CLIENT_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "runtime/client/rest_client.h"

namespace kcr::bench {

absl::StatusOr<std::unique_ptr<client::RestClient>> NewReplayClient(
    int64_t port);

}  // namespace kcr::bench

#endif  // KCR_BENCH_INFORMER_REPLAY_CLIENT_H_
