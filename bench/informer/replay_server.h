// ReplayServer: a small list+watch HTTP/1.1 server for the informer
// benchmark, so that the server is never what an informer waits for
// (replay_server_main.cc runs it as a program).
//
// It serves the pre-rendered bytes of a PodCorpus (pod_corpus.h): the
// snapshot at resourceVersion N and a history of U MODIFIED events after
// it, with no per-request encoding, one thread per connection and one
// writev per batch of pre-rendered objects.
//
// What it answers, as kube-apiserver with its watch cache would:
//   GET /api/v1/pods, /api/v1/namespaces/{ns}/pods
//       resourceVersion=0 without continue: the whole list whatever the
//       limit; otherwise `limit` pages with `continue` tokens (kube's
//       format: base64url of {"v","rv","start"}) and remainingItemCount.
//       Lists always serve the snapshot at N (the history is replayed only
//       to watches). Selectors are ignored.
//   GET ...?watch=true&resourceVersion=R[&allowWatchBookmarks=true]
//       [&timeoutSeconds=T]: a chunked stream of the events after R
//       (R = 0 or empty: ADDED for every pod first; R < N: a 410 Expired
//       ERROR event), then a BOOKMARK at the last resourceVersion every
//       bookmark interval if allowed, until the client closes or T passes.
//   POST /start-updates: releases the updates. A watch that starts at or
//       before N holds its MODIFIED events until a POST that arrives after
//       it connected, so a harness can sync first and then time the
//       updates from the moment it asks for them; a watch that resumes
//       from inside the history streams at once.
//   GET /version, /api, /apis, /api/v1: enough discovery for clients.
//
// Thread-safe: Start once, Stop (or the destructor) from any thread.
#ifndef KCR_BENCH_INFORMER_REPLAY_SERVER_H_
#define KCR_BENCH_INFORMER_REPLAY_SERVER_H_

#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "base/mutex.h"
#include "bench/informer/pod_corpus.h"

namespace kcr::bench {

class ReplayServer {
 public:
  struct Options {
    // Between bookmarks once a watch has caught up.
    absl::Duration bookmark_interval = absl::Seconds(10);
  };

  // `corpus` is not owned and must outlive the server.
  ReplayServer(const PodCorpus* corpus, const Options& options);
  ~ReplayServer();
  ReplayServer(const ReplayServer&) = delete;
  ReplayServer& operator=(const ReplayServer&) = delete;

  // Listens on 127.0.0.1:port (0: any free port) and accepts on a thread
  // of its own; each connection gets a thread too.
  absl::Status Start(int port);
  int port() const { return port_; }

  // Closes the listener and every connection and joins their threads.
  void Stop();

  // A parsed HTTP request (defined in the .cc).
  struct Request;

 private:
  void AcceptLoop();
  void ServeConnection(int fd);
  bool Handle(int fd, const Request& request);
  bool ServeList(int fd, const Request& request, const std::string& namespace_);
  bool ServeWatch(int fd, const Request& request,
                  const std::string& namespace_);
  const std::vector<int64_t>& Scope(const std::string& namespace_) const;
  std::string EncodeContinue(const std::string& last_key) const;
  int64_t DecodeContinue(const std::string& token,
                         const std::string& namespace_) const;
  bool Wait(int fd, absl::Time deadline, int64_t epoch);

  const PodCorpus* const corpus_;
  const Options options_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::thread accept_thread_;

  Mutex mu_;
  // Signalled on a release and on Stop.
  CondVar released_;
  int64_t release_epoch_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  absl::flat_hash_set<int> open_fds_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> threads_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kcr::bench

#endif  // KCR_BENCH_INFORMER_REPLAY_SERVER_H_
