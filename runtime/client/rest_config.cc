#include "runtime/client/rest_config.h"

#include <sys/utsname.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "glog/logging.h"

namespace kcr::client {
namespace {

std::optional<std::string> Env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot read ", path));
  }
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

std::string Files(const Kubeconfig& k) {
  return k.files.empty() ? "<inline>" : absl::StrJoin(k.files, ":");
}

std::string GoArch() {
  struct utsname u;
  if (uname(&u) != 0) return "unknown";
  std::string m = u.machine;
  if (m == "x86_64") return "amd64";
  if (m == "aarch64") return "arm64";
  if (m == "i686" || m == "i386") return "386";
  return m;
}

}  // namespace

std::string DefaultUserAgent() {
  return absl::StrCat("kcr/", kKcrVersion, " (linux/", GoArch(), ")");
}

absl::Status ValidateConfig(const Config& c) {
  if (c.host.empty())
    return absl::InvalidArgumentError("config: host is empty");
  if (c.tls.insecure && (!c.tls.ca_file.empty() || !c.tls.ca_data.empty())) {
    return absl::InvalidArgumentError(
        "specifying a root certificates file with the insecure flag is not "
        "allowed");
  }
  const bool has_cert = !c.tls.cert_file.empty() || !c.tls.cert_data.empty();
  const bool has_key = !c.tls.key_file.empty() || !c.tls.key_data.empty();
  if (has_cert != has_key) {
    return absl::InvalidArgumentError(
        has_cert ? "client certificate given without a client key"
                 : "client key given without a client certificate");
  }
  const bool token = !c.bearer_token.empty() || !c.bearer_token_file.empty();
  const bool basic = !c.username.empty() || !c.password.empty();
  int methods =
      (token ? 1 : 0) + (basic ? 1 : 0) + (c.exec.has_value() ? 1 : 0);
  if (methods > 1) {
    return absl::InvalidArgumentError(
        "more than one authentication method (token, username/password, exec) "
        "is configured");
  }
  // A negative qps is client-go's way to turn client-side throttling off;
  // a negative burst means nothing.
  if (c.burst < 0) {
    return absl::InvalidArgumentError("burst must not be negative");
  }
  return absl::OkStatus();
}

absl::StatusOr<Config> ConfigFromKubeconfig(const Kubeconfig& k,
                                            const std::string& context_name) {
  const std::string name =
      context_name.empty() ? k.current_context : context_name;
  if (name.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("kubeconfig ", Files(k),
                     ": current-context is not set and no context was given"));
  }
  auto ctx_it = k.contexts.find(name);
  if (ctx_it == k.contexts.end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kubeconfig ", Files(k), ": context \"", name, "\" is not defined"));
  }
  const KubeconfigContext& ctx = ctx_it->second;
  if (ctx.cluster.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("kubeconfig ", ctx.origin, ": contexts[name=", name,
                     "].context.cluster is missing"));
  }
  auto cl_it = k.clusters.find(ctx.cluster);
  if (cl_it == k.clusters.end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kubeconfig ", ctx.origin, ": context \"", name,
        "\" refers to cluster \"", ctx.cluster, "\", which is not defined"));
  }
  const KubeconfigCluster& cluster = cl_it->second;
  if (cluster.server.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kubeconfig ", cluster.origin, ": clusters[name=", ctx.cluster,
        "].cluster.server is missing"));
  }
  Config c;
  c.host = cluster.server;
  if (!cluster.proxy_url.empty()) {
    LOG(WARNING) << "kubeconfig " << cluster.origin
                 << ": clusters[name=" << ctx.cluster
                 << "].cluster.proxy-url is not supported; connecting directly";
  }
  c.tls.ca_file = cluster.certificate_authority;
  c.tls.ca_data = cluster.certificate_authority_data;
  c.tls.insecure = cluster.insecure_skip_tls_verify;
  c.tls.server_name = cluster.tls_server_name;
  if (c.tls.insecure && (!c.tls.ca_file.empty() || !c.tls.ca_data.empty())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "kubeconfig ", cluster.origin, ": clusters[name=", ctx.cluster,
        "]: specifying a root certificates file with the insecure flag is not "
        "allowed"));
  }
  if (!ctx.namespace_.empty()) c.namespace_ = ctx.namespace_;
  if (!ctx.user.empty()) {
    auto u_it = k.users.find(ctx.user);
    if (u_it == k.users.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "kubeconfig ", ctx.origin, ": context \"", name,
          "\" refers to user \"", ctx.user, "\", which is not defined"));
    }
    const KubeconfigAuthInfo& u = u_it->second;
    if (u.has_auth_provider) {
      return absl::UnimplementedError(absl::StrCat(
          "kubeconfig ", u.origin, ": users[name=", ctx.user,
          "].user.auth-provider is not supported; use an exec plugin"));
    }
    c.bearer_token = u.token;
    c.bearer_token_file = u.token_file;
    c.tls.cert_file = u.client_certificate;
    c.tls.cert_data = u.client_certificate_data;
    c.tls.key_file = u.client_key;
    c.tls.key_data = u.client_key_data;
    c.username = u.username;
    c.password = u.password;
    c.exec = u.exec;
    c.impersonate = u.impersonate;
    c.impersonate_groups = u.impersonate_groups;
    const bool has_cert = !c.tls.cert_file.empty() || !c.tls.cert_data.empty();
    const bool has_key = !c.tls.key_file.empty() || !c.tls.key_data.empty();
    if (has_cert != has_key) {
      return absl::InvalidArgumentError(absl::StrCat(
          "kubeconfig ", u.origin, ": users[name=", ctx.user, "].user.",
          has_cert ? "client-key" : "client-certificate",
          " is missing (both a client certificate and key are needed)"));
    }
  }
  absl::Status valid = ValidateConfig(c);
  if (!valid.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("kubeconfig ", Files(k),
                                                   ": context \"", name,
                                                   "\": ", valid.message()));
  }
  return c;
}

