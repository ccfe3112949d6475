// What the handler engine keeps on an object between its runs, as kopf
// keeps it (kopf/_cogs/configs/{diffbase,progress,conventions}.py):
//
//  - the essence: the object without status, without the metadata that is
//    not labels or annotations, without this operator's own annotations
//    and kubectl's last-applied-configuration; empty maps dropped;
//  - the last handled essence, in the annotation
//    "<prefix>/last-handled-configuration" (compact JSON);
//  - one ProgressRecord per handler of the cause in progress, in the
//    annotation "<prefix>/<handler id>" (the id made a valid annotation
//    name, long ones shortened with a hash as kopf does), or in
//    status.<status_field>.progress.<handler id>.
//
// Every write is a field of a JSON merge patch ({"metadata": ...,
// "status": ...}) that names only the keys it sets or clears, so other
// annotations and status fields are never clobbered.
//
// What is read from the object is data from the network: a record or a
// state that does not parse, has fields of the wrong types, or times in the
// future (more than kMaxClockSkew ahead) is an error, never a crash; the
// engine logs it, posts a Warning Event and resets that state.
#ifndef KCR_RUNTIME_HANDLERS_INTERNAL_STATE_H_
#define KCR_RUNTIME_HANDLERS_INTERNAL_STATE_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "api/object.h"
#include "rapidjson/document.h"

namespace kcr::handlers::internal {

// A record whose started or stopped time is further ahead than this is
// from the future: not trusted.
inline constexpr absl::Duration kMaxClockSkew = absl::Minutes(5);

// kubectl's annotation, never part of the essence.
inline constexpr std::string_view kLastAppliedAnnotation =
    "kubectl.kubernetes.io/last-applied-configuration";

// Times as kopf stores them: ISO 8601 in UTC without a zone suffix,
// microseconds when not zero ("2020-02-14T16:58:25.396364").
std::string FormatIsoTime(absl::Time t);
// Also accepts a trailing "Z" or "+00:00" and any fraction of a second.
absl::StatusOr<absl::Time> ParseIsoTime(std::string_view text);

// The first 4 bytes of BLAKE2b (RFC 7693) with a 4-byte digest, as kopf's
// hashlib.blake2b(digest_size=4); exposed for tests.
std::string Blake2b4(std::string_view data);

// The annotation key for `key` under `prefix` (kopf's V2 key): "/", "<"
// and ">" replaced as kopf does, any other character not allowed in an
// annotation name replaced by "_"; a key longer than 63 characters (or one
// that needed those extra replacements or would not start and end with an
// alphanumeric) is cut and suffixed with "-" and the base64 (altchars "-.")
// of its BLAKE2b-32 hash, so it stays a valid name of at most 63
// characters.
std::string AnnotationKey(std::string_view prefix, std::string_view key);

// The object's essence (see the file comment), as a document of its own.
std::shared_ptr<rapidjson::Document> BuildEssence(const api::Object& object,
                                                  std::string_view prefix);

// One handler's progress (kopf's ProgressRecord and HandlerState).
struct ProgressRecord {
  std::optional<absl::Time> started;
  std::optional<absl::Time> stopped;
  std::optional<absl::Time> delayed;
  std::optional<std::string> purpose;
  int retries = 0;
  bool success = false;
  bool failure = false;
  std::optional<std::string> message;

  bool finished() const { return success || failure; }
  // Not finished and delayed past `now`.
  bool sleeping(absl::Time now) const {
    return !finished() && delayed.has_value() && *delayed > now;
  }

  // The record as a JSON object; absent fields are left out, or written as
  // null when `with_nulls` (so that a merge patch of the record clears
  // what an older one set).
  void ToJson(rapidjson::Value* out, rapidjson::Document::AllocatorType& a,
              bool with_nulls) const;
  // Compact JSON without nulls, as kopf writes it into an annotation.
  std::string ToJsonString() const;
  // InvalidArgument naming what is wrong: not an object, a field of the
  // wrong type, an unparseable time, negative retries, or a started or
  // stopped time later than now + kMaxClockSkew.
  static absl::StatusOr<ProgressRecord> FromJson(const rapidjson::Value& json,
                                                 absl::Time now);

  friend bool operator==(const ProgressRecord& a, const ProgressRecord& b);
  friend bool operator!=(const ProgressRecord& a, const ProgressRecord& b) {
    return !(a == b);
  }
};

struct StorageOptions {
  std::string prefix = "kcr.dev";
  bool progress_in_status = false;
  std::string status_field = "kcr";
};

// Reads the state from objects and writes it into merge patches.
// Stateless beyond its options; thread-safe.
class StateStorage {
 public:
  explicit StateStorage(StorageOptions options);

  const std::string& last_handled_key() const { return last_handled_key_; }
  // "<prefix>/handlers".
  const std::string& finalizer() const { return finalizer_; }
  const StorageOptions& options() const { return options_; }

  // The last handled essence; null when the object has none;
  // InvalidArgument when the annotation is not a JSON object.
  absl::StatusOr<std::shared_ptr<const rapidjson::Document>> FetchLastHandled(
      const api::Object& object) const;
  // Sets the annotation to `essence` (compact JSON).
  void StoreLastHandled(const rapidjson::Value& essence,
                        rapidjson::Document* patch) const;
  // Clears the annotation (null in the patch).
  void ClearLastHandled(rapidjson::Document* patch) const;

  // The record of `handler_id`; nullopt when there is none; InvalidArgument
  // (see ProgressRecord::FromJson, or text that is not JSON) when it is
  // malformed.
  absl::StatusOr<std::optional<ProgressRecord>> FetchProgress(
      const api::Object& object, std::string_view handler_id,
      absl::Time now) const;
  void StoreProgress(std::string_view handler_id, const ProgressRecord& record,
                     rapidjson::Document* patch) const;
  // Clears the record when the object has one (null in the patch), and
  // drops what the patch itself would set for it.
  void PurgeProgress(const api::Object& object, std::string_view handler_id,
                     rapidjson::Document* patch) const;

 private:
  // metadata.annotations of the patch (made when missing).
  rapidjson::Value& PatchAnnotations(rapidjson::Document* patch) const;
  // status.<status_field>.progress of the patch (made when missing).
  rapidjson::Value& PatchProgress(rapidjson::Document* patch) const;

  const StorageOptions options_;
  const std::string last_handled_key_;
  const std::string finalizer_;
};

// An empty merge patch, {}.
rapidjson::Document NewPatch();

}  // namespace kcr::handlers::internal

#endif  // KCR_RUNTIME_HANDLERS_INTERNAL_STATE_H_
