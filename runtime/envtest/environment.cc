#include "runtime/envtest/environment.h"

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "api/errors/errors.h"
#include "api/json/yaml_to_json.h"
#include "api/meta/group_version.h"
#include "apiserver/api_server.h"
#include "base/context.h"
#include "base/status_macros.h"
#include "base/string_view.h"
#include "base/tls_certs.h"
#include "glog/logging.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace kcr::envtest {
namespace {

const client::Resource& CrdResource() {
  static const client::Resource* const crds =
      new client::Resource(client::Resource::ClusterScoped(
          {"apiextensions.k8s.io", "v1", "customresourcedefinitions"}));
  return *crds;
}

// The objects of a manifest, one per YAML document; errors name the file.
absl::StatusOr<std::vector<api::ObjectPtr>> ParseManifest(
    const Manifest& manifest) {
  auto docs = json::YamlToJsonDocuments(manifest.text);
  if (!docs.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(manifest.path, ": ", docs.status().message()));
  }
  std::vector<api::ObjectPtr> objects;
  for (const auto& doc : *docs) {
    rapidjson::StringBuffer json;
    rapidjson::Writer<rapidjson::StringBuffer> writer(json);
    doc->Accept(writer);
    auto object =
        api::Object::Parse(std::string_view(json.GetString(), json.GetSize()));
    if (!object.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(manifest.path, ": ", object.status().message()));
    }
    objects.push_back(*std::move(object));
  }
  return objects;
}

bool Established(const api::Object& crd) {
  const rapidjson::Value* conditions = crd.Find("/status/conditions");
  if (conditions == nullptr || !conditions->IsArray()) return false;
  for (const rapidjson::Value& c : conditions->GetArray()) {
    if (c.IsObject() && c.HasMember("type") && c["type"].IsString() &&
        std::string_view(c["type"].GetString()) == "Established" &&
        c.HasMember("status") && c["status"].IsString() &&
        std::string_view(c["status"].GetString()) == "True") {
      return true;
    }
  }
  return false;
}

// 32 random bytes, hex: a bearer token nobody can guess.
absl::StatusOr<std::string> RandomToken() {
  std::ifstream in("/dev/urandom", std::ios::binary);
  unsigned char bytes[32];
  if (!in.read(reinterpret_cast<char*>(bytes), sizeof(bytes))) {
    return absl::InternalError("cannot read /dev/urandom");
  }
  std::string token;
  for (unsigned char b : bytes) {
    absl::StrAppend(&token, absl::Hex(b, absl::kZeroPad2));
  }
  return token;
}

// The kinds of rbac.authorization.k8s.io/v1, which the default mapper
// (the kinds controllers use) leaves out: CreateObjects installs RBAC
// manifests.
absl::Status AddRbacKinds(api::RESTMapper& mapper) {
  for (const auto& [plural, kind, ns] :
       {std::tuple{"roles", "Role", true},
        std::tuple{"rolebindings", "RoleBinding", true},
        std::tuple{"clusterroles", "ClusterRole", false},
        std::tuple{"clusterrolebindings", "ClusterRoleBinding", false}}) {
    api::RESTMapping mapping;
    mapping.resource = {"rbac.authorization.k8s.io", "v1", plural};
    mapping.kind = {"rbac.authorization.k8s.io", "v1", kind};
    mapping.singular = absl::AsciiStrToLower(kind);
    mapping.list_kind = absl::StrCat(kind, "List");
    mapping.scope =
        ns ? api::ResourceScope::kNamespaced : api::ResourceScope::kCluster;
    KCR_RETURN_IF_ERROR(mapper.Add(std::move(mapping)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> MakeTempDir() {
  const char* tmp = getenv("TMPDIR");
  std::string pattern =
      std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
      "/kcr-envtest-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("cannot create ", pattern));
  }
  return pattern;
}

absl::StatusOr<Manifest> ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat(path.string(), ": cannot read"));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    return absl::DataLossError(absl::StrCat(path.string(), ": read error"));
  }
  return Manifest{path.string(), std::move(text).str()};
}

bool IsManifestFile(const std::filesystem::path& path) {
  const std::string ext = path.extension().string();
  return ext == ".yaml" || ext == ".yml" || ext == ".json";
}

}  // namespace

