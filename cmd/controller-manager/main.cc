// controller-manager: runs kcr's controllers against a cluster (the
// kubeconfig files, else the in-cluster config), or, with --embedded,
// against a local API server it starts in this process.
//
//   bazel run //cmd/controller-manager -- --embedded
//   bazel run //cmd/controller-manager -- --kubeconfig=$HOME/.kube/config
//
// Stops cleanly at the first SIGINT or SIGTERM (exit 0), at once at the
// second (exit 1). Bad flags, and a kubeconfig that is missing or cannot
// be used, are one line on stderr and exit code 2. `--help` lists the
// flags; docs/controller-manager.md says more.
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "base/context.h"
#include "base/flags.h"
#include "base/mutex.h"
#include "base/signal_handler.h"
#include "cmd/controller-manager/embedded.h"
#include "controllers/copyrator/copyrator_controller.h"
#include "controllers/loadtest/loadtest_controller.h"
#include "controllers/nginx/nginx_controller.h"
#include "controllers/pods/pods_controller.h"
#include "controllers/simpledeployment/simpledeployment_handlers.h"
#include "gflags/gflags.h"
#include "glog/logging.h"
#include "runtime/client/options.h"
#include "runtime/client/rest_client.h"
#include "runtime/client/rest_config.h"
#include "runtime/controller/manager.h"
#include "runtime/envtest/environment.h"
#include "runtime/handlers/registry.h"
#include "runtime/sharding/shard_ownership.h"

DEFINE_string(kubeconfig, "",
              "Path to a kubeconfig file. Default: $KUBECONFIG, else "
              "~/.kube/config, else the in-cluster config.");
DEFINE_string(context, "",
              "The kubeconfig context to use (default: its "
              "current-context).");
DEFINE_string(namespace, "",
              "Watch only this namespace; empty for all (env NAMESPACE).");
DEFINE_string(controllers, "*",
              "Comma-separated controllers to run; '*' for all. Known: "
              "copyrator, loadtest, nginx, pods, simpledeployment.");
DEFINE_int32(workers, 1,
             "Concurrent reconciles per controller with a work queue (the "
             "pods controller has none: it reports events in order); for "
             "simpledeployment, objects handled at once.");
DEFINE_bool(leader_elect, false,
            "Run the controllers only while holding the leader-election "
            "Lease, for running several replicas.");
DEFINE_string(leader_election_namespace, "",
              "Namespace of the leader-election Lease (default: the "
              "client's namespace, in a cluster the pod's own).");
DEFINE_string(leader_election_id, "kcr-controller-manager",
              "Name of the leader-election Lease.");
DEFINE_string(leader_elect_lease_duration, "15s",
              "How long a standby waits after the leader's last renewal "
              "before it takes the Lease.");
DEFINE_string(leader_elect_renew_deadline, "10s",
              "How long the leader keeps trying to renew before it gives "
              "up leading; less than --leader-elect-lease-duration.");
DEFINE_string(leader_elect_retry_period, "2s",
              "How often candidates try to take or renew the Lease.");
DEFINE_int32(shards, 0,
             "Split each controller's objects into this many virtual shards, "
             "owned through Leases, so that N replicas share the work (each "
             "reconciles and watches only the shards it holds); 0 runs "
             "unsharded, every controller under --leader-elect when set.");
DEFINE_string(shard_by, "uid",
              "What an object's shard is computed from: uid (its "
              "metadata.uid; owned objects go with their owner) or namespace "
              "(every object of a namespace together).");
DEFINE_string(shard_lease_duration, "15s",
              "How long a shard's Lease lives after its holder's last "
              "renewal: the longest a dead replica's shards wait for a new "
              "owner (plus --shard-retry-period).");
DEFINE_string(shard_renew_deadline, "10s",
              "How long a replica keeps trying to renew a shard's Lease "
              "before it stops working on the shard; less than "
              "--shard-lease-duration.");
DEFINE_string(shard_retry_period, "2s",
              "How often a replica renews its shards and rebalances.");
DEFINE_string(shard_lease_namespace, "",
              "Namespace of the shard Leases (default: "
              "--leader-election-namespace, else the kubeconfig's or the "
              "pod's namespace).");
