#include "apiserver/registry/time_fields_strategy.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/time/civil_time.h"
#include "api/object_builder.h"
#include "api/types/time.h"

namespace kcr {
namespace apiserver {
namespace {

using rapidjson::Value;

// Whether `text` is already what FormatRfc3339 (FormatRfc3339Micro when
// `micro`) gives for some time: a valid date and time in UTC, "Z", whole
// seconds (six fractional digits). Such a field is one Default leaves as
// it is and Check accepts, so both skip absl's parser (about a
// microsecond a field, on every Event and Lease written). Anything else
// takes the full parse.
bool IsFormatted(std::string_view text, bool micro) {
  const size_t size = micro ? 27 : 20;
  if (text.size() != size || text[4] != '-' || text[7] != '-' ||
      text[10] != 'T' || text[13] != ':' || text[16] != ':' ||
      text[size - 1] != 'Z' || (micro && text[19] != '.')) {
    return false;
  }
  auto number = [&](size_t at, size_t digits, int* out) {
    int n = 0;
    for (size_t i = at; i < at + digits; ++i) {
      if (text[i] < '0' || text[i] > '9') return false;
      n = n * 10 + (text[i] - '0');
    }
    *out = n;
    return true;
  };
  int year, month, day, hour, minute, second, fraction;
  if (!number(0, 4, &year) || !number(5, 2, &month) || !number(8, 2, &day) ||
      !number(11, 2, &hour) || !number(14, 2, &minute) ||
      !number(17, 2, &second) || (micro && !number(20, 6, &fraction))) {
    return false;
  }
  // Years before 1000 and leap seconds are left to the full parse.
  if (year < 1000) return false;
  // CivilSecond normalises what is out of range (February 30th, 24:00):
  // unchanged fields mean a valid time.
  const absl::CivilSecond t(year, month, day, hour, minute, second);
  return t.year() == year && t.month() == month && t.day() == day &&
         t.hour() == hour && t.minute() == minute && t.second() == second;
}

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
      const std::string_view text(v->GetString(), v->GetStringLength());
      if (IsFormatted(text, f.micro)) continue;
      absl::StatusOr<absl::Time> t = api::ParseTime(text);
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
      if (!IsFormatted(text, f.micro) && !api::ParseTime(text).ok()) {
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
