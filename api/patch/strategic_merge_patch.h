// Kubernetes strategic merge patch ("application/strategic-merge-patch+json"),
// as kube-apiserver applies it to built-in kinds and as kubectl sends it
// (`kubectl apply` client-side three-way patches, `kubectl patch`,
// `kubectl edit`).
//
// A strategic merge patch is a JSON object merged into the target like a
// JSON merge patch (null removes a member, objects merge, scalars replace),
// except that lists follow the kind's PatchSchema: lists with a merge key
// merge element by element, lists of scalars with the merge strategy merge
// as sets, other lists are replaced. Directives:
//   {"$patch": "replace"} in an object   the object is replaced by the rest
//                                        of the patch object;
//   {"$patch": "delete"} in an object    the object becomes {};
//   list element {"$patch": "delete", <key>: v}
//                                        removes the elements whose merge
//                                        key is v;
//   list element {"$patch": "replace"}   the list becomes the other patch
//                                        elements;
//   "$setElementOrder/<list>": [...]     the order of the merged list: the
//                                        elements named here in this order,
//                                        the others interleaved by their
//                                        order in the target;
//   "$deleteFromPrimitiveList/<list>": [...]
//                                        removes these scalars from a set
//                                        list;
//   "$retainKeys": [...]                 members of the target object not
//                                        named are removed.
// Merged lists without $setElementOrder keep apimachinery's order: patch
// elements in patch order, target-only elements interleaved by their
// target order, so an element that only the patch has comes before the
// target elements that follow it (["a","b"] patched with ["c"] gives
// ["c","a","b"]).
//
// Errors are InvalidArgument and name the field path and the reason (wrong
// type for a directive, unknown directive or $patch value, list element
// without its merge key, $setElementOrder that contradicts the patch
// list). Inputs nested deeper than kMaxJsonDepth are refused. Nothing
// crashes on any input.
#ifndef KCR_API_PATCH_STRATEGIC_MERGE_PATCH_H_
#define KCR_API_PATCH_STRATEGIC_MERGE_PATCH_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/patch/patch_schema.h"
#include "rapidjson/document.h"

namespace kcr {
namespace api {

// Sets `*result` to `target` with the strategic merge patch `patch` applied
// under `schema`. `target` and `patch` must be JSON objects. Every value in
// `*result` is allocated from `allocator`; `target` and `patch` are not
// modified. On error `*result` is unchanged.
absl::Status ApplyStrategicMergePatch(
    const rapidjson::Value& target, const rapidjson::Value& patch,
    const PatchSchema& schema, rapidjson::Value* result,
    rapidjson::Value::AllocatorType& allocator);

// As above, returning a new document.
absl::StatusOr<rapidjson::Document> ApplyStrategicMergePatch(
    const rapidjson::Value& target, const rapidjson::Value& patch,
    const PatchSchema& schema);

// Text form: parses both (InvalidArgument naming which one is not valid
// JSON) and returns the compact JSON text of the result.
absl::StatusOr<std::string> ApplyStrategicMergePatch(
    std::string_view target_json, std::string_view patch_json,
    const PatchSchema& schema);

namespace internal {

// The structural merge behind ApplyStrategicMergePatch, shared with
// server-side apply. With `directives` false, members starting with '$'
// are ordinary fields and no directive is honoured.
absl::Status StrategicMerge(const rapidjson::Value& target,
                            const rapidjson::Value& patch,
                            const PatchSchema& schema, bool directives,
                            rapidjson::Value* result,
                            rapidjson::Value::AllocatorType& allocator);

}  // namespace internal
}  // namespace api
}  // namespace kcr

#endif  // KCR_API_PATCH_STRATEGIC_MERGE_PATCH_H_
