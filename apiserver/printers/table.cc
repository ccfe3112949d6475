#include "apiserver/printers/table.h"

#include <map>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "api/types/field.h"
#include "api/types/time.h"
#include "apiserver/printers/apps_printers.h"
#include "apiserver/printers/coordination_printers.h"
#include "apiserver/printers/core_printers.h"
#include "apiserver/printers/custom_columns.h"
#include "apiserver/printers/printers.h"
#include "apiserver/printers/rbac_printers.h"
#include "apiserver/printers/workload_printers.h"
#include "base/string_view.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace kcr {
namespace apiserver {
namespace {

using ::kcr::apiserver::printers::AgeColumn;
using ::kcr::apiserver::printers::AgeOf;
using ::kcr::apiserver::printers::Cell;
using ::kcr::apiserver::printers::Cells;
using ::kcr::apiserver::printers::Column;
using ::kcr::apiserver::printers::CustomCell;
using ::kcr::apiserver::printers::CustomColumn;
using ::kcr::apiserver::printers::kCreationTimestampDescription;
using ::kcr::apiserver::printers::Metadata;
using ::kcr::apiserver::printers::NameColumn;
using ::kcr::apiserver::printers::NameOf;
using ::kcr::apiserver::printers::RowCondition;
using ::kcr::apiserver::printers::TimeMember;
using ::kcr::apiserver::printers::Value;
namespace field = ::kcr::api::field;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

enum class Kind {
  kPod,
  kDeployment,
  kReplicaSet,
  kNamespace,
  kConfigMap,
  kSecret,
  kService,
  kServiceAccount,
  kEvent,
  kLease,
  kRoleBinding,
  kNode,
  kKindPrinter,  // workload_printers.h
  kDefault,      // rest.NewDefaultTableConvertor: Name, Created At
  kGeneric,      // Name, Age
  kCustom,
};

// ---------------------------------------------------------------------------
// Writing.

void WriteString(Writer* w, absl::string_view s) {
  // An empty view may carry a null pointer, which RapidJSON rejects.
  if (s.empty()) {
    w->String("", 0);
    return;
  }
  w->String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

void WriteCell(Writer* w, const Cell& cell) {
  if (std::holds_alternative<std::monostate>(cell)) {
    w->Null();
  } else if (const auto* s = std::get_if<std::string>(&cell)) {
    WriteString(w, *s);
  } else if (const auto* i = std::get_if<int64_t>(&cell)) {
    w->Int64(*i);
  } else if (const auto* d = std::get_if<double>(&cell)) {
    // Go writes 2.0 as 2: keep integral values integral on the wire.
    if (std::fabs(*d) < 9007199254740992.0 && std::floor(*d) == *d) {
      w->Int64(static_cast<int64_t>(*d));
    } else {
      w->Double(*d);
    }
  } else if (const auto* b = std::get_if<bool>(&cell)) {
    w->Bool(*b);
  }
}

}  // namespace

struct TablePrinter::Impl {
  Kind kind = Kind::kGeneric;
  std::vector<ColumnDefinition> columns;
  std::vector<CustomColumn> custom;  // columns[1 .. custom.size()]
  bool custom_age = false;           // an Age column follows them
  // apiVersion and kind of full objects in rows, when items lack them.
  std::string api_version;
  std::string object_kind;
  const Clock* clock = nullptr;
  const printers::KindPrinter* printer = nullptr;  // for kKindPrinter

  Cells CellsFor(const Value& object, absl::Time now,
                 std::vector<RowCondition>* conditions) const {
    switch (kind) {
      case Kind::kPod:
        return printers::PodCells(object, now, conditions);
      case Kind::kDeployment:
        return printers::DeploymentCells(object, now);
      case Kind::kReplicaSet:
        return printers::ReplicaSetCells(object, now);
      case Kind::kNamespace:
        return printers::NamespaceCells(object, now);
      case Kind::kConfigMap:
        return printers::ConfigMapCells(object, now);
      case Kind::kSecret:
        return printers::SecretCells(object, now);
      case Kind::kService:
        return printers::ServiceCells(object, now);
      case Kind::kServiceAccount:
        return printers::ServiceAccountCells(object, now);
      case Kind::kEvent:
        return printers::EventCells(object, now);
      case Kind::kLease:
        return printers::LeaseCells(object, now);
      case Kind::kRoleBinding:
        return printers::RoleBindingCells(object, now);
      case Kind::kNode:
        return printers::NodeCells(object, now);
      case Kind::kKindPrinter:
        return printer->cells(object, now);
      case Kind::kDefault: {
        std::optional<absl::Time> t =
            TimeMember(Metadata(object), "creationTimestamp");
        return {
            NameOf(object),
            api::FormatRfc3339(t.value_or(absl::FromCivil(
                absl::CivilSecond(1, 1, 1, 0, 0, 0), absl::UTCTimeZone())))};
      }
      case Kind::kGeneric:
        return {NameOf(object), AgeOf(object, now)};
      case Kind::kCustom: {
        Cells cells = {NameOf(object)};
        for (const CustomColumn& c : custom) {
          cells.push_back(CustomCell(c, object, now));
        }
        if (custom_age) cells.push_back(AgeOf(object, now));
        return cells;
      }
    }
    return {};
  }

