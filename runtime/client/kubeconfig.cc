#include "runtime/client/kubeconfig.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "base/status_macros.h"

namespace kcr::client {
namespace {

// Reads the fields of one YAML mapping, reporting errors as
// "kubeconfig <file>: <path>.<field>: <problem>".
class Fields {
 public:
  Fields(const YAML::Node& node, const std::string& origin, std::string path)
      : node_(node), origin_(origin), path_(std::move(path)) {}

  absl::Status Error(const std::string& field,
                     const std::string& problem) const {
    return absl::InvalidArgumentError(absl::StrCat(
        "kubeconfig ", origin_.empty() ? "<inline>" : origin_, ": ", path_,
        field.empty() ? "" : ".", field, ": ", problem));
  }

  absl::StatusOr<std::string> String(const std::string& field) const {
    YAML::Node v = node_[field];
    if (!v.IsDefined() || v.IsNull()) return std::string();
    if (!v.IsScalar()) return Error(field, "must be a string");
    return v.Scalar();
  }

  absl::StatusOr<bool> Bool(const std::string& field) const {
    YAML::Node v = node_[field];
    if (!v.IsDefined() || v.IsNull()) return false;
    bool out = false;
    if (!v.IsScalar() || !YAML::convert<bool>::decode(v, out)) {
      return Error(field, "must be true or false");
    }
    return out;
  }

  // A *-data field: base64 of PEM.
  absl::StatusOr<std::string> Base64(const std::string& field) const {
    KCR_ASSIGN_OR_RETURN(std::string text, String(field));
    if (text.empty()) return text;
    std::string decoded;
    if (!absl::Base64Unescape(text, &decoded)) {
      return Error(field, "invalid base64");
    }
    return decoded;
  }

  // A file path, made absolute against the kubeconfig's directory.
  absl::StatusOr<std::string> Path(const std::string& field) const {
    KCR_ASSIGN_OR_RETURN(std::string p, String(field));
    return Resolve(p);
  }

  std::string Resolve(const std::string& p) const {
    if (p.empty() || origin_.empty() || p[0] == '/') return p;
    return (std::filesystem::path(origin_).parent_path() / p)
        .lexically_normal()
        .string();
  }

  absl::StatusOr<std::vector<std::string>> Strings(
      const std::string& field) const {
    std::vector<std::string> out;
    YAML::Node v = node_[field];
    if (!v.IsDefined() || v.IsNull()) return out;
    if (!v.IsSequence()) return Error(field, "must be a list of strings");
    for (size_t i = 0; i < v.size(); ++i) {
      if (!v[i].IsScalar()) {
        return Error(absl::StrCat(field, "[", i, "]"), "must be a string");
      }
      out.push_back(v[i].Scalar());
    }
    return out;
  }

  const YAML::Node& node() const { return node_; }
  const std::string& path() const { return path_; }

