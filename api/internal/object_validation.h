// Validation of the fields api::Object exposes, for Object::Parse and
// Object::FromValue (api/object_parse.cc): Validate checks a tree before an
// Object is built from it, so accessors never meet a wrong type, and says
// where a problem is; LocateSite and LocateTooDeep turn that into a byte
// offset in the text, for the error message.
#ifndef KCR_API_INTERNAL_OBJECT_VALIDATION_H_
#define KCR_API_INTERNAL_OBJECT_VALIDATION_H_

#include <cstddef>
#include <optional>
#include <string_view>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "rapidjson/document.h"

namespace kcr {
namespace api {
namespace object_internal {

// Where Validate found a problem: the position of each step from the root
// (member or element index, so a repeated key is told apart), and whether
// the problem is a member missing from that object rather than the value
// there. Parse turns it into a byte offset (LocateSite). The deepest path
// Validate writes is metadata.ownerReferences[i].field, four steps, so the
// path stays inline and Validate does not allocate on success.
struct ErrorSite {
  absl::InlinedVector<size_t, 4> path;
  bool missing = false;
};

// Validates the fields Object exposes, so accessors never meet a wrong
// type. JSON null reads as absent, as it does in Go's decoder. On failure
// `*site` (when not null) says where.
absl::Status Validate(const rapidjson::Value& root, ErrorSite* site = nullptr);

// Finds, by re-reading `json`, the byte offset at which the value at `site`
// (child positions from the root) starts, or nullopt. Runs only on the
// error path, over text that is known to parse, and is safe on any nesting.
std::optional<size_t> LocateSite(std::string_view json, const ErrorSite& site);

// As LocateSite, for the first array or object nested deeper than
// kMaxJsonDepth, not counting metadata.managedFields when
// `skip_managed_fields` (as MakePlan does).
std::optional<size_t> LocateTooDeep(std::string_view json,
                                    bool skip_managed_fields);

}  // namespace object_internal
}  // namespace api
}  // namespace kcr

#endif  // KCR_API_INTERNAL_OBJECT_VALIDATION_H_
