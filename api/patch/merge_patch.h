// RFC 7386 JSON merge patch: apply a patch to a document, and compute the
// patch that turns one document into another. This is the
// "application/merge-patch+json" content type of kube-apiserver's PATCH.
//
// A merge patch is a JSON value. An object patch edits an object member by
// member: a null member removes the key, an object member merges
// recursively, anything else replaces the member. A patch that is not an
// object replaces the whole target. Arrays are never merged, only replaced,
// and a merge patch cannot set a member to null.
//
// All functions refuse inputs nested deeper than kMaxJsonDepth
// (InvalidArgument) and never crash on any input.
#ifndef KCR_API_PATCH_MERGE_PATCH_H_
#define KCR_API_PATCH_MERGE_PATCH_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "rapidjson/document.h"

namespace kcr {
namespace api {

// Sets `*result` to `target` with `patch` applied. Every value in `*result`
// is allocated from `allocator` (pass the allocator of the document that
// owns `*result`); `target` and `patch` are not modified and may live in
// other documents. On error `*result` is unchanged.
absl::Status ApplyMergePatch(const rapidjson::Value& target,
                             const rapidjson::Value& patch,
                             rapidjson::Value* result,
                             rapidjson::Value::AllocatorType& allocator);

// As above, returning a new document.
absl::StatusOr<rapidjson::Document> ApplyMergePatch(
    const rapidjson::Value& target, const rapidjson::Value& patch);

// Text form: parses both documents (InvalidArgument, naming which one and
// the offset, when either is not valid JSON) and returns the compact JSON
// text of the result.
absl::StatusOr<std::string> ApplyMergePatch(std::string_view target_json,
                                            std::string_view patch_json);

// Sets `*patch` to the smallest merge patch that turns `original` into
// `modified`: removed keys map to null, changed objects are diffed
// recursively, changed arrays and scalars are given whole; equal documents
// give {}. ApplyMergePatch(original, result) equals `modified` whenever
// `modified` holds no null object member (which no merge patch can
// express). Values are allocated from `allocator`.
absl::Status CreateMergePatch(const rapidjson::Value& original,
                              const rapidjson::Value& modified,
                              rapidjson::Value* patch,
                              rapidjson::Value::AllocatorType& allocator);

absl::StatusOr<rapidjson::Document> CreateMergePatch(
    const rapidjson::Value& original, const rapidjson::Value& modified);

absl::StatusOr<std::string> CreateMergePatch(std::string_view original_json,
                                             std::string_view modified_json);

}  // namespace api
}  // namespace kcr

#endif  // KCR_API_PATCH_MERGE_PATCH_H_
