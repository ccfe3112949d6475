// local-apiserver: runs the local Kubernetes API server (test/apiserver) as
// a process, for kubectl and local runs.
//
//   bazel run //cmd/local-apiserver -- --port=0 --kubeconfig-out=/tmp/kc
//   kubectl --kubeconfig=/tmp/kc get pods
//
// The first line on stdout is the server's URL. Serves until SIGTERM or
// SIGINT, then stops within a second. `--help` lists every flag.
#include <signal.h>

#include <cstdio>
#include <iostream>
#include <string>

#include "absl/time/time.h"
#include "gflags/gflags.h"
#include "glog/logging.h"
#include "test/apiserver/api_server.h"

DEFINE_string(address, "127.0.0.1",
              "Address to bind (loopback by default; 0.0.0.0 for all).");
DEFINE_int32(port, 0, "Port to listen on; 0 picks a free port.");
DEFINE_string(kubeconfig_out, "",
              "Write a kubeconfig for this server to this path.");
DEFINE_string(tls_cert_file, "",
              "Serve HTTPS with this PEM certificate (chain allowed).");
DEFINE_string(tls_key_file, "", "PEM private key for --tls-cert-file.");
DEFINE_string(tls_ca_file, "",
              "PEM CA certificate put into the kubeconfig (default: the "
              "certificate itself).");
DEFINE_string(token, "",
              "Require 'Authorization: Bearer <token>' on every request but "
              "health checks and /version (401 otherwise).");
DEFINE_uint64(history_size, 10000,
              "Watch events kept; a watch from an older resourceVersion gets "
              "410 Expired.");
DEFINE_int32(bookmark_interval_seconds, 60,
             "Seconds between watch BOOKMARK events (allowWatchBookmarks).");
DEFINE_int32(min_request_timeout_seconds, 1800,
             "A watch without timeoutSeconds ends after this times 1+rand.");
DEFINE_string(version_minor, "32",
              "Minor version in /version (kubectl's dispatcher picks the "
              "matching kubectl from it).");
DEFINE_string(git_version, "v1.32.4", "gitVersion in /version.");
DEFINE_bool(fault_endpoint, false,
            "Serve the fault-injection control endpoint /fault-injection "
            "(GET/PUT options JSON; POST /fault-injection/compact; POST "
            "/fault-injection/restart).");
DEFINE_int64(fault_watch_close_after_events, 0,
             "Fault: close every watch after this many events (0: never).");
DEFINE_int32(fault_watch_close_after_seconds, 0,
             "Fault: close every watch this many seconds after it started "
             "(0: never).");
DEFINE_double(fault_error_fraction, 0,
              "Fault: share (0..1) of resource requests answered 500.");
DEFINE_double(fault_throttle_fraction, 0,
              "Fault: share (0..1) of resource requests answered 429 with "
              "Retry-After.");
DEFINE_int32(fault_retry_after_seconds, 1,
             "Fault: Retry-After seconds on injected 429s.");
DEFINE_int32(fault_delay_ms, 0,
             "Fault: delay every resource request by this many milliseconds.");

int main(int argc, char** argv) {
  gflags::SetUsageMessage(
      "local-apiserver [flags]: a local Kubernetes API server. Prints its "
      "URL as the first line of stdout and serves until SIGTERM/SIGINT.");
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  google::InitGoogleLogging(argv[0]);
  FLAGS_logtostderr = true;

  // Every thread inherits this mask; the main thread takes the signals.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  kcr::apiserver::ApiServerOptions options;
  options.bind_address = FLAGS_address;
  options.port = FLAGS_port;
  options.tls_cert_file = FLAGS_tls_cert_file;
  options.tls_key_file = FLAGS_tls_key_file;
  options.tls_ca_file = FLAGS_tls_ca_file;
  options.token = FLAGS_token;
  options.history_size = FLAGS_history_size;
  options.bookmark_interval = absl::Seconds(FLAGS_bookmark_interval_seconds);
  options.min_request_timeout =
      absl::Seconds(FLAGS_min_request_timeout_seconds);
  options.minor = FLAGS_version_minor;
  options.git_version = FLAGS_git_version;
  options.enable_fault_endpoint = FLAGS_fault_endpoint;
  options.faults.watch_close_after_events =
      FLAGS_fault_watch_close_after_events;
  options.faults.watch_close_after =
      absl::Seconds(FLAGS_fault_watch_close_after_seconds);
  options.faults.error_fraction = FLAGS_fault_error_fraction;
  options.faults.throttle_fraction = FLAGS_fault_throttle_fraction;
  options.faults.retry_after_seconds = FLAGS_fault_retry_after_seconds;
  options.faults.delay = absl::Milliseconds(FLAGS_fault_delay_ms);
  if (FLAGS_tls_cert_file.empty() != FLAGS_tls_key_file.empty()) {
    std::cerr << "--tls-cert-file and --tls-key-file go together\n";
    return 2;
  }

  auto server = kcr::apiserver::ApiServer::Start(options);
  if (!server.ok()) {
    std::cerr << "local-apiserver: " << server.status() << "\n";
    return 1;
  }
  if (!FLAGS_kubeconfig_out.empty()) {
    absl::Status s = (*server)->WriteKubeconfig(FLAGS_kubeconfig_out);
    if (!s.ok()) {
      std::cerr << "local-apiserver: " << s << "\n";
      return 1;
    }
  }
  std::cout << (*server)->url() << std::endl;
  LOG(INFO) << "serving url=" << (*server)->url();

  int sig = 0;
  sigwait(&signals, &sig);
  LOG(INFO) << "stopping on signal " << sig;
  (*server)->Stop();
  return 0;
}