  void WriteRow(Writer* w, const Value& object, absl::Time now,
                const TableOptions& options) const {
    std::vector<RowCondition> conditions;
    Cells cells = CellsFor(object, now, &conditions);
    w->StartObject();
    w->Key("cells");
    w->StartArray();
    for (const Cell& c : cells) WriteCell(w, c);
    w->EndArray();
    if (!conditions.empty()) {
      w->Key("conditions");
      w->StartArray();
      for (const RowCondition& c : conditions) {
        w->StartObject();
        w->Key("type");
        WriteString(w, c.type);
        w->Key("status");
        WriteString(w, c.status);
        w->Key("reason");
        WriteString(w, c.reason);
        w->Key("message");
        WriteString(w, c.message);
        w->EndObject();
      }
      w->EndArray();
    }
    w->Key("object");
    switch (options.include_object) {
      case IncludeObject::kNone:
        w->Null();
        break;
      case IncludeObject::kMetadata: {
        w->StartObject();
        w->Key("kind");
        w->String("PartialObjectMetadata");
        w->Key("apiVersion");
        WriteString(w, options.group_version);
        w->Key("metadata");
        const Value* metadata = Metadata(object);
        if (metadata != nullptr) {
          metadata->Accept(*w);
        } else {
          w->StartObject();
          w->EndObject();
        }
        w->EndObject();
        break;
      }
      case IncludeObject::kObject:
        WriteFullObject(w, object);
        break;
    }
    w->EndObject();
  }

  // The object with apiVersion and kind first when it lacks them (list
  // items often do).
  void WriteFullObject(Writer* w, const Value& object) const {
    if (!object.IsObject() ||
        (object.HasMember("apiVersion") && object.HasMember("kind")) ||
        api_version.empty()) {
      object.Accept(*w);
      return;
    }
    w->StartObject();
    if (!object.HasMember("apiVersion")) {
      w->Key("apiVersion");
      WriteString(w, api_version);
    }
    if (!object.HasMember("kind")) {
      w->Key("kind");
      WriteString(w, object_kind);
    }
    for (const auto& m : object.GetObject()) {
      w->Key(m.name.GetString(), m.name.GetStringLength());
      m.value.Accept(*w);
    }
    w->EndObject();
  }

