#include "apiserver/endpoints/discovery.h"

#include <vector>

#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace kcr {
namespace apiserver {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void Str(Writer& w, const std::string& s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}
void KV(Writer& w, const char* k, const std::string& v) {
  w.Key(k);
  Str(w, v);
}
void StrList(Writer& w, const char* k, const std::vector<std::string>& v) {
  w.Key(k);
  w.StartArray();
  for (const std::string& s : v) Str(w, s);
  w.EndArray();
}

std::string GroupVersionString(const std::string& group,
                               const std::string& version) {
  return group.empty() ? version : group + "/" + version;
}

// An APIGroup's name, versions and preferredVersion.
void GroupFields(Writer& w, const std::string& name,
                 const std::vector<std::string>& versions) {
  KV(w, "name", name);
  w.Key("versions");
  w.StartArray();
  for (const std::string& v : versions) {
    w.StartObject();
    KV(w, "groupVersion", GroupVersionString(name, v));
    KV(w, "version", v);
    w.EndObject();
  }
  w.EndArray();
  w.Key("preferredVersion");
  w.StartObject();
  KV(w, "groupVersion", GroupVersionString(name, versions.front()));
  KV(w, "version", versions.front());
  w.EndObject();
}

void GroupJson(Writer& w, const std::string& name,
               const std::vector<std::string>& versions) {
  w.StartObject();
  GroupFields(w, name, versions);
  w.EndObject();
}

// The kind a pod's connect subresource takes (its options), else "".
std::string ConnectKind(const std::string& sub) {
  if (sub == "exec") return "PodExecOptions";
  if (sub == "attach") return "PodAttachOptions";
  if (sub == "portforward") return "PodPortForwardOptions";
  return "";
}

const std::vector<std::string>& SubresourceVerbs(const std::string& sub) {
  static const auto* finalize = new std::vector<std::string>{"update"};
  static const auto* log = new std::vector<std::string>{"get"};
  static const auto* connect = new std::vector<std::string>{"create", "get"};
  static const auto* other =
      new std::vector<std::string>{"get", "patch", "update"};
  if (sub == "log") return *log;
  if (sub == "exec" || sub == "attach" || sub == "portforward") {
    return *connect;
  }
  return sub == "finalize" ? *finalize : *other;
}

// The verbs a CR resource offers while its CRD is being deleted.
std::vector<std::string> Verbs(const ResourceInfo& r) { return r.verbs; }

void ResponseKind(Writer& w, const std::string& group,
                  const std::string& version, const std::string& kind) {
  w.Key("responseKind");
  w.StartObject();
  KV(w, "group", group);
  KV(w, "version", version);
  KV(w, "kind", kind);
  w.EndObject();
}

}  // namespace

std::string ApiVersionsJson(const std::string& server_address) {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  KV(w, "kind", "APIVersions");
  StrList(w, "versions", {"v1"});
  w.Key("serverAddressByClientCIDRs");
  w.StartArray();
  w.StartObject();
  KV(w, "clientCIDR", "0.0.0.0/0");
  KV(w, "serverAddress", server_address);
  w.EndObject();
  w.EndArray();
  w.EndObject();
  return buf.GetString();
}

std::string ApiGroupListJson(const ResourceRegistry& resources) {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  KV(w, "kind", "APIGroupList");
  KV(w, "apiVersion", "v1");
  w.Key("groups");
  w.StartArray();
  for (const auto& [group, versions] : resources.Groups()) {
    GroupJson(w, group, versions);
  }
  w.EndArray();
  w.EndObject();
  return buf.GetString();
}

std::optional<std::string> ApiGroupJson(const ResourceRegistry& resources,
                                        const std::string& group) {
  for (const auto& [name, versions] : resources.Groups()) {
    if (name != group) continue;
    rapidjson::StringBuffer buf;
    Writer w(buf);
    w.StartObject();
    KV(w, "kind", "APIGroup");
    KV(w, "apiVersion", "v1");
    GroupFields(w, name, versions);
    w.EndObject();
    return std::string(buf.GetString());
  }
  return std::nullopt;
}

