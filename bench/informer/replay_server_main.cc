// replay_server: runs a ReplayServer (replay_server.h) over a PodCorpus
// until killed.
//
//   replay_server --port=0 --ready_file=/tmp/port --pods=50000
//       --updates=100000 [--namespaces=a,b] [--fixture=path]
//       [--bookmark_interval_ms=10000]
//
// Writes its port to --ready_file (written whole, then renamed) once it
// accepts connections.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/informer/harness_util.h"
#include "bench/informer/pod_corpus.h"
#include "bench/informer/replay_server.h"

namespace kcr::bench {
namespace {

int Main(int argc, char** argv) {
  absl::StatusOr<Flags> flags =
      Flags::Parse(argc, argv,
                   {{"port", "0"},
                    {"ready_file", ""},
                    {"pods", "10000"},
                    {"updates", "0"},
                    {"namespaces", "default"},
                    {"fixture", "test/api/testdata/pod.json"},
                    {"bookmark_interval_ms", "10000"}});
  if (!flags.ok()) {
    std::fprintf(stderr, "%s\n", flags.status().ToString().c_str());
    return 2;
  }
  absl::StatusOr<std::map<std::string, int64_t>> ints =
      flags->GetInts({"port", "pods", "updates", "bookmark_interval_ms"});
  if (!ints.ok()) {
    std::fprintf(stderr, "%s\n", ints.status().ToString().c_str());
    return 2;
  }
  const int64_t port = (*ints)["port"];
  const int64_t pods = (*ints)["pods"];
  const int64_t updates = (*ints)["updates"];
  const int64_t bookmark_ms = (*ints)["bookmark_interval_ms"];
  PodCorpus::Options options;
  options.fixture_path = flags->Get("fixture");
  options.pods = pods;
  options.updates = updates;
  options.namespaces =
      absl::StrSplit(flags->Get("namespaces"), ',', absl::SkipEmpty());
  absl::Time start = absl::Now();
  absl::StatusOr<std::unique_ptr<PodCorpus>> corpus =
      PodCorpus::Create(options);
  if (!corpus.ok()) {
    std::fprintf(stderr, "%s\n", corpus.status().ToString().c_str());
    return 1;
  }
  std::fprintf(stderr,
               "replay_server: %lld pods (%.1f MB, %.0f bytes each), %lld "
               "updates (%.1f MB) rendered in %.2f s\n",
               static_cast<long long>((*corpus)->pods()),
               (*corpus)->item_bytes() / 1e6,
               static_cast<double>((*corpus)->item_bytes()) /
                   static_cast<double>((*corpus)->pods()),
               static_cast<long long>((*corpus)->updates()),
               (*corpus)->event_bytes() / 1e6,
               absl::ToDoubleSeconds(absl::Now() - start));

  signal(SIGPIPE, SIG_IGN);
  ReplayServer::Options server_options;
  server_options.bookmark_interval = absl::Milliseconds(bookmark_ms);
  ReplayServer server(corpus->get(), server_options);
  if (absl::Status s = server.Start(static_cast<int>(port)); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  const std::string& ready = flags->Get("ready_file");
  if (!ready.empty()) {
    std::string tmp = ready + ".tmp";
    std::ofstream(tmp) << server.port() << "\n";
    std::rename(tmp.c_str(), ready.c_str());
  }
  std::fprintf(stderr, "replay_server: listening on 127.0.0.1:%d\n",
               server.port());
  // Runs until killed.
  for (;;) pause();
}

}  // namespace
}  // namespace kcr::bench

int main(int argc, char** argv) { return kcr::bench::Main(argc, argv); }