DEFINE_string(reconcile_audit_file, "",
              "Append a line per reconcile to this file: controller, "
              "namespace/name, this replica's identity, and the start and "
              "end in Unix nanoseconds (for tests of sharding).");
DEFINE_string(metrics_bind_address, ":8080",
              "Address to serve /metrics on (host:port, :port for every "
              "interface, port 0 for any free one); '0' serves none.");
DEFINE_bool(metrics_secure, false,
            "Serve /metrics over HTTPS to callers whose bearer token passes "
            "a TokenReview and who may get the /metrics URL by a "
            "SubjectAccessReview (the manager then needs the "
            "system:auth-delegator role). Off: plain HTTP, for local runs.");
DEFINE_string(metrics_cert_dir, "",
              "Directory with the secure metrics' certificate and key; "
              "empty: a self-signed certificate made at start.");
DEFINE_string(metrics_cert_name, "tls.crt",
              "File name of the certificate in --metrics-cert-dir.");
DEFINE_string(metrics_cert_key, "tls.key",
              "File name of the private key in --metrics-cert-dir.");
DEFINE_string(health_probe_bind_address, ":8081",
              "Address to serve /healthz and /readyz on; '0' serves none.");
DEFINE_double(qps, 20,
              "Requests per second to the API server (client-side limit); "
              "negative for none.");
DEFINE_int32(burst, 30, "Requests allowed above --qps in a burst.");
DEFINE_string(resync_period, "10h",
              "How often the informers replay their caches to the "
              "controllers (a duration: 30s, 10m, 10h); 0 for never.");
DEFINE_string(loadtest_image, "kcr/controller-manager:latest",
              "Image of the load pods the loadtest controller starts; it "
              "must hold /usr/local/bin/loadtest-runner (env "
              "LOADTEST_IMAGE).");
DEFINE_bool(embedded, false,
            "Start a local API server in this process on loopback (with its "
            "garbage collector, namespace controller and simulated node), "
            "with RBAC enforced over HTTPS; install the CRDs and "
            "manifests/rbac, write a kubeconfig for it (an admin token) and "
            "run the controllers against it as the kcr-controller-manager "
            "ServiceAccount. --kubeconfig and --context are ignored.");
DEFINE_string(event_ttl, "1h",
              "With --embedded: the local API server deletes Events this "
              "long after their last write (a duration: 1h, 5m, 90s; 0 "
              "keeps them), as kube-apiserver's --event-ttl.");

namespace {

constexpr char kProgram[] = "controller-manager";

using kcr::controller::Manager;

// What the flags say to every controller, and where a controller keeps
// what must outlive the Manager.
struct ControllerFlags {
  int workers = 1;
  std::string namespace_;
  std::string loadtest_image;
  // The handler registries of the handler-model controllers: their
  // controllers call into them until the Manager is destroyed, so main
  // owns them and keeps them past it.
  std::vector<std::unique_ptr<kcr::handlers::Registry>>* registries = nullptr;
  // Ends at SIGINT/SIGTERM: bounds what a controller does as it is added
  // (the handlers' discovery and startup handlers).
  kcr::Context ctx;
};

// Appends one line per reconcile to a file:
//   <controller> <namespace/name> <identity> <start ns> <end ns>
class ReconcileAudit {
 public:
  static absl::StatusOr<std::unique_ptr<ReconcileAudit>> Open(
      const std::string& path) {
    FILE* f = fopen(path.c_str(), "a");
    if (f == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot open --reconcile-audit-file ", path));
    }
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    return std::unique_ptr<ReconcileAudit>(
        new ReconcileAudit(f, absl::StrCat(host, "_", getpid())));
  }
  ~ReconcileAudit() { fclose(file_); }

  void Record(const std::string& controller,
              const kcr::controller::Request& request, absl::Time start,
              absl::Time end) {
    const std::string line = absl::StrCat(
        controller, " ", request.ToString(), " ", identity_, " ",
        absl::ToUnixNanos(start), " ", absl::ToUnixNanos(end), "\n");
    kcr::MutexLock lock(&mu_);
    fwrite(line.data(), 1, line.size(), file_);
    fflush(file_);
  }