absl::StatusOr<Config> LoadFromKubeconfig(const LoadingRules& rules) {
  absl::StatusOr<Kubeconfig> k;
  if (!rules.explicit_path.empty()) {
    k = LoadKubeconfigFile(rules.explicit_path);
  } else {
    std::optional<std::string> env = rules.kubeconfig_env.has_value()
                                         ? rules.kubeconfig_env
                                         : Env("KUBECONFIG");
    std::vector<std::string> paths;
    if (env.has_value()) paths = SplitKubeconfigPath(*env);
    if (!paths.empty()) {
      k = LoadKubeconfigFiles(paths);
    } else {
      std::string def;
      if (rules.default_path.has_value()) {
        def = *rules.default_path;
      } else if (auto home = Env("HOME"); home.has_value() && !home->empty()) {
        def = *home + "/.kube/config";
      }
      if (def.empty()) {
        return absl::NotFoundError(
            "no kubeconfig: --kubeconfig, KUBECONFIG and HOME are unset");
      }
      k = LoadKubeconfigFile(def);
    }
  }
  KCR_RETURN_IF_ERROR(k.status());
  return ConfigFromKubeconfig(*k, rules.context);
}

absl::StatusOr<Config> InClusterConfig(const InClusterOptions& options) {
  auto host = Env("KUBERNETES_SERVICE_HOST");
  auto port = Env("KUBERNETES_SERVICE_PORT");
  if (!host.has_value() || host->empty() || !port.has_value() ||
      port->empty()) {
    return absl::FailedPreconditionError(
        "not running in a cluster: KUBERNETES_SERVICE_HOST and "
        "KUBERNETES_SERVICE_PORT must be set");
  }
  Config c;
  const bool ipv6 = host->find(':') != std::string::npos;
  c.host = absl::StrCat("https://", ipv6 ? "[" : "", *host, ipv6 ? "]" : "",
                        ":", *port);
  const std::string dir = options.service_account_dir;
  const std::string token_path = dir + "/token";
  auto token = ReadFile(token_path);
  if (!token.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "in-cluster config: cannot read the service account token ",
        token_path));
  }
  c.bearer_token = std::string(absl::StripAsciiWhitespace(*token));
  c.bearer_token_file = token_path;
  const std::string ca_path = dir + "/ca.crt";
  auto ca = ReadFile(ca_path);
  if (!ca.ok() ||
      ca->find("-----BEGIN CERTIFICATE-----") == std::string::npos) {
    return absl::FailedPreconditionError(absl::StrCat(
        "in-cluster config: expected to load root CA config from ", ca_path));
  }
  c.tls.ca_file = ca_path;
  if (auto ns = Env("POD_NAMESPACE"); ns.has_value() && !ns->empty()) {
    c.namespace_ = *ns;
  } else if (auto file = ReadFile(dir + "/namespace"); file.ok()) {
    std::string trimmed(absl::StripAsciiWhitespace(*file));
    if (!trimmed.empty()) c.namespace_ = trimmed;
  }
  return c;
}

absl::StatusOr<Config> BuildConfig(const LoadingRules& rules,
                                   const InClusterOptions& in_cluster) {
  auto from_files = LoadFromKubeconfig(rules);
  // A file that exists but is wrong is an error, never a silent fallback;
  // an explicit path that does not exist is too.
  if (from_files.ok() || !absl::IsNotFound(from_files.status()) ||
      !rules.explicit_path.empty()) {
    return from_files;
  }
  auto pod = InClusterConfig(in_cluster);
  if (pod.ok()) return pod;
  return absl::NotFoundError(
      absl::StrCat("no configuration: ", from_files.status().message(), "; ",
                   pod.status().message()));
}

}  // namespace kcr::client
