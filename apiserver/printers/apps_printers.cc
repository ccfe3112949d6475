#include "apiserver/printers/apps_printers.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "api/types/field.h"

namespace kcr {
namespace apiserver {
namespace printers {

namespace field = ::kcr::api::field;

std::vector<ColumnDefinition> DeploymentColumns() {
  return {NameColumn(),
          Column("Ready", "string", "Number of the pod with ready state"),
          Column("Up-to-date", "string",
                 "Total number of non-terminated pods targeted by this "
                 "deployment that have the desired template spec."),
          Column("Available", "string",
                 "Total number of available pods (ready for at least "
                 "minReadySeconds) targeted by this deployment."),
          AgeColumn(),
          Column("Containers", "string",
                 "Names of each container in the template.", 1),
          Column("Images", "string",
                 "Images referenced by each container in the template.", 1),
          Column("Selector", "string",
                 "Label selector for pods. Existing ReplicaSets whose pods are "
                 "selected by this will be the ones affected by this "
                 "deployment.",
                 1)};
}

Cells DeploymentCells(const Value& d, absl::Time now) {
  const Value* spec = field::Object(&d, "spec");
  const Value* status = field::Object(&d, "status");
  const int64_t desired = field::Int64(spec, "replicas").value_or(1);
  const Value* pod_spec =
      field::Object(field::Object(spec, "template"), "spec");
  auto [names, images] = ContainerCells(field::Array(pod_spec, "containers"));
  return {NameOf(d),
          absl::StrCat(Int(status, "readyReplicas"), "/", desired),
          Int(status, "updatedReplicas"),
          Int(status, "availableReplicas"),
          AgeOf(d, now),
          names,
          images,
          FormatLabelSelector(field::Member(spec, "selector"))};
}

std::vector<ColumnDefinition> ReplicaSetColumns() {
  return {NameColumn(),
          Column("Desired", "integer", "Number of desired pods."),
          Column("Current", "integer", "Number of actual replicas."),
          Column("Ready", "integer", "Number of ready replicas."),
          AgeColumn(),
          Column("Containers", "string",
                 "Names of each container in the template.", 1),
          Column("Images", "string",
                 "Images referenced by each container in the template.", 1),
          Column("Selector", "string",
                 "The label selector for pods. A label selector is a label "
                 "query over a set of resources.",
                 1)};
}

Cells ReplicaSetCells(const Value& rs, absl::Time now) {
  const Value* spec = field::Object(&rs, "spec");
  const Value* status = field::Object(&rs, "status");
  const Value* pod_spec =
      field::Object(field::Object(spec, "template"), "spec");
  auto [names, images] = ContainerCells(field::Array(pod_spec, "containers"));
  return {NameOf(rs),
          field::Int64(spec, "replicas").value_or(1),
          Int(status, "replicas"),
          Int(status, "readyReplicas"),
          AgeOf(rs, now),
          names,
          images,
          FormatLabelSelector(field::Member(spec, "selector"))};
}

}  // namespace printers
}  // namespace apiserver
}  // namespace kcr