 private:
  ReconcileAudit(FILE* file, std::string identity)
      : file_(file), identity_(std::move(identity)) {}

  FILE* const file_;
  const std::string identity_;
  kcr::Mutex mu_;
};

// Each controller: how to add it to a Manager.
using AddFunc = std::function<absl::Status(Manager&, const ControllerFlags&)>;

std::map<std::string, AddFunc> KnownControllers() {
  return {
      {"copyrator",
       [](Manager& mgr, const ControllerFlags& flags) {
         kcr::copyrator::CopyratorOptions options;
         options.workers = flags.workers;
         return kcr::copyrator::AddCopyratorController(mgr, options);
       }},
      {"loadtest",
       [](Manager& mgr, const ControllerFlags& flags) {
         kcr::loadtest::LoadTestOptions options;
         options.image = flags.loadtest_image;
         options.workers = flags.workers;
         return kcr::loadtest::AddLoadTestController(mgr, options);
       }},
      {"nginx",
       [](Manager& mgr, const ControllerFlags& flags) {
         return kcr::nginx::AddNginxController(
             mgr, kcr::nginx::NginxOptions{.workers = flags.workers});
       }},
      {"pods",
       [](Manager& mgr, const ControllerFlags&) {
         return kcr::pods::AddPodsController(mgr, kcr::pods::PodsOptions{});
       }},
      {"simpledeployment",
       [](Manager& mgr, const ControllerFlags& flags) {
         kcr::handlers::OperatorOptions options;
         options.name = "simpledeployment";
         options.workers = flags.workers;
         options.namespace_ = flags.namespace_;
         auto& registry = flags.registries->emplace_back(
             std::make_unique<kcr::handlers::Registry>(options));
         kcr::simpledeployment::RegisterSimpleDeploymentHandlers(*registry);
         return kcr::handlers::AddToManager(*registry, mgr, flags.ctx);
       }},
  };
}

// A message on one line (kubeconfig errors can quote YAML).
std::string OneLine(absl::string_view message) {
  std::string s(message);
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return s;
}

int Fail(absl::string_view message, int code = 2) {
  std::cerr << kProgram << ": " << OneLine(message) << "\n";
  return code;
}

// The controllers --controllers names, or an error naming the unknown one.
absl::StatusOr<std::vector<std::string>> SelectedControllers(
    const std::map<std::string, AddFunc>& known) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (absl::string_view part :
       absl::StrSplit(FLAGS_controllers, ',', absl::SkipWhitespace())) {
    const std::string name(absl::StripAsciiWhitespace(part));
    if (name == "*") {
      for (const auto& [n, add] : known) {
        if (seen.insert(n).second) names.push_back(n);
      }
      continue;
    }
    if (known.count(name) == 0) {
      std::vector<std::string> all;
      for (const auto& [n, add] : known) all.push_back(n);
      return absl::InvalidArgumentError(
          absl::StrCat("unknown controller \"", name, "\" in --controllers (",
                       "known: ", absl::StrJoin(all, ", "), ")"));
    }
    if (seen.insert(name).second) names.push_back(name);
  }
  if (names.empty()) {
    return absl::InvalidArgumentError("--controllers names no controller");
  }
  return names;
}

// "http://<host>:<port>" for a bound "host:port" (":port" is every
// interface: loopback reaches it).
std::string HttpUrl(const std::string& address) {
  if (!address.empty() && address[0] == ':') {
    return absl::StrCat("http://127.0.0.1", address);
  }
  return absl::StrCat("http://", address);
}

}  // namespace

