#include "cmd/controller-manager/embedded.h"

#include <stdlib.h>

#include <filesystem>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "api/crd/crd_manifests.h"
#include "api/errors/errors.h"
#include "api/json/yaml_to_json.h"
#include "api/meta/group_version.h"
#include "api/object.h"
#include "base/status_macros.h"
#include "base/string_view.h"
#include "glog/logging.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace kcr::cmd {
namespace {

// The objects of a YAML stream, one per document.
absl::StatusOr<std::vector<api::ObjectPtr>> ParseManifest(
    std::string_view yaml) {
  KCR_ASSIGN_OR_RETURN(auto docs, json::YamlToJsonDocuments(yaml));
  std::vector<api::ObjectPtr> objects;
  for (const auto& doc : docs) {
    rapidjson::StringBuffer json;
    rapidjson::Writer<rapidjson::StringBuffer> writer(json);
    doc->Accept(writer);
    KCR_ASSIGN_OR_RETURN(
        api::ObjectPtr object,
        api::Object::Parse(std::string_view(json.GetString(), json.GetSize())));
    objects.push_back(std::move(object));
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

absl::StatusOr<std::string> MakeTempDir() {
  const char* tmp = getenv("TMPDIR");
  std::string pattern =
      std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
      "/kcr-embedded-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("cannot create ", pattern));
  }
  return pattern;
}

}  // namespace

absl::StatusOr<std::unique_ptr<EmbeddedCluster>> EmbeddedCluster::Start(
    absl::Duration event_ttl) {
  apiserver::ApiServerOptions options;
  options.bind_address = "127.0.0.1";
  options.port = 0;
  options.event_ttl = event_ttl;
  absl::StatusOr<std::unique_ptr<apiserver::ApiServer>> server =
      apiserver::ApiServer::Start(std::move(options));
  if (!server.ok()) {
    return absl::Status(server.status().code(),
                        absl::StrCat("starting the embedded API server: ",
                                     server.status().message()));
  }
  KCR_ASSIGN_OR_RETURN(std::string dir, MakeTempDir());
  std::unique_ptr<EmbeddedCluster> cluster(
      new EmbeddedCluster(*std::move(server), std::move(dir)));
  KCR_RETURN_IF_ERROR(cluster->server_->WriteKubeconfig(cluster->kubeconfig_));
  return cluster;
}

EmbeddedCluster::EmbeddedCluster(std::unique_ptr<apiserver::ApiServer> server,
                                 std::string dir)
    : server_(std::move(server)),
      dir_(std::move(dir)),
      kubeconfig_(dir_ + "/kubeconfig") {}

EmbeddedCluster::~EmbeddedCluster() { Stop(); }

void EmbeddedCluster::Stop() {
  server_->Stop();
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

absl::Status EmbeddedCluster::InstallCrds(const Context& ctx,
                                          client::RestClient& client,
                                          api::RESTMapper& mapper,
                                          absl::Duration timeout) {
  const client::Resource crds = client::Resource::ClusterScoped(
      {"apiextensions.k8s.io", "v1", "customresourcedefinitions"});
  std::vector<std::string> names;
  for (const char* yaml :
       {api::crd::kNginxCrdYaml, api::crd::kCopyratorRuleCrdYaml,
        api::crd::kLoadTestCrdYaml, api::crd::kSimpleDeploymentCrdYaml}) {
    KCR_ASSIGN_OR_RETURN(std::vector<api::ObjectPtr> objects,
                         ParseManifest(yaml));
    for (const api::ObjectPtr& crd : objects) {
      auto created = client.Create(ctx, crds, *crd);
      if (!created.ok() && !api::IsAlreadyExists(created.status())) {
        return absl::Status(created.status().code(),
                            absl::StrCat("installing CRD ", ToAbsl(crd->name()),
                                         ": ", created.status().message()));
      }
      KCR_RETURN_IF_ERROR(mapper.AddFromCRD(crd->json()));
      names.emplace_back(crd->name());
    }
  }
  const absl::Time deadline = absl::Now() + timeout;
  for (const std::string& name : names) {
    while (true) {
      auto crd = client.Get(ctx, crds, name);
      if (crd.ok() && Established(**crd)) break;
      if (absl::Now() > deadline || ctx.done()) {
        return absl::DeadlineExceededError(
            absl::StrCat("CRD ", name, " is not Established after ",
                         absl::FormatDuration(timeout)));
      }
      absl::SleepFor(absl::Milliseconds(50));
    }
    LOG(INFO) << "installed CRD name=" << name;
  }
  return absl::OkStatus();
}

absl::Status EmbeddedCluster::InstallSamples(const Context& ctx,
                                             client::RestClient& client,
                                             const api::RESTMapper& mapper) {
  for (int i = 0; i < kEmbeddedSampleCount; ++i) {
    const EmbeddedManifest& file = kEmbeddedSamples[i];
    absl::StatusOr<std::vector<api::ObjectPtr>> objects =
        ParseManifest(file.text);
    if (!objects.ok()) {
      return absl::Status(
          objects.status().code(),
          absl::StrCat(file.path, ": ", objects.status().message()));
    }
    for (const api::ObjectPtr& object : *objects) {
      const std::string what = absl::StrCat(
          file.path, ": ", ToAbsl(object->kind()), " ", ToAbsl(object->name()));
      auto gvk = api::GroupVersionKindFromApiVersion(object->api_version(),
                                                     object->kind());
      if (!gvk.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, ": ", gvk.status().message()));
      }
      auto mapping = mapper.MappingFor(*gvk);
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
      auto created = client.Create(ctx, resource, *object);
      if (!created.ok() && !api::IsAlreadyExists(created.status())) {
        return absl::Status(created.status().code(),
                            absl::StrCat("installing ", what, ": ",
                                         created.status().message()));
      }
      LOG(INFO) << "installed sample kind=" << object->kind()
                << " name=" << object->name() << " file=" << file.path;
    }
  }
  return absl::OkStatus();
}

}  // namespace kcr::cmd
