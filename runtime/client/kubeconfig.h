// Kubeconfig: the kubectl configuration file (apiVersion v1, kind Config),
// read with yaml-cpp, as client-go's tools/clientcmd/api/v1 types.
//
// LoadKubeconfigFiles merges several files as kubectl merges a KUBECONFIG
// list: for clusters, users and contexts the first file that defines a name
// wins; the first non-empty current-context wins. Relative file paths in a
// file (certificate-authority, client-certificate, client-key, tokenFile,
// an exec command holding a '/') are resolved against that file's
// directory. *-data fields are base64-decoded here.
//
// Errors name the file and the field: "kubeconfig /home/u/.kube/config:
// users[1].user.client-key-data: invalid base64".
#ifndef KCR_RUNTIME_CLIENT_KUBECONFIG_H_
#define KCR_RUNTIME_CLIENT_KUBECONFIG_H_

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace kcr::client {

// clusters[].cluster
struct KubeconfigCluster {
  std::string server;
  std::string certificate_authority;       // absolute path, or ""
  std::string certificate_authority_data;  // PEM (decoded), or ""
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name;
  std::string proxy_url;
  bool disable_compression = false;
  std::string origin;  // the file it came from
};

// users[].user.exec
struct ExecConfig {
  std::string api_version;  // client.authentication.k8s.io/v1 or v1beta1
  std::string command;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
  std::string install_hint;
  bool provide_cluster_info = false;
  std::string interactive_mode;  // Never, IfAvailable, Always
};

// users[].user
struct KubeconfigAuthInfo {
  std::string token;
  std::string token_file;               // absolute path, or ""
  std::string client_certificate;       // path
  std::string client_certificate_data;  // PEM (decoded)
  std::string client_key;               // path
  std::string client_key_data;          // PEM (decoded)
  std::string username;
  std::string password;
  std::string impersonate;  // "as"
  std::vector<std::string> impersonate_groups;
  std::optional<ExecConfig> exec;
  bool has_auth_provider = false;  // auth-provider is not supported
  std::string origin;
};

// contexts[].context
struct KubeconfigContext {
  std::string cluster;
  std::string user;
  std::string namespace_;
  std::string origin;
};

struct Kubeconfig {
  std::map<std::string, KubeconfigCluster> clusters;
  std::map<std::string, KubeconfigAuthInfo> users;
  std::map<std::string, KubeconfigContext> contexts;
  std::string current_context;
  // Files read, in merge order.
  std::vector<std::string> files;
};

// Parses one kubeconfig document. `origin` is the file's path (used to
// resolve relative paths and in error messages); "" leaves relative paths
// as they are. An empty document is an empty Kubeconfig.
absl::StatusOr<Kubeconfig> ParseKubeconfig(const std::string& yaml,
                                           const std::string& origin);

// Reads and parses one file. kNotFound if it does not exist.
absl::StatusOr<Kubeconfig> LoadKubeconfigFile(const std::string& path);

// Reads and merges `paths` in order (a KUBECONFIG list). Files that do not
// exist are skipped, as kubectl does; kNotFound if none exists. A file that
// exists but does not parse is an error.
absl::StatusOr<Kubeconfig> LoadKubeconfigFiles(
    const std::vector<std::string>& paths);

// Splits a KUBECONFIG value on ':' dropping empty entries.
std::vector<std::string> SplitKubeconfigPath(const std::string& value);

}  // namespace kcr::client

#endif  // KCR_RUNTIME_CLIENT_KUBECONFIG_H_