  void WriteTable(Writer* w, absl::Span<const Value* const> items,
                  const ListMeta& list_meta,
                  const TableOptions& options) const {
    const absl::Time now = clock->Now();
    w->StartObject();
    w->Key("kind");
    w->String("Table");
    w->Key("apiVersion");
    WriteString(w, options.group_version);
    w->Key("metadata");
    w->StartObject();
    if (!list_meta.resource_version.empty()) {
      w->Key("resourceVersion");
      WriteString(w, list_meta.resource_version);
    }
    if (!list_meta.continue_token.empty()) {
      w->Key("continue");
      WriteString(w, list_meta.continue_token);
    }
    if (list_meta.remaining_item_count.has_value()) {
      w->Key("remainingItemCount");
      w->Int64(*list_meta.remaining_item_count);
    }
    w->EndObject();
    w->Key("columnDefinitions");
    if (options.no_headers) {
      w->Null();
    } else {
      w->StartArray();
      for (const ColumnDefinition& c : columns) {
        w->StartObject();
        w->Key("name");
        WriteString(w, c.name);
        w->Key("type");
        WriteString(w, c.type);
        w->Key("format");
        WriteString(w, c.format);
        w->Key("description");
        WriteString(w, c.description);
        w->Key("priority");
        w->Int(c.priority);
        w->EndObject();
      }
      w->EndArray();
    }
    w->Key("rows");
    w->StartArray();
    for (const Value* item : items) WriteRow(w, *item, now, options);
    w->EndArray();
    w->EndObject();
  }
};

absl::StatusOr<IncludeObject> ParseIncludeObject(std::string_view value_in) {
  const absl::string_view value = ToAbsl(value_in);
  if (value.empty() || value == "Metadata") return IncludeObject::kMetadata;
  if (value == "Object") return IncludeObject::kObject;
  if (value == "None") return IncludeObject::kNone;
  return absl::InvalidArgumentError(
      absl::StrCat("unrecognized includeObject value: \"", value, "\""));
}

std::optional<std::string> TableGroupVersionFromAccept(
    std::string_view accept_in) {
  const absl::string_view accept = ToAbsl(accept_in);
  for (absl::string_view range : absl::StrSplit(accept, ',')) {
    std::vector<absl::string_view> parts = absl::StrSplit(range, ';');
    const std::string type =
        absl::AsciiStrToLower(absl::StripAsciiWhitespace(parts[0]));
    std::map<std::string, std::string> params;
    for (size_t i = 1; i < parts.size(); ++i) {
      std::pair<absl::string_view, absl::string_view> kv =
          absl::StrSplit(parts[i], absl::MaxSplits('=', 1));
      params[absl::AsciiStrToLower(absl::StripAsciiWhitespace(kv.first))] =
          std::string(absl::StripAsciiWhitespace(kv.second));
    }
    if (params.count("q") && (params["q"] == "0" || params["q"] == "0.0")) {
      continue;
    }
    const bool json_type =
        type == "application/json" || type == "application/*" || type == "*/*";
    if (!json_type) continue;
    auto as = params.find("as");
    if (as == params.end()) return std::nullopt;  // plain JSON comes first
    if (as->second == "Table" && params["g"] == "meta.k8s.io" &&
        (params["v"] == "v1" || params["v"] == "v1beta1")) {
      return absl::StrCat("meta.k8s.io/", params["v"]);
    }
    // Another conversion (PartialObjectMetadata...) or version: not served
    // here; look further.
  }
  return std::nullopt;
}

const std::vector<ColumnDefinition>& TablePrinter::columns() const {
  return impl_->columns;
}

TablePrinter TablePrinter::ForResource(std::string_view group_in,
                                       std::string_view resource_in,
                                       const Clock* clock) {
  const absl::string_view group = ToAbsl(group_in);
  const absl::string_view resource = ToAbsl(resource_in);
  auto impl = std::make_shared<Impl>();
  impl->clock = clock;
  std::vector<ColumnDefinition>& c = impl->columns;
  const auto set = [&](Kind kind, std::string api_version,
                       std::string object_kind) {
    impl->kind = kind;
    impl->api_version = std::move(api_version);
    impl->object_kind = std::move(object_kind);
  };
  if (group.empty() && resource == "pods") {
    set(Kind::kPod, "v1", "Pod");
    c = printers::PodColumns();
  } else if (group == "apps" && resource == "deployments") {
    set(Kind::kDeployment, "apps/v1", "Deployment");
    c = printers::DeploymentColumns();
  } else if (group == "apps" && resource == "replicasets") {
    set(Kind::kReplicaSet, "apps/v1", "ReplicaSet");
    c = printers::ReplicaSetColumns();
  } else if (group.empty() && resource == "namespaces") {
    set(Kind::kNamespace, "v1", "Namespace");
    c = printers::NamespaceColumns();
  } else if (group.empty() && resource == "configmaps") {
    set(Kind::kConfigMap, "v1", "ConfigMap");
    c = printers::ConfigMapColumns();
  } else if (group.empty() && resource == "secrets") {
    set(Kind::kSecret, "v1", "Secret");
    c = printers::SecretColumns();
  } else if (group.empty() && resource == "services") {
    set(Kind::kService, "v1", "Service");
    c = printers::ServiceColumns();
  } else if (group.empty() && resource == "serviceaccounts") {
    set(Kind::kServiceAccount, "v1", "ServiceAccount");
    c = printers::ServiceAccountColumns();
  } else if (group.empty() && resource == "events") {
    set(Kind::kEvent, "v1", "Event");
    c = printers::EventColumns();
  } else if (group == "coordination.k8s.io" && resource == "leases") {
    set(Kind::kLease, "coordination.k8s.io/v1", "Lease");
    c = printers::LeaseColumns();
  } else if (group == "rbac.authorization.k8s.io" &&
             (resource == "roles" || resource == "clusterroles")) {
    set(Kind::kDefault, "rbac.authorization.k8s.io/v1",
        resource == "roles" ? "Role" : "ClusterRole");
    c = {NameColumn(),
         Column("Created At", "date", kCreationTimestampDescription)};
  } else if (group == "rbac.authorization.k8s.io" &&
             (resource == "rolebindings" ||
              resource == "clusterrolebindings")) {
    const bool cluster = resource == "clusterrolebindings";
    set(Kind::kRoleBinding, "rbac.authorization.k8s.io/v1",
        cluster ? "ClusterRoleBinding" : "RoleBinding");
    c = printers::RoleBindingColumns(cluster);
  } else if (group.empty() && resource == "nodes") {
    set(Kind::kNode, "v1", "Node");
    c = printers::NodeColumns();
  } else if (group == "apiextensions.k8s.io" &&
             resource == "customresourcedefinitions") {
    set(Kind::kDefault, "apiextensions.k8s.io/v1", "CustomResourceDefinition");
    c = {NameColumn(),
         Column("Created At", "date", kCreationTimestampDescription)};
  } else if (const printers::KindPrinter* p =
                 printers::FindKindPrinter(ToStd(group), ToStd(resource))) {
    set(Kind::kKindPrinter, p->api_version, p->kind);
    impl->printer = p;
    c = p->columns();
  } else {
    set(Kind::kGeneric, "", "");
    c = {NameColumn(), AgeColumn()};
  }
  return TablePrinter(std::move(impl));
}

absl::StatusOr<TablePrinter> TablePrinter::ForCustomResource(
    const rapidjson::Value& crd, std::string_view version_in,
    const Clock* clock, bool append_age_column) {
  const absl::string_view version = ToAbsl(version_in);
  const Value* spec = field::Object(&crd, "spec");
  const Value* versions = field::Array(spec, "versions");
  const Value* served = nullptr;
  if (versions != nullptr) {
    for (const auto& v : versions->GetArray()) {
      if (field::String(&v, "name") == ToStd(version)) served = &v;
    }
  }
  if (served == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "version ", version, " not found in CustomResourceDefinition: ",
        ToAbsl(field::String(Metadata(crd), "name"))));
  }
  const Value* declared = field::Array(served, "additionalPrinterColumns");
  Value none(rapidjson::kArrayType);
  return ForPrinterColumns(
      declared == nullptr ? none : *declared,
      absl::StrCat(ToAbsl(field::String(spec, "group")), "/", version),
      field::String(field::Object(spec, "names"), "kind"), clock,
      append_age_column);
}