absl::StatusOr<std::vector<Manifest>> ReadManifests(
    const std::vector<std::string>& paths) {
  std::vector<Manifest> manifests;
  for (const std::string& path : paths) {
    std::error_code ec;
    const std::filesystem::file_status status =
        std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(status)) {
      return absl::NotFoundError(
          absl::StrCat(path, ": no such file or directory"));
    }
    if (!std::filesystem::is_directory(status)) {
      KCR_ASSIGN_OR_RETURN(Manifest manifest, ReadFile(path));
      manifests.push_back(std::move(manifest));
      continue;
    }
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(path, ec)) {
      if (entry.is_regular_file() && IsManifestFile(entry.path())) {
        files.push_back(entry.path());
      }
    }
    if (ec) {
      return absl::PermissionDeniedError(
          absl::StrCat(path, ": cannot list: ", ec.message()));
    }
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      KCR_ASSIGN_OR_RETURN(Manifest manifest, ReadFile(file));
      manifests.push_back(std::move(manifest));
    }
  }
  return manifests;
}

absl::StatusOr<std::unique_ptr<Environment>> Environment::Start(
    EnvironmentOptions options) {
  if (options.authorization_mode != "AlwaysAllow" &&
      options.authorization_mode != "RBAC") {
    return absl::InvalidArgumentError(
        absl::StrCat("authorization mode must be AlwaysAllow or RBAC, not \"",
                     options.authorization_mode, "\""));
  }
  std::unique_ptr<Environment> env(new Environment());
  env->crd_timeout_ = options.crd_timeout;
  KCR_ASSIGN_OR_RETURN(env->dir_, MakeTempDir());
  apiserver::ApiServerOptions server_options;
  server_options.bind_address = "127.0.0.1";
  server_options.port = 0;
  server_options.event_ttl = options.event_ttl;
  if (options.authorization_mode == "RBAC") {
    // kubectl sends bearer tokens over HTTPS only.
    KCR_ASSIGN_OR_RETURN(TlsMaterial tls, GenerateTlsMaterial());
    KCR_ASSIGN_OR_RETURN(TlsFiles files, WriteTlsFiles(tls, env->dir_));
    env->ca_pem_ = tls.ca_cert_pem;
    KCR_ASSIGN_OR_RETURN(env->admin_token_, RandomToken());
    server_options.tls_cert_file = files.server_cert;
    server_options.tls_key_file = files.server_key;
    server_options.tls_ca_file = files.ca_cert;
    server_options.token = env->admin_token_;
    server_options.authorization_mode = "RBAC";
  }
  if (options.configure_server) options.configure_server(server_options);
  absl::StatusOr<std::unique_ptr<apiserver::ApiServer>> server =
      apiserver::ApiServer::Start(std::move(server_options));
  if (!server.ok()) {
    std::error_code ignored;
    std::filesystem::remove_all(env->dir_, ignored);
    return absl::Status(server.status().code(),
                        absl::StrCat("starting the local API server: ",
                                     server.status().message()));
  }
  env->server_ = *std::move(server);
  env->kubeconfig_ = env->dir_ + "/kubeconfig";
  KCR_RETURN_IF_ERROR(env->server_->WriteKubeconfig(env->kubeconfig_));
  KCR_ASSIGN_OR_RETURN(env->client_, client::NewRestClient(env->rest_config()));
  env->mapper_ = api::RESTMapper::NewDefault();
  KCR_RETURN_IF_ERROR(AddRbacKinds(*env->mapper_));
  KCR_RETURN_IF_ERROR(env->InstallCrds(options.crds));
  KCR_RETURN_IF_ERROR(env->CreateObjects(options.objects));
  return env;
}

Environment::~Environment() { Stop(); }