int main(int argc, char** argv) {
  const kcr::ProgramInfo program{
      .name = kProgram,
      .usage = "controller-manager [flags]",
      .about =
          "controller-manager: runs kcr's controllers against the "
          "cluster of --kubeconfig (or the in-cluster config), or "
          "against an API server of its own with --embedded. Stops "
          "on SIGINT/SIGTERM.",
      .flag_files = {"cmd/controller-manager/main.cc"}};
  if (std::vector<std::string> args =
          kcr::ParseFlagsOrExit(program, argc, argv);
      !args.empty()) {
    return Fail(absl::StrCat("unexpected argument \"", args[0],
                             "\" (it takes flags only)"));
  }
  if (gflags::GetCommandLineFlagInfoOrDie("namespace").is_default) {
    if (const char* ns = getenv("NAMESPACE"); ns != nullptr) {
      FLAGS_namespace = ns;
    }
  }
  if (gflags::GetCommandLineFlagInfoOrDie("loadtest_image").is_default) {
    if (const char* image = getenv("LOADTEST_IMAGE");
        image != nullptr && *image != '\0') {
      FLAGS_loadtest_image = image;
    }
  }
  const std::map<std::string, AddFunc> known = KnownControllers();
  absl::StatusOr<std::vector<std::string>> selected =
      SelectedControllers(known);
  if (!selected.ok()) return Fail(selected.status().message());
  if (FLAGS_workers < 1) {
    return Fail(
        absl::StrCat("--workers must be at least 1, not ", FLAGS_workers));
  }
  if (FLAGS_burst < 0) {
    return Fail(
        absl::StrCat("--burst must not be negative, not ", FLAGS_burst));
  }
  absl::Duration resync_period;
  if (!absl::ParseDuration(FLAGS_resync_period, &resync_period) ||
      resync_period < absl::ZeroDuration()) {
    return Fail(absl::StrCat("invalid --resync-period \"", FLAGS_resync_period,
                             "\" (a duration such as 30s, 10m or 10h)"));
  }
  absl::Duration lease_duration, renew_deadline, retry_period;
  for (auto [flag, value, out] :
       {std::tuple{"leader-elect-lease-duration",
                   &FLAGS_leader_elect_lease_duration, &lease_duration},
        std::tuple{"leader-elect-renew-deadline",
                   &FLAGS_leader_elect_renew_deadline, &renew_deadline},
        std::tuple{"leader-elect-retry-period",
                   &FLAGS_leader_elect_retry_period, &retry_period}}) {
    if (!absl::ParseDuration(*value, out) || *out <= absl::ZeroDuration()) {
      return Fail(absl::StrCat("invalid --", flag, " \"", *value,
                               "\" (a positive duration such as 15s)"));
    }
  }
  if (renew_deadline >= lease_duration || retry_period >= renew_deadline) {
    return Fail(
        "--leader-elect-retry-period < --leader-elect-renew-deadline < "
        "--leader-elect-lease-duration must hold");
  }
  absl::Duration shard_lease_duration, shard_renew_deadline, shard_retry_period;
  for (auto [flag, value, out] :
       {std::tuple{"shard-lease-duration", &FLAGS_shard_lease_duration,
                   &shard_lease_duration},
        std::tuple{"shard-renew-deadline", &FLAGS_shard_renew_deadline,
                   &shard_renew_deadline},
        std::tuple{"shard-retry-period", &FLAGS_shard_retry_period,
                   &shard_retry_period}}) {
    if (!absl::ParseDuration(*value, out) || *out <= absl::ZeroDuration()) {
      return Fail(absl::StrCat("invalid --", flag, " \"", *value,
                               "\" (a positive duration such as 15s)"));
    }
  }
  if (shard_renew_deadline >= shard_lease_duration ||
      shard_retry_period * 1.2 >= shard_renew_deadline) {
    return Fail(
        "--shard-retry-period * 1.2 < --shard-renew-deadline < "
        "--shard-lease-duration must hold");
  }
  if (FLAGS_shards < 0 || FLAGS_shards > 65536) {
    return Fail(
        absl::StrCat("--shards must be in [0, 65536], not ", FLAGS_shards));
  }
  if (FLAGS_shard_by != "uid" && FLAGS_shard_by != "namespace") {
    return Fail(absl::StrCat("--shard-by must be uid or namespace, not \"",
                             FLAGS_shard_by, "\""));
  }
  absl::Duration event_ttl;
  if (!absl::ParseDuration(FLAGS_event_ttl, &event_ttl) ||
      event_ttl < absl::ZeroDuration()) {
    return Fail(absl::StrCat("invalid --event-ttl \"", FLAGS_event_ttl,
                             "\" (a duration such as 1h, 5m or 90s)"));
  }
  if (FLAGS_loadtest_image.empty()) {
    return Fail("--loadtest-image must not be empty");
  }
  if (FLAGS_leader_elect && FLAGS_leader_election_id.empty()) {
    return Fail("--leader-election-id must not be empty with --leader-elect");
  }
  google::InitGoogleLogging(argv[0]);
  FLAGS_logtostderr = true;
  // From here on, SIGINT/SIGTERM end `ctx`: a signal while starting up
  // stops the Manager as soon as it runs.
  const kcr::Context ctx = kcr::SetupSignalHandler();

  // The embedded API server, when asked for; it outlives the Manager.
  std::unique_ptr<kcr::envtest::Environment> cluster;
  kcr::client::Config config;
  kcr::client::LoadingRules rules;
  if (FLAGS_embedded) {
    // RBAC enforced, an admin token in the printed kubeconfig, and the
    // manager running as the ServiceAccount of manifests/rbac: a run
    // shows that the shipped roles are enough.
    auto started =
        kcr::envtest::Environment::Start({.crds = kcr::cmd::EmbeddedCrds(),
                                          .event_ttl = event_ttl,
                                          .authorization_mode = "RBAC"});
    if (!started.ok()) return Fail(started.status().message(), 1);
    cluster = *std::move(started);
    if (absl::Status s = cluster->CreateObjects(kcr::cmd::EmbeddedRbac());
        !s.ok()) {
      return Fail(s.message(), 1);
    }
    // The embedded server lives as long as this process: the manager's
    // token outlasts any run rather than expire under it.
    auto sa = cluster->ServiceAccountConfig(kcr::cmd::kManagerNamespace,
                                            kcr::cmd::kManagerServiceAccount,
                                            absl::Hours(24 * 365));
    if (!sa.ok()) return Fail(sa.status().message(), 1);
    config = *std::move(sa);
  } else {
    rules.explicit_path = FLAGS_kubeconfig;
    rules.context = FLAGS_context;
    if (auto loaded = kcr::client::BuildConfig(rules); loaded.ok()) {
      config = *std::move(loaded);
    } else {
      return Fail(
          absl::StrCat("no usable kubeconfig: ", loaded.status().message()));
    }
  }
  config.qps = FLAGS_qps;
  config.burst = FLAGS_burst;
  if (absl::Status s = kcr::client::ValidateConfig(config); !s.ok()) {
    return Fail(absl::StrCat("no usable kubeconfig: ", s.message()));
  }

  kcr::controller::ManagerOptions options;
  options.cache.namespace_ = FLAGS_namespace;
  options.cache.default_resync = resync_period;
  options.metrics_bind_address = FLAGS_metrics_bind_address;
  options.health_probe_bind_address = FLAGS_health_probe_bind_address;
  options.metrics_secure = FLAGS_metrics_secure;
  options.metrics_cert_dir = FLAGS_metrics_cert_dir;
  options.metrics_cert_name = FLAGS_metrics_cert_name;
  options.metrics_key_name = FLAGS_metrics_cert_key;
  options.leader_election = FLAGS_leader_elect;
  options.leader_election_id = FLAGS_leader_election_id;
  options.lease_duration = lease_duration;
  options.renew_deadline = renew_deadline;
  options.retry_period = retry_period;
  options.leader_election_namespace = FLAGS_leader_election_namespace.empty()
                                          ? config.namespace_
                                          : FLAGS_leader_election_namespace;
  options.sharding.shards = FLAGS_shards;
  options.sharding.shard_by = FLAGS_shard_by == "namespace"
                                  ? kcr::sharding::ShardBy::kNamespace
                                  : kcr::sharding::ShardBy::kUid;
  options.sharding.lease_namespace = FLAGS_shard_lease_namespace;
  options.sharding.lease_duration = shard_lease_duration;
  options.sharding.renew_deadline = shard_renew_deadline;
  options.sharding.retry_period = shard_retry_period;
  // A shard given back waits this long for its reconciles, leaving the
  // other shards' renewals time within their deadline.
  options.sharding.drain_timeout = std::min(
      absl::Seconds(5), (shard_renew_deadline - shard_retry_period * 1.2) / 2);
  // The audit file outlives the Manager.
  std::unique_ptr<ReconcileAudit> audit;
  if (!FLAGS_reconcile_audit_file.empty()) {
    auto opened = ReconcileAudit::Open(FLAGS_reconcile_audit_file);
    if (!opened.ok()) return Fail(opened.status().message(), 1);
    audit = *std::move(opened);
    options.on_reconciled = [a = audit.get()](
                                const std::string& controller,
                                const kcr::controller::Request& request,
                                absl::Time start, absl::Time end) {
      a->Record(controller, request, start, end);
    };
  }
  // Declared before the Manager, so destroyed after it.
  std::vector<std::unique_ptr<kcr::handlers::Registry>> registries;
  auto mgr = Manager::New(config, options);
  if (!mgr.ok()) return Fail(mgr.status().message(), 1);
  // The Manager maps the embedded server's custom resources by kind.
  if (cluster != nullptr) {
    if (absl::Status s = cluster->MapCrds(*(*mgr)->GetRESTMapper()); !s.ok()) {
      return Fail(s.message(), 1);
    }
  }
  const ControllerFlags controller_flags{.workers = FLAGS_workers,
                                         .namespace_ = FLAGS_namespace,
                                         .loadtest_image = FLAGS_loadtest_image,
                                         .registries = &registries,
                                         .ctx = ctx};
  for (const std::string& name : *selected) {
    if (absl::Status s = known.at(name)(**mgr, controller_flags); !s.ok()) {
      return Fail(absl::StrCat("adding controller ", name, ": ", s.message()),
                  1);
    }
  }
  LOG(INFO) << "controllers=" << absl::StrJoin(*selected, ",") << " namespace="
            << (FLAGS_namespace.empty() ? "*" : FLAGS_namespace)
            << " host=" << config.host;
  if (!(*mgr)->metrics_address().empty()) {
    std::string url = HttpUrl((*mgr)->metrics_address());
    if (FLAGS_metrics_secure) url.replace(0, 4, "https");
    std::cout << "metrics: " << url << "/metrics" << std::endl;
  }
  if (!(*mgr)->health_probe_address().empty()) {
    std::cout << "health probes: " << HttpUrl((*mgr)->health_probe_address())
              << "/healthz, /readyz" << std::endl;
  }

  if (cluster != nullptr) {
    if (absl::Status s = cluster->CreateObjects(kcr::cmd::EmbeddedSamples());
        !s.ok()) {
      return Fail(s.message(), 1);
    }
    const std::string kubectl =
        absl::StrCat("kubectl --kubeconfig=", cluster->kubeconfig());
    std::cout << "embedded API server: " << cluster->url() << "\n"
              << "kubeconfig: " << cluster->kubeconfig() << "\n"
              << "controllers run as: system:serviceaccount:"
              << kcr::cmd::kManagerNamespace << ":"
              << kcr::cmd::kManagerServiceAccount << " (manifests/rbac)\n"
              << "try:\n"
              << "  " << kubectl << " get nginxes,deployments,pods\n"
              << "  " << kubectl << " get loadtests -w\n"
              << "  " << kubectl << " get configmaps -A -l copyrator\n"
              << "  " << kubectl << " get sd,pods\n"
              << "Ctrl-C stops." << std::endl;
  }

  absl::Status s = (*mgr)->Start(ctx);
  mgr->reset();
  if (!s.ok()) {
    LOG(ERROR) << "stopped: " << s;
  } else {
    LOG(INFO) << "stopped";
  }
  const int code = s.ok() ? 0 : 1;
  if (cluster != nullptr) {
    // Serving and the built-in controllers stop here. The embedded store
    // lives in memory only: freeing it object by object would take seconds
    // at 50,000 objects and keep nothing, so the process ends at once.
    cluster->Stop();
    google::FlushLogFiles(google::GLOG_INFO);
    std::cout.flush();
    std::_Exit(code);
  }
  return code;
}