std::optional<std::string> ApiResourceListJson(
    const ResourceRegistry& resources, const std::string& group,
    const std::string& version) {
  std::vector<ResourceInfoPtr> matching;
  for (const ResourceInfoPtr& r : resources.All()) {
    if (r->group() == group && r->version() == version) matching.push_back(r);
  }
  if (matching.empty()) return std::nullopt;
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  KV(w, "kind", "APIResourceList");
  KV(w, "apiVersion", "v1");
  KV(w, "groupVersion", GroupVersionString(group, version));
  w.Key("resources");
  w.StartArray();
  for (const ResourceInfoPtr& r : matching) {
    w.StartObject();
    KV(w, "name", r->resource());
    KV(w, "singularName", r->mapping.singular);
    w.Key("namespaced");
    w.Bool(r->namespaced());
    KV(w, "kind", r->kind());
    StrList(w, "verbs", Verbs(*r));
    if (!r->mapping.short_names.empty()) {
      StrList(w, "shortNames", r->mapping.short_names);
    }
    if (!r->categories.empty()) StrList(w, "categories", r->categories);
    w.EndObject();
    for (const std::string& sub : r->mapping.subresources) {
      w.StartObject();
      KV(w, "name", r->resource() + "/" + sub);
      KV(w, "singularName", "");
      w.Key("namespaced");
      w.Bool(r->namespaced());
      if (sub == "scale") {
        KV(w, "group", "autoscaling");
        KV(w, "version", "v1");
        KV(w, "kind", "Scale");
      } else if (!ConnectKind(sub).empty()) {
        KV(w, "kind", ConnectKind(sub));
      } else {
        KV(w, "kind", r->kind());
      }
      StrList(w, "verbs", SubresourceVerbs(sub));
      w.EndObject();
    }
  }
  w.EndArray();
  w.EndObject();
  return std::string(buf.GetString());
}

std::string AggregatedDiscoveryJson(const ResourceRegistry& resources,
                                    bool legacy, const std::string& version) {
  std::vector<ResourceInfoPtr> all = resources.All();
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  KV(w, "kind", "APIGroupDiscoveryList");
  KV(w, "apiVersion", "apidiscovery.k8s.io/" + version);
  w.Key("metadata");
  w.StartObject();
  w.EndObject();
  w.Key("items");
  w.StartArray();
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;
  if (legacy) {
    groups.push_back({"", {"v1"}});
  } else {
    groups = resources.Groups();
  }
  for (const auto& [group, versions] : groups) {
    w.StartObject();
    w.Key("metadata");
    w.StartObject();
    KV(w, "name", group);
    w.Key("creationTimestamp");
    w.Null();
    w.EndObject();
    w.Key("versions");
    w.StartArray();
    for (const std::string& v : versions) {
      w.StartObject();
      KV(w, "version", v);
      w.Key("resources");
      w.StartArray();
      for (const ResourceInfoPtr& r : all) {
        if (r->group() != group || r->version() != v) continue;
        w.StartObject();
        KV(w, "resource", r->resource());
        ResponseKind(w, group, v, r->kind());
        KV(w, "scope", r->namespaced() ? "Namespaced" : "Cluster");
        KV(w, "singularResource", r->mapping.singular);
        StrList(w, "verbs", Verbs(*r));
        if (!r->mapping.short_names.empty()) {
          StrList(w, "shortNames", r->mapping.short_names);
        }
        if (!r->categories.empty()) StrList(w, "categories", r->categories);
        if (!r->mapping.subresources.empty()) {
          w.Key("subresources");
          w.StartArray();
          for (const std::string& sub : r->mapping.subresources) {
            w.StartObject();
            KV(w, "subresource", sub);
            if (sub == "scale") {
              ResponseKind(w, "autoscaling", "v1", "Scale");
            } else if (!ConnectKind(sub).empty()) {
              ResponseKind(w, group, v, ConnectKind(sub));
            } else {
              ResponseKind(w, group, v, r->kind());
            }
            StrList(w, "verbs", SubresourceVerbs(sub));
            w.EndObject();
          }
          w.EndArray();
        }
        w.EndObject();
      }
      w.EndArray();
      KV(w, "freshness", "Current");
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return buf.GetString();
}

}  // namespace apiserver
}  // namespace kcr
