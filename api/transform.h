// Transforms: hooks that run on an object before the cache stores it, in
// the manner of client-go's cache.TransformFunc. The default drops
// metadata.managedFields, which controllers never read and which is often
// half of an object's bytes.
//
// Two ways to apply a transform, both cheap:
//   * during parsing (ObjectDecoder with strip_managed_fields_at_parse, the
//     default): the stripped bytes are never copied into the object;
//   * after parsing, as a TransformFunc on an ObjectPtr: for objects that
//     arrive already parsed, or for transforms of the user's own.
// A user turns the default off with ObjectDecoder::Options{false, nullptr},
// or replaces it with a TransformFunc of their own.
#ifndef KCR_API_TRANSFORM_H_
#define KCR_API_TRANSFORM_H_

#include <functional>
#include <string_view>

#include "absl/status/statusor.h"
#include "api/object.h"

namespace kcr {
namespace api {

// Takes an object about to be cached and returns what to cache: the same
// pointer (nothing to change) or a new object. An error keeps the object
// out of the cache (the caller logs and counts it). Must be thread-safe:
// informers call it from their own threads.
using TransformFunc = std::function<absl::StatusOr<ObjectPtr>(ObjectPtr)>;

// The default transform: removes metadata.managedFields. Returns its input
// unchanged (no copy) when there are none.
TransformFunc StripManagedFields();

// Turns bytes into the object the cache keeps.
class ObjectDecoder {
 public:
  struct Options {
    // Drop metadata.managedFields while parsing (cheapest; the default).
    bool strip_managed_fields_at_parse = true;
    // Runs after parsing; empty for none.
    TransformFunc transform;
  };

  // Strips managedFields at parse, no further transform.
  ObjectDecoder() = default;
  explicit ObjectDecoder(Options options) : options_(std::move(options)) {}

  // Parses `json` (Object::Parse errors) and applies the transform.
  absl::StatusOr<ObjectPtr> Decode(std::string_view json) const;
  // Applies the decoder's transforms to an already parsed object (e.g. one
  // item of a list response).
  absl::StatusOr<ObjectPtr> Apply(ObjectPtr object) const;

  const Options& options() const { return options_; }

 private:
  Options options_;
};

}  // namespace api
}  // namespace kcr

#endif  // KCR_API_TRANSFORM_H_