 private:
  YAML::Node node_;
  const std::string& origin_;
  std::string path_;
};

absl::StatusOr<ExecConfig> ParseExec(const Fields& f) {
  ExecConfig e;
  KCR_ASSIGN_OR_RETURN(e.api_version, f.String("apiVersion"));
  KCR_ASSIGN_OR_RETURN(e.command, f.String("command"));
  if (e.command.empty()) return f.Error("command", "is missing");
  if (e.api_version.empty()) return f.Error("apiVersion", "is missing");
  if (e.command.find('/') != std::string::npos)
    e.command = f.Resolve(e.command);
  KCR_ASSIGN_OR_RETURN(e.args, f.Strings("args"));
  YAML::Node env = f.node()["env"];
  if (env.IsDefined() && !env.IsNull()) {
    if (!env.IsSequence()) return f.Error("env", "must be a list");
    for (size_t i = 0; i < env.size(); ++i) {
      if (!env[i].IsMap()) {
        return f.Error(absl::StrCat("env[", i, "]"), "must be a mapping");
      }
      YAML::Node name = env[i]["name"];
      YAML::Node value = env[i]["value"];
      if (!name.IsDefined() || !name.IsScalar() || name.Scalar().empty()) {
        return f.Error(absl::StrCat("env[", i, "].name"), "is missing");
      }
      e.env.emplace_back(name.Scalar(), value.IsDefined() && value.IsScalar()
                                            ? value.Scalar()
                                            : "");
    }
  }
  KCR_ASSIGN_OR_RETURN(e.install_hint, f.String("installHint"));
  KCR_ASSIGN_OR_RETURN(e.provide_cluster_info, f.Bool("provideClusterInfo"));
  KCR_ASSIGN_OR_RETURN(e.interactive_mode, f.String("interactiveMode"));
  return e;
}

// Walks a named list ("clusters", "users", "contexts"), calling `fn` with
// each entry's name and the Fields of its inner mapping.
template <typename Fn>
absl::Status ForEachNamed(const YAML::Node& root, const std::string& origin,
                          const std::string& list, const std::string& inner,
                          Fn fn) {
  YAML::Node items = root[list];
  if (!items.IsDefined() || items.IsNull()) return absl::OkStatus();
  if (!items.IsSequence()) {
    return absl::InvalidArgumentError(
        absl::StrCat("kubeconfig ", origin, ": ", list, ": must be a list"));
  }
  for (size_t i = 0; i < items.size(); ++i) {
    const std::string at = absl::StrCat(list, "[", i, "]");
    Fields entry(items[i], origin, at);
    if (!items[i].IsMap()) return entry.Error("", "must be a mapping");
    KCR_ASSIGN_OR_RETURN(std::string name, entry.String("name"));
    if (name.empty()) return entry.Error("name", "is missing");
    YAML::Node body = items[i][inner];
    if (body.IsDefined() && !body.IsNull() && !body.IsMap()) {
      return entry.Error(inner, "must be a mapping");
    }
    YAML::Node empty(YAML::NodeType::Map);
    Fields f(body.IsDefined() && !body.IsNull() ? body : empty, origin,
             absl::StrCat(at, ".", inner));
    KCR_RETURN_IF_ERROR(fn(name, f));
  }
  return absl::OkStatus();
}

void MergeInto(Kubeconfig& into, Kubeconfig&& from) {
  for (auto& [k, v] : from.clusters) into.clusters.emplace(k, std::move(v));
  for (auto& [k, v] : from.users) into.users.emplace(k, std::move(v));
  for (auto& [k, v] : from.contexts) into.contexts.emplace(k, std::move(v));
  if (into.current_context.empty()) into.current_context = from.current_context;
  for (auto& f : from.files) into.files.push_back(std::move(f));
}

}  // namespace

absl::StatusOr<Kubeconfig> ParseKubeconfig(const std::string& yaml,
                                           const std::string& origin) {
  Kubeconfig config;
  if (!origin.empty()) config.files.push_back(origin);
  YAML::Node root;
  try {
    root = YAML::Load(yaml);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("kubeconfig ", origin, ": not valid YAML: ", e.what()));
  }
  if (!root.IsDefined() || root.IsNull()) return config;
  if (!root.IsMap()) {
    return absl::InvalidArgumentError(
        absl::StrCat("kubeconfig ", origin, ": top level is not a mapping"));
  }
  try {
    Fields top(root, origin, "");
    KCR_ASSIGN_OR_RETURN(std::string kind, top.String("kind"));
    if (!kind.empty() && kind != "Config") {
      return absl::InvalidArgumentError(absl::StrCat(
          "kubeconfig ", origin, ": kind is \"", kind, "\", not \"Config\""));
    }
    KCR_ASSIGN_OR_RETURN(config.current_context, top.String("current-context"));

    KCR_RETURN_IF_ERROR(ForEachNamed(
        root, origin, "clusters", "cluster",
        [&](const std::string& name, const Fields& f) -> absl::Status {
          KubeconfigCluster c;
          c.origin = origin;
          KCR_ASSIGN_OR_RETURN(c.server, f.String("server"));
          KCR_ASSIGN_OR_RETURN(c.certificate_authority,
                               f.Path("certificate-authority"));
          KCR_ASSIGN_OR_RETURN(c.certificate_authority_data,
                               f.Base64("certificate-authority-data"));
          KCR_ASSIGN_OR_RETURN(c.insecure_skip_tls_verify,
                               f.Bool("insecure-skip-tls-verify"));
          KCR_ASSIGN_OR_RETURN(c.tls_server_name, f.String("tls-server-name"));
          KCR_ASSIGN_OR_RETURN(c.proxy_url, f.String("proxy-url"));
          KCR_ASSIGN_OR_RETURN(c.disable_compression,
                               f.Bool("disable-compression"));
          config.clusters.emplace(name, std::move(c));
          return absl::OkStatus();
        }));
    KCR_RETURN_IF_ERROR(ForEachNamed(
        root, origin, "users", "user",
        [&](const std::string& name, const Fields& f) -> absl::Status {
          KubeconfigAuthInfo u;
          u.origin = origin;
          KCR_ASSIGN_OR_RETURN(u.token, f.String("token"));
          KCR_ASSIGN_OR_RETURN(u.token_file, f.Path("tokenFile"));
          KCR_ASSIGN_OR_RETURN(u.client_certificate,
                               f.Path("client-certificate"));
          KCR_ASSIGN_OR_RETURN(u.client_certificate_data,
                               f.Base64("client-certificate-data"));
          KCR_ASSIGN_OR_RETURN(u.client_key, f.Path("client-key"));
          KCR_ASSIGN_OR_RETURN(u.client_key_data, f.Base64("client-key-data"));
          KCR_ASSIGN_OR_RETURN(u.username, f.String("username"));
          KCR_ASSIGN_OR_RETURN(u.password, f.String("password"));
          KCR_ASSIGN_OR_RETURN(u.impersonate, f.String("as"));
          KCR_ASSIGN_OR_RETURN(u.impersonate_groups, f.Strings("as-groups"));
          YAML::Node exec = f.node()["exec"];
          if (exec.IsDefined() && !exec.IsNull()) {
            if (!exec.IsMap()) return f.Error("exec", "must be a mapping");
            KCR_ASSIGN_OR_RETURN(
                u.exec, ParseExec(Fields(exec, origin, f.path() + ".exec")));
          }
          YAML::Node ap = f.node()["auth-provider"];
          u.has_auth_provider = ap.IsDefined() && !ap.IsNull();
          config.users.emplace(name, std::move(u));
          return absl::OkStatus();
        }));
    KCR_RETURN_IF_ERROR(ForEachNamed(
        root, origin, "contexts", "context",
        [&](const std::string& name, const Fields& f) -> absl::Status {
          KubeconfigContext c;
          c.origin = origin;
          KCR_ASSIGN_OR_RETURN(c.cluster, f.String("cluster"));
          KCR_ASSIGN_OR_RETURN(c.user, f.String("user"));
          KCR_ASSIGN_OR_RETURN(c.namespace_, f.String("namespace"));
          config.contexts.emplace(name, std::move(c));
          return absl::OkStatus();
        }));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("kubeconfig ", origin, ": ", e.what()));
  }
  return config;
}

