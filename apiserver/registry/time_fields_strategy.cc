#include "apiserver/registry/time_fields_strategy.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "api/object_builder.h"
#include "api/types/time.h"

namespace kcr {
namespace apiserver {
namespace {

using rapidjson::Value;

struct TimeField {
  const char* pointer;  // "/spec/renewTime"
  bool micro;           // MicroTime, else Time
};

class TimeFieldsStrategy : public Strategy {
 public:
  explicit TimeFieldsStrategy(std::vector<TimeField> fields)
      : fields_(std::move(fields)) {}

  void Default(api::ObjectBuilder* b) const override {
    for (const TimeField& f : fields_) {
      const Value* v = b->Find(f.pointer);
      if (v == nullptr || !v->IsString()) continue;
      absl::StatusOr<absl::Time> t = api::ParseTime(
          std::string_view(v->GetString(), v->GetStringLength()));
      if (!t.ok()) continue;  // left for Validate to refuse
      (void)b->SetString(f.pointer, f.micro ? api::FormatRfc3339Micro(*t)
                                            : api::FormatRfc3339(*t));
    }
  }
  void Validate(const ResourceInfo&, api::ObjectBuilder* b,
                std::vector<api::FieldError>* errors) const override {
    Check(*b, errors);
  }
  void ValidateUpdate(const ResourceInfo&, const Value&, api::ObjectBuilder* b,
                      const std::string&,
                      std::vector<api::FieldError>* errors) const override {
    Check(*b, errors);
  }

 private:
  // A field still unparsed after Default is not a time.
  void Check(const api::ObjectBuilder& b,
             std::vector<api::FieldError>* errors) const {
    for (const TimeField& f : fields_) {
      const Value* v = b.Find(f.pointer);
      if (v == nullptr || v->IsNull()) continue;
      const std::string field =
          absl::StrReplaceAll(std::string(f.pointer + 1), {{"/", "."}});
      if (!v->IsString()) {
        errors->push_back({api::FieldError::Type::kInvalid, field, "",
                           "must be an RFC 3339 time string"});
        continue;
      }
      const std::string text(v->GetString(), v->GetStringLength());
      if (!api::ParseTime(text).ok()) {
        errors->push_back({api::FieldError::Type::kInvalid, field,
                           absl::StrCat("\"", text, "\""),
                           "must be an RFC 3339 time"});
      }
    }
  }

  const std::vector<TimeField> fields_;
};

}  // namespace

const Strategy& LeaseStrategy() {
  static const Strategy* const s = new TimeFieldsStrategy(
      {{"/spec/acquireTime", true}, {"/spec/renewTime", true}});
  return *s;
}

const Strategy& EventStrategy() {
  static const Strategy* const s =
      new TimeFieldsStrategy({{"/firstTimestamp", false},
                              {"/lastTimestamp", false},
                              {"/eventTime", true},
                              {"/series/lastObservedTime", true}});
  return *s;
}

}  // namespace apiserver
}  // namespace kcr
