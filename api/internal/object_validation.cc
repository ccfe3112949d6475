#include "api/internal/object_validation.h"

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/internal/json_value.h"
#include "api/json_limits.h"
#include "rapidjson/memorystream.h"
#include "rapidjson/reader.h"

namespace kcr {
namespace api {
namespace object_internal {
namespace {

using rapidjson::Value;

// Finds, by re-reading the text, the byte offset at which a value starts:
// either the value at `site` (child positions from the root), or the first
// array or object nested deeper than kMaxJsonDepth, not counting
// metadata.managedFields when `skip_managed_fields` (as MakePlan does).
// Runs only on the error path, over text that is known to parse; the
// iterative reader keeps it safe on any nesting.
class SiteLocator
    : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, SiteLocator> {
 public:
  // Locates the value at `site`.
  SiteLocator(std::string_view json, const ErrorSite& site)
      : json_(json), stream_(json.data(), json.size()), site_(&site) {}
  // Locates the first container deeper than kMaxJsonDepth.
  SiteLocator(std::string_view json, bool skip_managed_fields)
      : json_(json),
        stream_(json.data(), json.size()),
        skip_managed_fields_(skip_managed_fields) {}

  // The offset, or nullopt when there is no such value.
  std::optional<size_t> Run() {
    rapidjson::Reader reader;
    reader.Parse<rapidjson::kParseIterativeFlag>(stream_, *this);
    return found_;
  }

  bool Default() { return OnValue(/*container=*/false); }
  bool StartObject() { return OnValue(/*container=*/true); }
  bool StartArray() { return OnValue(/*container=*/true); }
  bool Key(const char* str, rapidjson::SizeType len, bool) {
    const std::string_view key(str, len);
    Level& level = levels_.back();
    level.skip_next = false;
    if (levels_.size() == 1 && key == "metadata" && !seen_metadata_) {
      seen_metadata_ = true;
      level.metadata_next = true;
    } else if (level.is_metadata && skip_managed_fields_ &&
               key == "managedFields") {
      level.skip_next = true;
    }
    end_ = stream_.Tell();
    return true;
  }
  bool EndObject(rapidjson::SizeType) { return End(); }
  bool EndArray(rapidjson::SizeType) { return End(); }

 private:
  struct Level {
    size_t count = 0;      // children seen so far
    bool on_path = false;  // this container's path is a prefix of site_
    bool is_metadata = false;
    bool skipped = false;        // inside a member MakePlan skips
    bool metadata_next = false;  // the next child is the root's metadata
    bool skip_next = false;      // the next child is metadata.managedFields
  };

  // Called as each value starts (containers) or ends (scalars). end_ is
  // where the previous token ended: only whitespace, ',' and ':' lie
  // between it and the value's first byte.
  bool OnValue(bool container) {
    const size_t depth = levels_.size();
    bool on_path = site_ != nullptr && depth == 0;
    bool is_metadata = false;
    bool skipped = false;
    if (depth > 0) {
      Level& parent = levels_.back();
      const size_t index = parent.count++;
      on_path = site_ != nullptr && parent.on_path &&
                depth - 1 < site_->path.size() &&
                site_->path[depth - 1] == index;
      is_metadata = parent.metadata_next;
      skipped = parent.skipped || parent.skip_next;
      parent.metadata_next = parent.skip_next = false;
    }
    const size_t start = SkipSeparators(end_);
    if (site_ != nullptr && on_path &&
        (depth == 0 ? site_->path.empty() : depth == site_->path.size())) {
      found_ = start;
      return false;  // stop reading
    }
    if (site_ == nullptr && container && !skipped &&
        depth + 1 > static_cast<size_t>(kMaxJsonDepth)) {
      found_ = start;
      return false;
    }
    if (container) {
      Level level;
      level.on_path = on_path;
      level.is_metadata = is_metadata;
      level.skipped = skipped;
      levels_.push_back(level);
      // The reader may report a bracket before or after consuming it.
      end_ = start + 1;
    } else {
      end_ = stream_.Tell();
    }
    return true;
  }

  bool End() {
    levels_.pop_back();
    end_ = SkipSeparators(end_) + 1;
    return true;
  }

  // The first byte at or after `at` that is not whitespace, ',' or ':'.
  size_t SkipSeparators(size_t at) const {
    while (at < json_.size() && json_[at] != '\0' &&
           std::strchr(" \t\n\r,:", json_[at]) != nullptr) {
      ++at;
    }
    return at;
  }

  std::string_view json_;
  rapidjson::MemoryStream stream_;
  const ErrorSite* site_ = nullptr;
  bool skip_managed_fields_ = false;
  bool seen_metadata_ = false;
  std::vector<Level> levels_;
  size_t end_ = 0;
  std::optional<size_t> found_;
};

}  // namespace

absl::Status Validate(const Value& root, ErrorSite* site) {
  ErrorSite ignored;
  ErrorSite& at = site != nullptr ? *site : ignored;
  // Reset field by field: gcc -O2 wrongly reports the inlined storage of
  // a whole-struct assignment from a temporary as used uninitialized.
  at.path.clear();
  at.missing = false;
  if (!root.IsObject()) return Invalid("top level is not an object");
  auto index = [](const Value& object, Value::ConstMemberIterator it) {
    return static_cast<size_t>(it - object.MemberBegin());
  };
  for (const char* field : {"apiVersion", "kind"}) {
    auto it = root.FindMember(field);
    if (it != root.MemberEnd() && !it->value.IsString() &&
        !it->value.IsNull()) {
      at.path = {index(root, it)};
      return Invalid(absl::StrCat(field, " is not a string"));
    }
  }
  auto meta_it = root.FindMember("metadata");
  if (meta_it == root.MemberEnd()) {
    at.missing = true;
    return Invalid("metadata missing");
  }
  at.path = {index(root, meta_it)};
  if (meta_it->value.IsNull()) return Invalid("metadata missing");
  const Value& meta = meta_it->value;
  if (!meta.IsObject()) return Invalid("metadata is not an object");
  for (const char* field :
       {"name", "generateName", "namespace", "uid", "resourceVersion",
        "creationTimestamp", "deletionTimestamp"}) {
    auto it = meta.FindMember(field);
    if (it != meta.MemberEnd() && !it->value.IsString() &&
        !it->value.IsNull()) {
      at.path.push_back(index(meta, it));
      return Invalid(absl::StrCat("metadata.", field, " is not a string"));
    }
  }
  if (auto it = meta.FindMember("generation");
      it != meta.MemberEnd() && !it->value.IsInt64() && !it->value.IsNull()) {
    at.path.push_back(index(meta, it));
    return Invalid("metadata.generation is not an integer");
  }
  for (const char* field : {"labels", "annotations"}) {
    auto it = meta.FindMember(field);
    if (it == meta.MemberEnd() || it->value.IsNull()) continue;
    at.path.push_back(index(meta, it));
    if (!it->value.IsObject()) {
      return Invalid(absl::StrCat("metadata.", field, " is not an object"));
    }
    for (auto m = it->value.MemberBegin(); m != it->value.MemberEnd(); ++m) {
      if (!m->value.IsString()) {
        at.path.push_back(index(it->value, m));
        return Invalid(absl::StrCat("metadata.", field, ".",
                                    Quote(StringOf(m->name)),
                                    " is not a string"));
      }
    }
    at.path.pop_back();
  }
  if (auto it = meta.FindMember("finalizers");
      it != meta.MemberEnd() && !it->value.IsNull()) {
    at.path.push_back(index(meta, it));
    if (!it->value.IsArray()) {
      return Invalid("metadata.finalizers is not an array");
    }
    for (rapidjson::SizeType i = 0; i < it->value.Size(); ++i) {
      if (!it->value[i].IsString()) {
        at.path.push_back(i);
        return Invalid(
            absl::StrCat("metadata.finalizers[", i, "] is not a string"));
      }
    }
    at.path.pop_back();
  }
  if (auto it = meta.FindMember("ownerReferences");
      it != meta.MemberEnd() && !it->value.IsNull()) {
    at.path.push_back(index(meta, it));
    if (!it->value.IsArray()) {
      return Invalid("metadata.ownerReferences is not an array");
    }
    for (rapidjson::SizeType i = 0; i < it->value.Size(); ++i) {
      const Value& ref = it->value[i];
      at.path.push_back(i);
      if (!ref.IsObject()) {
        return Invalid(
            absl::StrCat("metadata.ownerReferences[", i, "] is not an object"));
      }
      for (const char* field : {"apiVersion", "kind", "name", "uid"}) {
        auto f = ref.FindMember(field);
        if (f != ref.MemberEnd() && !f->value.IsString() &&
            !f->value.IsNull()) {
          at.path.push_back(index(ref, f));
          return Invalid(absl::StrCat("metadata.ownerReferences[", i, "].",
                                      field, " is not a string"));
        }
      }
      for (const char* field : {"controller", "blockOwnerDeletion"}) {
        auto f = ref.FindMember(field);
        if (f != ref.MemberEnd() && !f->value.IsBool() && !f->value.IsNull()) {
          at.path.push_back(index(ref, f));
          return Invalid(absl::StrCat("metadata.ownerReferences[", i, "].",
                                      field, " is not a boolean"));
        }
      }
      at.path.pop_back();
    }
  }
  at.path.clear();
  return absl::OkStatus();
}

std::optional<size_t> LocateSite(std::string_view json, const ErrorSite& site) {
  return SiteLocator(json, site).Run();
}

std::optional<size_t> LocateTooDeep(std::string_view json,
                                    bool skip_managed_fields) {
  return SiteLocator(json, skip_managed_fields).Run();
}

}  // namespace object_internal
}  // namespace api
}  // namespace kcr