absl::StatusOr<Kubeconfig> LoadKubeconfigFile(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return absl::NotFoundError(
        absl::StrCat("kubeconfig ", path, ": no such file"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::PermissionDeniedError(
        absl::StrCat("kubeconfig ", path, ": cannot be read"));
  }
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  std::string abs =
      std::filesystem::absolute(path, ec).lexically_normal().string();
  return ParseKubeconfig(text, ec ? path : abs);
}

absl::StatusOr<Kubeconfig> LoadKubeconfigFiles(
    const std::vector<std::string>& paths) {
  Kubeconfig merged;
  bool any = false;
  std::vector<std::string> seen;
  for (const std::string& p : paths) {
    // kubectl reads a file listed twice once.
    if (std::find(seen.begin(), seen.end(), p) != seen.end()) continue;
    seen.push_back(p);
    auto one = LoadKubeconfigFile(p);
    if (absl::IsNotFound(one.status())) continue;
    if (!one.ok()) return one.status();
    any = true;
    MergeInto(merged, *std::move(one));
  }
  if (!any) {
    return absl::NotFoundError(absl::StrCat(
        "none of the kubeconfig files exists: ", absl::StrJoin(paths, ":")));
  }
  return merged;
}

std::vector<std::string> SplitKubeconfigPath(const std::string& value) {
  return absl::StrSplit(value, ':', absl::SkipEmpty());
}

}  // namespace kcr::client