absl::StatusOr<TablePrinter> TablePrinter::ForPrinterColumns(
    const rapidjson::Value& columns, std::string_view api_version,
    std::string_view kind, const Clock* clock, bool append_age_column) {
  auto impl = std::make_shared<Impl>();
  impl->clock = clock;
  impl->kind = Kind::kCustom;
  impl->api_version = std::string(api_version);
  impl->object_kind = std::string(kind);
  impl->columns.push_back(NameColumn());

  absl::StatusOr<printers::CustomColumns> custom =
      printers::ParsePrinterColumns(columns, append_age_column);
  if (!custom.ok()) return custom.status();
  for (ColumnDefinition& c : custom->columns) {
    impl->columns.push_back(std::move(c));
  }
  impl->custom = std::move(custom->custom);
  impl->custom_age = custom->age;
  return TablePrinter(std::move(impl));
}

std::string TablePrinter::RenderList(
    absl::Span<const rapidjson::Value* const> items, const ListMeta& list_meta,
    const TableOptions& options) const {
  rapidjson::StringBuffer buffer;
  Writer writer(buffer);
  impl_->WriteTable(&writer, items, list_meta, options);
  return std::string(buffer.GetString(), buffer.GetSize());
}

std::string TablePrinter::RenderObject(const rapidjson::Value& object,
                                       const TableOptions& options) const {
  ListMeta meta;
  meta.resource_version =
      std::string(field::String(Metadata(object), "resourceVersion"));
  const Value* items[] = {&object};
  return RenderList(items, meta, options);
}

std::string TablePrinter::RenderWatchEvent(std::string_view type_in,
                                           const rapidjson::Value& object,
                                           const TableOptions& options) const {
  const absl::string_view type = ToAbsl(type_in);
  rapidjson::StringBuffer buffer;
  Writer writer(buffer);
  writer.StartObject();
  writer.Key("type");
  WriteString(&writer, type);
  writer.Key("object");
  if (type == "ERROR") {
    object.Accept(writer);
  } else {
    ListMeta meta;
    meta.resource_version =
        std::string(field::String(Metadata(object), "resourceVersion"));
    const Value* items[] = {&object};
    impl_->WriteTable(&writer, items, meta, options);
  }
  writer.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

std::string TablePrinter::RenderCells(const rapidjson::Value& object) const {
  std::vector<RowCondition> conditions;
  Cells cells = impl_->CellsFor(object, impl_->clock->Now(), &conditions);
  rapidjson::StringBuffer buffer;
  Writer writer(buffer);
  writer.StartArray();
  for (const Cell& c : cells) WriteCell(&writer, c);
  writer.EndArray();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace apiserver
}  // namespace kcr