void Environment::Stop() {
  if (server_ == nullptr) return;
  server_->Stop();
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

std::string Environment::url() const { return server_->url(); }

client::Config Environment::rest_config() const {
  client::Config config;
  config.host = server_->url();
  config.qps = -1;
  config.tls.ca_data = ca_pem_;
  config.bearer_token = admin_token_;
  return config;
}

absl::StatusOr<client::Config> Environment::ServiceAccountConfig(
    const std::string& ns, const std::string& name, absl::Duration ttl) const {
  KCR_ASSIGN_OR_RETURN(api::ObjectPtr sa,
                       client_->Get(Context::Background(),
                                    client::Resource::Namespaced(
                                        {"", "v1", "serviceaccounts"}, ns),
                                    name));
  std::vector<std::string> audiences = server_->options().api_audiences;
  if (audiences.empty()) {
    audiences.push_back(server_->options().service_account_issuer);
  }
  absl::Time expiry;
  KCR_ASSIGN_OR_RETURN(
      std::string token,
      server_->service_account_tokens()->Issue(ns, name, std::string(sa->uid()),
                                               audiences, ttl, &expiry));
  client::Config config = rest_config();
  config.bearer_token = std::move(token);
  config.namespace_ = ns;
  return config;
}

absl::Status Environment::InstallCrds(const std::vector<Manifest>& crds) {
  const Context ctx = Context::Background();
  std::vector<api::ObjectPtr> installed;
  for (const Manifest& manifest : crds) {
    KCR_ASSIGN_OR_RETURN(std::vector<api::ObjectPtr> objects,
                         ParseManifest(manifest));
    for (const api::ObjectPtr& crd : objects) {
      const std::string what = absl::StrCat(
          manifest.path, ": ", ToAbsl(crd->kind()), " ", ToAbsl(crd->name()));
      if (crd->kind() != "CustomResourceDefinition") {
        return absl::InvalidArgumentError(
            absl::StrCat(what, ": not a CustomResourceDefinition"));
      }
      auto created = client_->Create(ctx, CrdResource(), *crd);
      if (!created.ok() && !api::IsAlreadyExists(created.status())) {
        return absl::Status(created.status().code(),
                            absl::StrCat("installing ", what, ": ",
                                         created.status().message()));
      }
      if (absl::Status s = mapper_->AddFromCRD(crd->json()); !s.ok()) {
        return absl::Status(s.code(), absl::StrCat(what, ": ", s.message()));
      }
      installed.push_back(crd);
    }
  }
  const absl::Time deadline = absl::Now() + crd_timeout_;
  for (const api::ObjectPtr& crd : installed) {
    const std::string name(crd->name());
    while (true) {
      auto current = client_->Get(ctx, CrdResource(), name);
      if (current.ok() && Established(**current)) break;
      if (absl::Now() > deadline) {
        return absl::DeadlineExceededError(
            absl::StrCat("CRD ", name, " is not Established after ",
                         absl::FormatDuration(crd_timeout_)));
      }
      absl::SleepFor(absl::Milliseconds(20));
    }
    LOG(INFO) << "installed CRD name=" << name;
    crds_.push_back(crd);
  }
  return absl::OkStatus();
}

absl::Status Environment::CreateObjects(const std::vector<Manifest>& objects) {
  const Context ctx = Context::Background();
  for (const Manifest& manifest : objects) {
    KCR_ASSIGN_OR_RETURN(std::vector<api::ObjectPtr> parsed,
                         ParseManifest(manifest));
    for (const api::ObjectPtr& object : parsed) {
      const std::string what =
          absl::StrCat(manifest.path, ": ", ToAbsl(object->kind()), " ",
                       ToAbsl(object->name()));
      auto gvk = api::GroupVersionKindFromApiVersion(object->api_version(),
                                                     object->kind());
      if (!gvk.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, ": ", gvk.status().message()));
      }
      auto mapping = mapper_->MappingFor(*gvk);
      if (!mapping.ok()) {
        return absl::NotFoundError(
            absl::StrCat(what, ": no resource serves ", gvk->ToString()));
      }
      const client::Resource resource =
          mapping->namespaced()
              ? client::Resource::Namespaced(
                    mapping->resource, object->namespace_().empty()
                                           ? "default"
                                           : std::string(object->namespace_()))
              : client::Resource::ClusterScoped(mapping->resource);
      auto created = client_->Create(ctx, resource, *object);
      if (!created.ok() && !api::IsAlreadyExists(created.status())) {
        return absl::Status(
            created.status().code(),
            absl::StrCat("creating ", what, ": ", created.status().message()));
      }
      LOG(INFO) << "created kind=" << object->kind()
                << " name=" << object->name() << " file=" << manifest.path;
    }
  }
  return absl::OkStatus();
}

absl::Status Environment::MapCrds(api::RESTMapper& mapper) const {
  for (const api::ObjectPtr& crd : crds_) {
    KCR_RETURN_IF_ERROR(mapper.AddFromCRD(crd->json()));
  }
  return absl::OkStatus();
}

}  // namespace kcr::envtest
