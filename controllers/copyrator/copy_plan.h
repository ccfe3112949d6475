// What one CopyratorRule should change: given the rule's sources, the
// namespaces, what already stands at each target name and the copies the
// rule made before, the copies to create, update and delete, and the
// targets it must leave alone (conflicts). Pure: it reads objects and
// writes nothing, so the copyrator's reconciler is a thin loop around it.
//
// A copy is a ConfigMap or Secret with the source's name, data (ConfigMap
// data and binaryData; Secret type and data) and labels, plus
//   label      copyrator.flant.com/rule:   <rule ns>.<rule name>
//   label      copyrator.flant.com/source: <source ns>.<source name>
//   annotation copyrator.flant.com/rule:   <rule ns>/<rule name>
//   annotation copyrator.flant.com/source: <source ns>/<source name>
// The annotations are authoritative (an object is a copy of rule R only
// when its rule annotation says R); the labels exist for selecting (label
// values cannot hold '/'; a value longer than 63 characters is cut and
// ends in a hash, see LabelValue).
#ifndef KCR_CONTROLLERS_COPYRATOR_COPY_PLAN_H_
#define KCR_CONTROLLERS_COPYRATOR_COPY_PLAN_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "api/object.h"

namespace kcr::copyrator {

inline constexpr char kRuleLabel[] = "copyrator.flant.com/rule";
inline constexpr char kSourceLabel[] = "copyrator.flant.com/source";
inline constexpr char kRuleAnnotation[] = "copyrator.flant.com/rule";
inline constexpr char kSourceAnnotation[] = "copyrator.flant.com/source";
// Held on a rule until its copies are gone.
inline constexpr char kFinalizer[] = "copyrator.flant.com/finalizer";

inline constexpr char kConfigMapKind[] = "ConfigMap";
inline constexpr char kSecretKind[] = "Secret";

// "<ns>.<name>" (unambiguous: a namespace holds no '.'), a valid label
// value; when longer than 63 characters, its first 46 characters, '-' and
// 16 hex digits of its FNV-1a hash.
std::string LabelValue(std::string_view ns, std::string_view name);

// "<ns>/<name>".
std::string RefOf(const api::Object& object);

// Whether `object` is a copy made by some rule (it has the rule
// annotation). Copies are never sources: they carry their source's labels
// and would otherwise be copied again.
bool IsCopy(const api::Object& object);

// The copy of `source` (a ConfigMap or Secret) in `ns` made by `rule`
// ("<ns>/<name>"), as it should stand; no resourceVersion.
absl::StatusOr<api::ObjectPtr> DesiredCopy(std::string_view rule,
                                           const api::Object& source,
                                           std::string_view ns);

// Whether `existing` (a copy) already holds what `desired` holds: labels
// exactly, the two copyrator annotations, and the data (other annotations
// are left to whoever set them).
bool InStep(const api::Object& existing, const api::Object& desired);

// A target the rule may not write.
struct Conflict {
  std::string target;  // "<ns>/<name>"
  std::string source;  // "<ns>/<name>" of the source that wanted it
  std::string reason;  // e.g. "exists and is not a copy"
};

struct PlanInput {
  std::string rule;  // "<ns>/<name>"
  std::string kind;  // kConfigMapKind or kSecretKind
  // The objects to copy, most important first: when two claim one target
  // name and neither already holds it, the first wins.
  std::vector<api::ObjectPtr> sources;
  // Every namespace; copies go to the Active ones other than the source's.
  std::vector<api::ObjectPtr> namespaces;
  // The object of `kind` now at ns/name, or null.
  std::function<api::ObjectPtr(std::string_view ns, std::string_view name)>
      existing;
  // Every object (of either kind) whose rule annotation names this rule.
  std::vector<api::ObjectPtr> copies;
};

struct CopyPlan {
  std::vector<api::ObjectPtr> create;
  // Each the existing copy edited, with its resourceVersion.
  std::vector<api::ObjectPtr> update;
  // Existing copies to delete: no longer wanted, or a Secret copy whose
  // type changed (a Secret's type cannot be updated; it is created again
  // once gone).
  std::vector<api::ObjectPtr> remove;
  std::vector<Conflict> conflicts;
  // Wanted copies that already stand as they should.
  int in_step = 0;
  // Wanted copies in all (in step, to create, to update, waiting).
  int wanted = 0;
};

// The plan for `in`. Errors only when a desired copy cannot be built
// (an invalid source object).
absl::StatusOr<CopyPlan> PlanCopies(const PlanInput& in);

}  // namespace kcr::copyrator

#endif  // KCR_CONTROLLERS_COPYRATOR_COPY_PLAN_H_
