// local-apiserver: runs the local Kubernetes API server (test/apiserver) as
// a process, for kubectl and local runs.
//
//   bazel run //cmd/local-apiserver -- --port=0 --kubeconfig-out=/tmp/kc
//   kubectl --kubeconfig=/tmp/kc get pods
//
// The first line on stdout is the server's URL. Serves until SIGTERM or
// SIGINT, then stops within a second. `--help` lists every flag.
#include <signal.h>
#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "apiserver/api_server.h"
#include "apiserver/auth/token_file.h"
#include "apiserver/kube_controllers/scheduler.h"
#include "base/flags.h"
#include "base/tls_certs.h"
#include "gflags/gflags.h"
#include "glog/logging.h"

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
DEFINE_string(token_auth_file, "",
              "Static tokens, kube's CSV: token,user,uid,\"group1,group2\" "
              "per line; a bad line stops the server (exit 2).");
DEFINE_string(client_ca_file, "",
              "PEM CA bundle: a client certificate it signed authenticates "
              "its CN as the user and its O entries as groups (HTTPS only).");
DEFINE_string(service_account_key_file, "",
              "PEM RSA private key that signs service-account tokens "
              "(TokenRequest, kubectl create token); default: a key "
              "generated at start.");
DEFINE_string(service_account_issuer,
              "https://kubernetes.default.svc.cluster.local",
              "The iss claim of service-account tokens, and their default "
              "audience.");
DEFINE_bool(anonymous_auth, true,
            "Requests without a credential are system:anonymous in "
            "system:unauthenticated; false: 401. --token turns it off.");
DEFINE_string(authorization_mode, "AlwaysAllow",
              "AlwaysAllow (every request) or RBAC (Roles, ClusterRoles and "
              "their bindings, with kube's default cluster roles).");
DEFINE_string(enable_admission_plugins, "",
              "Admission plugins to turn on beyond the defaults, comma "
              "separated: OwnerReferencesPermissionEnforcement (setting "
              "blockOwnerDeletion needs update on the owner's finalizers).");
DEFINE_uint64(history_size, 10000,
              "Watch events kept; a watch from an older resourceVersion gets "
              "410 Expired.");
DEFINE_string(event_ttl, "1h",
              "Events are deleted this long after their last write (a "
              "duration: 1h, 5m, 90s); 0 keeps them.");
DEFINE_int32(bookmark_interval_seconds, 60,
             "Seconds between watch BOOKMARK events (allowWatchBookmarks).");
DEFINE_int32(min_request_timeout_seconds, 1800,
             "A watch without timeoutSeconds ends after this times 1+rand.");
DEFINE_string(version_minor, "32",
              "Minor version in /version (kubectl's dispatcher picks the "
              "matching kubectl from it); follows --git-version when only "
              "that is given.");
DEFINE_string(git_version, "v1.32.4",
              "gitVersion in /version, vMAJOR.MINOR.PATCH; follows "
              "--version-minor (as v1.<minor>.0) when only that is given.");
DEFINE_bool(fault_endpoint, false,
            "Serve the fault-injection control endpoint /fault-injection "
            "(GET/PUT options and rules JSON: errorRules, crashAfterWrite, "
            "watchHolds, watchDrops; POST /fault-injection/compact; POST "
            "/fault-injection/restart; GET /fault-injection/writes?since=N; "
            "POST /fault-injection/release-watch-holds).");
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
DEFINE_bool(fault_ignore_shard_selector, false,
            "Fault: ignore shardSelector on list and watch, as a server "
            "without the ShardedListAndWatch gate does.");

DEFINE_bool(secure, false,
            "Serve HTTPS with a freshly generated CA and server certificate "
            "(for 127.0.0.1, ::1, localhost and --tls-san), written to "
            "--cert-dir; the kubeconfig trusts that CA. Ignored when "
            "--tls-cert-file is given.");
DEFINE_string(cert_dir, "",
              "Directory for --secure's ca.crt, server.crt and server.key, "
              "created when missing (default: a new directory under "
              "$TMPDIR).");
DEFINE_string(tls_san, "",
              "Extra names (comma-separated DNS names or IPs) for --secure's "
              "server certificate.");
DEFINE_bool(garbage_collector, true,
            "Run the built-in garbage collector (ownerReferences: "
            "background, foreground, orphan).");
DEFINE_bool(namespace_controller, true,
            "Run the built-in namespace controller (a deleted namespace "
            "loses its contents, then goes).");
DEFINE_bool(deployment_controller, true,
            "Run the built-in deployment and replicaset controllers "
            "(Deployments make ReplicaSets, ReplicaSets make pods; rollouts, "
            "rollbacks, revision history).");
DEFINE_bool(simulate_node, true,
            "Run the simulated node: pods are scheduled and run, Never/"
            "OnFailure pods finish; with --deployment_controller=false, "
            "deployments report ready replicas without pods.");
DEFINE_int32(sim_running_after_ms, 500,
             "Simulated node: a pod runs this long after creation (pod "
             "annotation kcr.io/sim-running-after overrides).");
