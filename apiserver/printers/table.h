// Server-side Table rendering: what kube-apiserver answers when a client
// (every human-readable `kubectl get`) sends
//   Accept: application/json;as=Table;v=v1;g=meta.k8s.io
// A meta.k8s.io/v1 Table holds columnDefinitions {name, type, format,
// description, priority} and rows {cells, conditions, object}, where the
// object is a PartialObjectMetadata (?includeObject=Metadata, the default),
// the full object (Object) or null (None); metadata carries the list's
// resourceVersion, continue and remainingItemCount.
//
// Columns and cells are those of kube-apiserver's printers
// (kubernetes/pkg/printers/internalversion), which the server always runs
// "wide"; kubectl hides priority > 0 columns unless -o wide:
//   pods              Name Ready Status Restarts Age | IP Node
//                     Nominated-Node Readiness-Gates
//   deployments       Name Ready Up-to-date Available Age | Containers Images
//                     Selector
//   namespaces        Name Status Age
//   configmaps        Name Data Age
//   secrets           Name Type Data Age
//   services          Name Type Cluster-IP External-IP Port(s) Age | Selector
//   serviceaccounts   Name Secrets Age
//   events            Last-Seen Type Reason Object Message | Subobject Source
//                     First-Seen Count Name (in kube-apiserver's order)
//   leases            Name Holder Age
//   nodes             Name Status Roles Age Version | Internal-IP
//                     External-IP OS-Image Kernel-Version Container-Runtime
//   customresourcedefinitions and any resource without a printer in
//   kube-apiserver's generic convertor: Name, Created At (RFC 3339)
//   custom resources  Name, then the version's additionalPrinterColumns, or
//                     Age when it declares none (apiextensions-apiserver's
//                     tableconvertor); jsonPath evaluated with
//                     api/jsonpath, cells typed by column type.
// Age cells are apimachinery's duration.HumanDuration of now minus
// creationTimestamp ("5s", "2m5s", "3h", "3d4h", "2y"), with now from the
// injected Clock.
//
// Simplified: column descriptions are kube-apiserver's for pods and for
// the columns printers describe in their own words; for other columns taken
// from the API's field documentation they are its first sentence.
//
// Thread safety: a TablePrinter is immutable; any number of threads may
// render with one at once. Rendering reads objects only.
#ifndef KCR_APISERVER_PRINTERS_TABLE_H_
#define KCR_APISERVER_PRINTERS_TABLE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "base/clock.h"
#include "rapidjson/document.h"

namespace kcr {
namespace apiserver {

// ?includeObject=: what each row's "object" holds.
enum class IncludeObject { kNone, kMetadata, kObject };

// Parses the includeObject query parameter ("" means Metadata).
// InvalidArgument "unrecognized includeObject value: \"x\"" (kube-apiserver
// answers it with 400 BadRequest).
absl::StatusOr<IncludeObject> ParseIncludeObject(std::string_view value);

// The Table group/version an Accept header asks for: "meta.k8s.io/v1" or
// "meta.k8s.io/v1beta1" when, in order of the header, a Table media type
// (application/json;as=Table;v=...;g=meta.k8s.io) comes before any plain
// JSON type (application/json, application/*, */*); nullopt otherwise,
// e.g. for kubectl's -o json/-o yaml. Such a Table response is sent with
// Content-Type application/json, as kube-apiserver does.
std::optional<std::string> TableGroupVersionFromAccept(std::string_view accept);

struct ColumnDefinition {
  std::string name;
  std::string type;    // "string", "integer", "number", "boolean", "date"
  std::string format;  // "name" for the Name column, else usually ""
  std::string description;
  int32_t priority = 0;  // > 0: shown by kubectl only with -o wide
};

struct TableOptions {
  IncludeObject include_object = IncludeObject::kMetadata;
  // Leaves columnDefinitions null (metav1.TableOptions.NoHeaders).
  bool no_headers = false;
  // The Table's group/version, from TableGroupVersionFromAccept.
  std::string group_version = "meta.k8s.io/v1";
};

// The list's metadata copied into the Table's.
struct ListMeta {
  std::string resource_version;
  std::string continue_token;
  std::optional<int64_t> remaining_item_count;
};

class TablePrinter {
 public:
  // The printer kube-apiserver uses for a built-in resource (group "" for
  // the core group, "apps", "coordination.k8s.io", ...); resources it does
  // not know get Name and Age columns. `clock` (not owned, must outlive the
  // printer) gives "now" for ages.
  static TablePrinter ForResource(std::string_view group,
                                  std::string_view resource,
                                  const Clock* clock = Clock::Real());

  // The printer for a custom resource served at `version` of `crd` (an
  // apiextensions.k8s.io/v1 CustomResourceDefinition). InvalidArgument when
  // the version is not in the CRD or a column's jsonPath does not parse
  // ("unrecognized column definition \".spec[\"").
  // `append_age_column` adds an Age column after declared columns that have
  // none (kube-apiserver does not: it shows Age only when a version declares
  // no columns).
  static absl::StatusOr<TablePrinter> ForCustomResource(
      const rapidjson::Value& crd, std::string_view version,
      const Clock* clock = Clock::Real(), bool append_age_column = false);

  // The same from a version's additionalPrinterColumns (a JSON array, or
  // null / empty for none) and the objects' apiVersion and kind.
  static absl::StatusOr<TablePrinter> ForPrinterColumns(
      const rapidjson::Value& columns, std::string_view api_version,
      std::string_view kind, const Clock* clock = Clock::Real(),
      bool append_age_column = false);

  const std::vector<ColumnDefinition>& columns() const;

  // A Table of `items` (each an object of this printer's resource).
  std::string RenderList(absl::Span<const rapidjson::Value* const> items,
                         const ListMeta& list_meta,
                         const TableOptions& options = {}) const;

  // A Table with one row, for GET of one object. metadata.resourceVersion
  // is the object's.
  std::string RenderObject(const rapidjson::Value& object,
                           const TableOptions& options = {}) const;

  // One watch event for `kubectl get -w`: {"type":...,"object":<Table with
  // one row>}, without a trailing newline. ERROR events carry their Status
  // object unchanged, as kube-apiserver sends them.
  std::string RenderWatchEvent(std::string_view type,
                               const rapidjson::Value& object,
                               const TableOptions& options = {}) const;

  // The cells of the row for `object`, as JSON text ("[\"web-0\",\"1/1\",
  // ...]"), for tests and tools.
  std::string RenderCells(const rapidjson::Value& object) const;

  struct Impl;

 private:
  explicit TablePrinter(std::shared_ptr<const Impl> impl)
      : impl_(std::move(impl)) {}

  std::shared_ptr<const Impl> impl_;
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_PRINTERS_TABLE_H_
