// Config: everything needed to reach and authenticate to one API server, as
// client-go's rest.Config, and the ways to obtain one: from kubeconfig
// files (explicit path, the KUBECONFIG list, ~/.kube/config), from the
// in-cluster service account, or BuildConfig trying them in that order.
#ifndef KCR_RUNTIME_CLIENT_REST_CONFIG_H_
#define KCR_RUNTIME_CLIENT_REST_CONFIG_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "runtime/client/kubeconfig.h"

namespace kcr::client {

struct TLSClientConfig {
  // Trust: PEM data wins over the file. Neither: the system store.
  std::string ca_file;
  std::string ca_data;
  // Client certificate and key, PEM (data wins over file).
  std::string cert_file;
  std::string cert_data;
  std::string key_file;
  std::string key_data;
  // Skip server verification. An error together with a CA.
  bool insecure = false;
  // The name to verify the server's certificate against (and send as SNI)
  // instead of the host in `host`.
  std::string server_name;
};

struct Config {
  // "https://host:port", optionally with a path prefix; "http://" works.
  std::string host;

  // Authentication, at most one of bearer token (static and/or file),
  // basic auth, exec plugin; client certificates can come with any.
  std::string bearer_token;
  // Re-read at most once a minute and after a 401 (takes precedence over
  // bearer_token, which is the fallback when the file cannot be read).
  std::string bearer_token_file;
  std::string username;
  std::string password;
  std::optional<ExecConfig> exec;
  // Impersonation headers (Impersonate-User / Impersonate-Group).
  std::string impersonate;
  std::vector<std::string> impersonate_groups;

  TLSClientConfig tls;

  // The namespace of the selected context, or of the pod in-cluster;
  // "default" when neither says.
  std::string namespace_ = "default";

  // Client-side flow control: client-go's defaults. 0 means the default
  // (5 and 10); a negative qps turns client-side throttling off, as in
  // client-go.
  double qps = 5;
  int burst = 10;
  // Per-request timeout for everything but watches; zero means none.
  absl::Duration timeout = absl::ZeroDuration();
  // Empty: "kcr/<version> (<os>/<arch>)".
  std::string user_agent;
};

// Checks the combinations client-go rejects: no host; insecure together
// with a CA ("specifying a root certificates file with the insecure flag
// is not allowed"); a client certificate without a key or the reverse;
// more than one of token, basic auth and exec.
absl::Status ValidateConfig(const Config& config);

// The Config of `context` (the current context when empty) in `kubeconfig`.
// Errors name the file and the missing piece: "kubeconfig /x/config:
// context \"dev\" refers to cluster \"c\", which is not defined";
// "...: clusters[name=c].cluster.server is missing".
absl::StatusOr<Config> ConfigFromKubeconfig(const Kubeconfig& kubeconfig,
                                            const std::string& context = "");

// Where to look for kubeconfig files, as clientcmd's loading rules.
struct LoadingRules {
  // --kubeconfig: this file only, which must exist.
  std::string explicit_path;
  // Unset: read the KUBECONFIG environment variable.
  std::optional<std::string> kubeconfig_env;
  // Unset: $HOME/.kube/config.
  std::optional<std::string> default_path;
  // --context; empty: current-context.
  std::string context;
};

// Loads a Config from kubeconfig files: the explicit path if set, else the
// KUBECONFIG list (merged), else ~/.kube/config. kNotFound when no file
// applies.
absl::StatusOr<Config> LoadFromKubeconfig(const LoadingRules& rules = {});

// Where the in-cluster config is read from.
struct InClusterOptions {
  std::string service_account_dir =
      "/var/run/secrets/kubernetes.io/serviceaccount";
};

// The config of a pod:
// https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT (IPv6 in brackets),
// the service-account token as a re-read token file, its ca.crt, and the
// namespace from $POD_NAMESPACE, else the namespace file, else "default".
// kFailedPrecondition ("not running in a cluster") when either variable is
// unset; an error naming the file when the token or CA cannot be read.
absl::StatusOr<Config> InClusterConfig(const InClusterOptions& options = {});

// The config a controller should use: the kubeconfig files as in
// LoadFromKubeconfig, and when none exists, the in-cluster config.
absl::StatusOr<Config> BuildConfig(const LoadingRules& rules = {},
                                   const InClusterOptions& in_cluster = {});

// "kcr/<version> (<os>/<arch>)", e.g. "kcr/0.1.0 (linux/amd64)".
std::string DefaultUserAgent();

// kcr's version string.
inline constexpr char kKcrVersion[] = "0.1.0";

}  // namespace kcr::client

#endif  // KCR_RUNTIME_CLIENT_REST_CONFIG_H_