DEFINE_int32(sim_complete_after_ms, 2000,
             "Simulated node: a Never/OnFailure pod finishes this long after "
             "it started running (kcr.io/sim-complete-after overrides).");
DEFINE_int32(sim_deployment_ready_after_ms, 500,
             "Simulated node, with --deployment_controller=false: a "
             "deployment's status catches up with its spec this long after a "
             "change.");
DEFINE_string(sim_node_name, "kcr-node",
              "Simulated node: the first node's name; with --nodes above 1 "
              "the others are <name>-2, <name>-3, ...");
DEFINE_int32(nodes, 1,
             "Simulated nodes in the cluster; pods are scheduled among them "
             "by their requests, node selectors, affinity and tolerations.");
DEFINE_string(node_cpu, "32", "Each simulated node's cpu (a quantity).");
DEFINE_string(node_memory, "256Gi",
              "Each simulated node's memory (a quantity).");
DEFINE_int32(node_pods, 1000000, "Pods each simulated node takes.");
DEFINE_string(node_labels, "",
              "Labels of every simulated node beside kubernetes.io/hostname, "
              "os and arch: key=value,key=value.");

int main(int argc, char** argv) {
  const kcr::ProgramInfo program{
      .name = "local-apiserver",
      .usage = "local-apiserver [flags]",
      .about =
          "local-apiserver: a local Kubernetes API server. Prints its "
          "URL as the first line of stdout and serves until "
          "SIGTERM/SIGINT.",
      .flag_files = {"cmd/local-apiserver/main.cc"}};
  if (std::vector<std::string> args =
          kcr::ParseFlagsOrExit(program, argc, argv);
      !args.empty()) {
    std::cerr << "local-apiserver: unexpected argument \"" << args[0]
              << "\" (it takes flags only)\n";
    return 2;
  }
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
  if (!FLAGS_token_auth_file.empty()) {
    auto tokens = kcr::apiserver::auth::ReadTokenFile(FLAGS_token_auth_file);
    if (!tokens.ok()) {
      std::cerr << "local-apiserver: " << tokens.status().message() << "\n";
      return 2;
    }
  }
  if (FLAGS_authorization_mode != "AlwaysAllow" &&
      FLAGS_authorization_mode != "RBAC") {
    std::cerr << "local-apiserver: invalid --authorization-mode \""
              << FLAGS_authorization_mode << "\" (AlwaysAllow or RBAC)\n";
    return 2;
  }
  options.token_auth_file = FLAGS_token_auth_file;
  options.client_ca_file = FLAGS_client_ca_file;
  options.service_account_key_file = FLAGS_service_account_key_file;
  options.service_account_issuer = FLAGS_service_account_issuer;
  options.anonymous_auth = FLAGS_anonymous_auth;
  options.authorization_mode = FLAGS_authorization_mode;
  for (absl::string_view plugin :
       absl::StrSplit(FLAGS_enable_admission_plugins, ',', absl::SkipEmpty())) {
    if (plugin != "OwnerReferencesPermissionEnforcement") {
      std::cerr
          << "local-apiserver: invalid --enable-admission-plugins: \"" << plugin
          << "\" is not supported (OwnerReferencesPermissionEnforcement)\n";
      return 2;
    }
    options.enable_admission_plugins.emplace_back(plugin);
  }
  if (!absl::ParseDuration(FLAGS_event_ttl, &options.event_ttl) ||
      options.event_ttl < absl::ZeroDuration()) {
    std::cerr << "local-apiserver: invalid --event-ttl \"" << FLAGS_event_ttl
              << "\" (a duration such as 1h, 5m or 90s)\n";
    return 2;
  }
  options.bookmark_interval = absl::Seconds(FLAGS_bookmark_interval_seconds);
  options.min_request_timeout =
      absl::Seconds(FLAGS_min_request_timeout_seconds);
  {
    const bool minor_set =
        !gflags::GetCommandLineFlagInfoOrDie("version_minor").is_default;
    const bool git_set =
        !gflags::GetCommandLineFlagInfoOrDie("git_version").is_default;
    options.minor = FLAGS_version_minor;
    options.git_version = FLAGS_git_version;
    if (git_set && !minor_set) {
      absl::StatusOr<std::string> minor =
          kcr::apiserver::MinorOfGitVersion(FLAGS_git_version);
      if (!minor.ok()) {
        std::cerr << "local-apiserver: " << minor.status().message() << "\n";
        return 2;
      }
      options.minor = *minor;
    } else if (minor_set && !git_set) {
      options.git_version = absl::StrCat("v1.", FLAGS_version_minor, ".0");
    }
    if (absl::Status s =
            kcr::apiserver::ValidateVersion(options.git_version, options.minor);
        !s.ok()) {
      std::cerr << "local-apiserver: " << s.message() << "\n";
      return 2;
    }
  }
  options.enable_fault_endpoint = FLAGS_fault_endpoint;
  options.faults.watch_close_after_events =
      FLAGS_fault_watch_close_after_events;
  options.faults.watch_close_after =
      absl::Seconds(FLAGS_fault_watch_close_after_seconds);
  options.faults.error_fraction = FLAGS_fault_error_fraction;
  options.faults.throttle_fraction = FLAGS_fault_throttle_fraction;
  options.faults.retry_after_seconds = FLAGS_fault_retry_after_seconds;
  options.faults.delay = absl::Milliseconds(FLAGS_fault_delay_ms);
  options.faults.ignore_shard_selector = FLAGS_fault_ignore_shard_selector;
  if (FLAGS_tls_cert_file.empty() != FLAGS_tls_key_file.empty()) {
    std::cerr << "--tls-cert-file and --tls-key-file go together\n";
    return 2;
  }
  if (FLAGS_secure && FLAGS_tls_cert_file.empty()) {
    std::string dir = FLAGS_cert_dir;
    if (dir.empty()) {
      const char* tmp = getenv("TMPDIR");
      std::string pattern =
          std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
          "/local-apiserver-certs-XXXXXX";
      if (mkdtemp(pattern.data()) == nullptr) {
        std::cerr << "local-apiserver: cannot create " << pattern << "\n";
        return 1;
      }
      dir = pattern;
    }
    kcr::TlsOptions tls;
    for (absl::string_view name :
         absl::StrSplit(FLAGS_tls_san, ',', absl::SkipEmpty())) {
      tls.extra_names.emplace_back(name);
    }
    if (FLAGS_address != "127.0.0.1" && FLAGS_address != "0.0.0.0" &&
        FLAGS_address != "::1" && FLAGS_address != "localhost") {
      tls.extra_names.push_back(FLAGS_address);
    }
    auto material = kcr::GenerateTlsMaterial(tls);
    if (!material.ok()) {
      std::cerr << "local-apiserver: " << material.status() << "\n";
      return 1;
    }
    auto files = kcr::WriteTlsFiles(*material, dir);
    if (!files.ok()) {
      std::cerr << "local-apiserver: " << files.status() << "\n";
      return 1;
    }
    options.tls_cert_file = files->server_cert;
    options.tls_key_file = files->server_key;
    options.tls_ca_file = files->ca_cert;
    LOG(INFO) << "generated TLS certificates dir=" << dir;
  }
  options.controllers.garbage_collector = FLAGS_garbage_collector;
  options.controllers.namespace_controller = FLAGS_namespace_controller;
  options.controllers.deployment_controller = FLAGS_deployment_controller;
  options.controllers.replicaset_controller = FLAGS_deployment_controller;
  options.controllers.node_simulator = FLAGS_simulate_node;
  options.controllers.node.node_name = FLAGS_sim_node_name;
  if (FLAGS_nodes < 1) {
    std::cerr << "local-apiserver: invalid --nodes " << FLAGS_nodes
              << " (at least 1)\n";
    return 2;
  }
  options.controllers.node.nodes = FLAGS_nodes;
  for (const auto& [flag, value, milli] :
       {std::tuple<const char*, std::string, bool>{"cpu", FLAGS_node_cpu, true},
        {"memory", FLAGS_node_memory, false}}) {
    if (!kcr::apiserver::ParseQuantity(value, milli).has_value()) {
      std::cerr << "local-apiserver: invalid --node-" << flag << " \"" << value
                << "\" (a quantity such as 4, 500m, 8Gi)\n";
      return 2;
    }
  }
  if (FLAGS_node_pods < 1) {
    std::cerr << "local-apiserver: invalid --node-pods " << FLAGS_node_pods
              << " (at least 1)\n";
    return 2;
  }
  options.controllers.node.node_cpu = FLAGS_node_cpu;
  options.controllers.node.node_memory = FLAGS_node_memory;
  options.controllers.node.node_pods = std::to_string(FLAGS_node_pods);
  for (absl::string_view pair :
       absl::StrSplit(FLAGS_node_labels, ',', absl::SkipEmpty())) {
    const size_t eq = pair.find('=');
    if (eq == absl::string_view::npos || eq == 0) {
      std::cerr << "local-apiserver: invalid --node-labels entry \"" << pair
                << "\" (key=value)\n";
      return 2;
    }
    options.controllers.node.node_labels[std::string(pair.substr(0, eq))] =
        std::string(pair.substr(eq + 1));
  }
  options.controllers.node.running_after =
      absl::Milliseconds(FLAGS_sim_running_after_ms);
  options.controllers.node.complete_after =
      absl::Milliseconds(FLAGS_sim_complete_after_ms);
  options.controllers.node.deployment_ready_after =
      absl::Milliseconds(FLAGS_sim_deployment_ready_after_ms);

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
  const absl::Time stopping = absl::Now();
  (*server)->Stop();
  LOG(INFO) << "stopped in " << absl::Now() - stopping;
  // Serving and the controllers have stopped and the store lives in memory
  // only: freeing it object by object would take seconds at 50,000 objects
  // and keep nothing, so the process ends here, as kube-apiserver's does.
  google::FlushLogFiles(google::GLOG_INFO);
  std::cout.flush();
  std::_Exit(0);
}
