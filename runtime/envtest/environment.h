// A Kubernetes API server for tests and local runs, in this process:
// controller-runtime's envtest, on kcr's local API server (apiserver/).
//
// Start() runs the server on 127.0.0.1 (a free port) with its built-in
// controllers (garbage collector, namespace, deployment, replicaset,
// endpoints) and its simulated node, writes a kubeconfig for it under
// $TMPDIR, installs the given CRDs (waiting until each is Established) and
// then the given objects. A controller manager connects with
// rest_config(); kubectl with --kubeconfig=<kubeconfig()>.
//
//   auto crds = envtest::ReadManifests({"config/crd"});
//   auto env = envtest::Environment::Start({.crds = *crds});
//   auto mgr = controller::Manager::New((*env)->rest_config());
//
// The server keeps everything in memory: it is for tests and for a
// manager's --embedded mode, not for data that must survive the process.
#ifndef KCR_RUNTIME_ENVTEST_ENVIRONMENT_H_
#define KCR_RUNTIME_ENVTEST_ENVIRONMENT_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/meta/rest_mapper.h"
#include "api/object.h"
#include "runtime/client/rest_client.h"
#include "runtime/client/rest_config.h"

namespace kcr::apiserver {
class ApiServer;
struct ApiServerOptions;
}  // namespace kcr::apiserver

namespace kcr::envtest {

// One manifest file: YAML (one or more documents) or JSON.
struct Manifest {
  std::string path;  // for error messages and logs
  std::string text;
};

// Reads each path: a file as it is, a directory as its *.yaml, *.yml and
// *.json files sorted by name (not recursive; other files are skipped).
// A path that does not exist or cannot be read is an error naming it.
absl::StatusOr<std::vector<Manifest>> ReadManifests(
    const std::vector<std::string>& paths);

struct EnvironmentOptions {
  // CustomResourceDefinitions to install; Start waits until each is
  // Established.
  std::vector<Manifest> crds;
  // Objects to create after the CRDs, in order (samples). One that exists
  // already is left as it is.
  std::vector<Manifest> objects;
  // Events are deleted this long after their last write, as
  // kube-apiserver's --event-ttl; <= 0 keeps them.
  absl::Duration event_ttl = absl::Hours(1);
  // How long to wait for each CRD to be Established.
  absl::Duration crd_timeout = absl::Seconds(30);
  // "AlwaysAllow": plain HTTP, no credential, every request allowed.
  // "RBAC": the server authenticates and enforces RBAC (with kube's default
  // roles) and serves HTTPS with a CA of its own, so that kubectl sends
  // the bearer token; the kubeconfig and rest_config() carry a random
  // token of "admin" in system:masters.
  std::string authorization_mode = "AlwaysAllow";
  // Adjusts the server's options (e.g. its simulated node's timing) before
  // it starts. Null: the defaults.
  std::function<void(apiserver::ApiServerOptions&)> configure_server;
};

class Environment {
 public:
  // Starts the server and installs `options.crds` and `options.objects`.
  // Errors name the manifest file and the object.
  static absl::StatusOr<std::unique_ptr<Environment>> Start(
      EnvironmentOptions options = {});

  // Stops the server and removes the kubeconfig's directory.
  ~Environment();
  // The same, ahead of destruction (idempotent).
  void Stop();
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;

  // "http://127.0.0.1:<port>".
  std::string url() const;
  // The path of a kubeconfig file for the server (current context set).
  const std::string& kubeconfig() const { return kubeconfig_; }
  // A client configuration for the server, without a client-side rate
  // limit (qps < 0): the server runs in this process. Callers may set
  // qps and burst to try their controller under client-go's limits.
  client::Config rest_config() const;
  // A client configuration that authenticates as the ServiceAccount
  // `ns`/`name` (which must exist), with a token issued in this process
  // and valid for `ttl`, as a pod's projected token; its namespace is
  // `ns`, as in-cluster. With RBAC, it may do what the ServiceAccount's
  // bindings allow; with AlwaysAllow, everything.
  absl::StatusOr<client::Config> ServiceAccountConfig(
      const std::string& ns, const std::string& name,
      absl::Duration ttl = absl::Hours(24)) const;
  // A client for test code, on rest_config().
  client::RestClient& client() { return *client_; }
  // The server itself: its write log and fault injector, for tools that
  // drive faults in process (runtime/explorer).
  apiserver::ApiServer* server() const { return server_.get(); }
  // The kinds the server serves: the built-in ones and those of every CRD
  // installed through this Environment.
  const api::RESTMapper& mapper() const { return *mapper_; }

  // Installs more CRDs (waits until each is Established) or objects.
  absl::Status InstallCrds(const std::vector<Manifest>& crds);
  absl::Status CreateObjects(const std::vector<Manifest>& objects);

  // Teaches `mapper` (e.g. a Manager's) the kinds of every CRD installed
  // through this Environment so far.
  absl::Status MapCrds(api::RESTMapper& mapper) const;

 private:
  Environment() = default;

  std::unique_ptr<apiserver::ApiServer> server_;
  std::string dir_;
  std::string kubeconfig_;
  // The server's CA (PEM) and the admin's token, with RBAC.
  std::string ca_pem_;
  std::string admin_token_;
  absl::Duration crd_timeout_;
  std::unique_ptr<client::RestClient> client_;
  std::unique_ptr<api::RESTMapper> mapper_;
  // Every CRD installed, for MapCrds.
  std::vector<api::ObjectPtr> crds_;
};

}  // namespace kcr::envtest

#endif  // KCR_RUNTIME_ENVTEST_ENVIRONMENT_H_
