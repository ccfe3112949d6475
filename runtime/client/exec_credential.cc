#include "runtime/client/exec_credential.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "api/json/json_util.h"
#include "api/types/time.h"
#include "glog/logging.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

extern char** environ;

namespace kcr::client {
namespace {

std::string ExecInfo(const ExecConfig& config, const ExecClusterInfo& cluster) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("apiVersion");
  w.String(config.api_version);
  w.Key("kind");
  w.String("ExecCredential");
  w.Key("spec");
  w.StartObject();
  w.Key("interactive");
  w.Bool(false);
  if (config.provide_cluster_info) {
    w.Key("cluster");
    w.StartObject();
    w.Key("server");
    w.String(cluster.server);
    if (!cluster.tls_server_name.empty()) {
      w.Key("tls-server-name");
      w.String(cluster.tls_server_name);
    }
    if (cluster.insecure_skip_tls_verify) {
      w.Key("insecure-skip-tls-verify");
      w.Bool(true);
    }
    if (!cluster.certificate_authority_data.empty()) {
      w.Key("certificate-authority-data");
      w.String(absl::Base64Escape(cluster.certificate_authority_data));
    }
    w.EndObject();
  }
  w.EndObject();
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace

absl::StatusOr<ExecCredential> ParseExecCredential(
    const std::string& json, const std::string& api_version) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return absl::InvalidArgumentError(
        "exec plugin: output is not a JSON object");
  }
  if (json::StringMember(doc, "kind") != "ExecCredential") {
    return absl::InvalidArgumentError(
        "exec plugin: output kind is not ExecCredential");
  }
  const std::string got = json::StringMember(doc, "apiVersion");
  if (got != api_version) {
    return absl::InvalidArgumentError(absl::StrCat(
        "exec plugin: configured to use API version ", api_version,
        ", plugin returned version ", got.empty() ? "<none>" : got));
  }
  auto status = doc.FindMember("status");
  if (status == doc.MemberEnd() || !status->value.IsObject()) {
    return absl::InvalidArgumentError("exec plugin: output has no status");
  }
  const rapidjson::Value& s = status->value;
  ExecCredential c;
  c.token = json::StringMember(s, "token");
  c.client_certificate_data = json::StringMember(s, "clientCertificateData");
  c.client_key_data = json::StringMember(s, "clientKeyData");
  if (c.client_certificate_data.empty() != c.client_key_data.empty()) {
    return absl::InvalidArgumentError(
        "exec plugin: status must hold both clientCertificateData and "
        "clientKeyData");
  }
  if (c.token.empty() && c.client_certificate_data.empty()) {
    return absl::InvalidArgumentError(
        "exec plugin: status must hold a token or a client certificate and "
        "key");
  }
  const std::string exp = json::StringMember(s, "expirationTimestamp");
  if (!exp.empty()) {
    auto t = api::ParseTime(exp);
    if (!t.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("exec plugin: expirationTimestamp \"", exp,
                       "\" is not an RFC 3339 time"));
    }
    c.expiration = *t;
  }
  return c;
}

ExecCredentialProvider::ExecCredentialProvider(ExecConfig config,
                                               ExecClusterInfo cluster,
                                               const Clock* clock)
    : config_(std::move(config)),
      cluster_(std::move(cluster)),
      clock_(clock != nullptr ? clock : Clock::Real()) {}

absl::StatusOr<ExecCredential> ExecCredentialProvider::Get() {
  // One plugin run at a time; others wait for its answer.
  MutexLock lock(&mu_);
  const absl::Time now = clock_->Now();
  if (cached_.has_value() &&
      (!cached_->expiration.has_value() || now < *cached_->expiration)) {
    return *cached_;
  }
  ++runs_;
  auto out = Run();
  if (!out.ok()) return out.status();
  auto cred = ParseExecCredential(*out, config_.api_version);
  if (!cred.ok()) {
    return absl::UnauthenticatedError(
        absl::StrCat(config_.command, ": ", cred.status().message()));
  }
  VLOG(2) << "exec plugin returned a credential command=" << config_.command
          << " expires="
          << (cred->expiration ? api::FormatRfc3339(*cred->expiration)
                               : "never");
  cached_ = *cred;
  obtained_at_ = now;
  return *cred;
}

void ExecCredentialProvider::Invalidate(absl::Time request_start) {
  MutexLock lock(&mu_);
  if (obtained_at_ <= request_start) cached_.reset();
}

int ExecCredentialProvider::runs() const {
  MutexLock lock(&mu_);
  return runs_;
}

absl::StatusOr<std::string> ExecCredentialProvider::Run() {
  // Environment: ours, then the configured variables, then the exec info.
  std::map<std::string, std::string> env;
  std::vector<std::string> order;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string kv(*e);
    size_t eq = kv.find('=');
    if (eq == std::string::npos) continue;
    env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : config_.env) env[k] = v;
  env["KUBERNETES_EXEC_INFO"] = ExecInfo(config_, cluster_);
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);

  std::vector<std::string> argv_strings;
  argv_strings.push_back(config_.command);
  for (const auto& a : config_.args) argv_strings.push_back(a);
  std::vector<char*> argv;
  for (auto& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);

  int out_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    return absl::UnavailableError(
        absl::StrCat("exec plugin: pipe: ", std::strerror(errno)));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, config_.command.c_str(), &actions, nullptr,
                        argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(out_pipe[1]);
  if (rc != 0) {
    close(out_pipe[0]);
    std::string msg = absl::StrCat("exec plugin: cannot run ", config_.command,
                                   ": ", std::strerror(rc));
    if (!config_.install_hint.empty())
      absl::StrAppend(&msg, "\n", config_.install_hint);
    return absl::UnauthenticatedError(msg);
  }
  std::string output;
  char buf[4096];
  while (true) {
    ssize_t n = read(out_pipe[0], buf, sizeof(buf));
    if (n > 0) {
      output.append(buf, static_cast<size_t>(n));
      if (output.size() > (16 << 20)) break;  // no credential is this big
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    break;
  }
  close(out_pipe[0]);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    return absl::UnauthenticatedError(absl::StrCat(
        "exec plugin ", config_.command, " failed: ",
        WIFEXITED(wstatus)
            ? absl::StrCat("exit status ", WEXITSTATUS(wstatus))
            : absl::StrCat("killed by signal ", WTERMSIG(wstatus))));
  }
  return output;
}

}  // namespace kcr::client
