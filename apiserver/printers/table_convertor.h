// TableConvertor: the seam through which the server renders objects as a
// meta.k8s.io/v1 Table, what `kubectl get` asks for with
//   Accept: application/json;as=Table;v=v1;g=meta.k8s.io,...
// The HTTP handler calls it for list, get and watch requests that ask for a
// Table. Without a convertor (ApiServerOptions::table_convertor null) the
// server answers plain JSON, which kubectl also accepts (it then prints
// NAME and AGE only).
#ifndef KCR_APISERVER_PRINTERS_TABLE_CONVERTOR_H_
#define KCR_APISERVER_PRINTERS_TABLE_CONVERTOR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/object.h"
#include "apiserver/registry/resources.h"

namespace kcr {
namespace apiserver {

struct TableRequest {
  // ?includeObject=: what each row's `object` holds.
  enum class IncludeObject { kNone, kMetadata, kObject };
  IncludeObject include_object = IncludeObject::kMetadata;
  // Leave out columnDefinitions (every watch event after the first).
  bool no_headers = false;
  // The Table's metadata.
  std::string resource_version;
  std::string continue_token;
  std::optional<int64_t> remaining_item_count;
};

class TableConvertor {
 public:
  virtual ~TableConvertor() = default;

  // Renders `objects` (all of `resource`, already converted to its
  // version) as one Table, compact JSON: {"kind":"Table","apiVersion":
  // "meta.k8s.io/v1","metadata":{...},"columnDefinitions":[...],"rows":[...]}.
  // An error becomes the response (406 NotAcceptable if it carries no
  // Kubernetes Status). Called concurrently from many threads.
  virtual absl::StatusOr<std::string> ConvertToTable(
      const ResourceInfo& resource, const std::vector<api::ObjectPtr>& objects,
      const TableRequest& request) const = 0;
};

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_PRINTERS_TABLE_CONVERTOR_H_
