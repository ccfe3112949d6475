#include "apiserver/internal/cron_schedule.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/time/civil_time.h"
#include "absl/time/clock.h"
#include "base/str_cat.h"

namespace kcr {
namespace apiserver {
namespace {

constexpr uint64_t kStar = uint64_t{1} << 63;

struct Bounds {
  int min, max;
  std::map<std::string, int> names;
};

const Bounds& FieldBounds(int i) {
  static const Bounds* const kFields[] = {
      new Bounds{0, 59, {}},
      new Bounds{0, 23, {}},
      new Bounds{1, 31, {}},
      new Bounds{1,
                 12,
                 {{"jan", 1},
                  {"feb", 2},
                  {"mar", 3},
                  {"apr", 4},
                  {"may", 5},
                  {"jun", 6},
                  {"jul", 7},
                  {"aug", 8},
                  {"sep", 9},
                  {"oct", 10},
                  {"nov", 11},
                  {"dec", 12}}},
      new Bounds{0,
                 6,
                 {{"sun", 0},
                  {"mon", 1},
                  {"tue", 2},
                  {"wed", 3},
                  {"thu", 4},
                  {"fri", 5},
                  {"sat", 6}}},
  };
  return *kFields[i];
}

std::string Quote(std::string_view s) { return Cat("\"", s, "\""); }

absl::Status Error(std::string message) {
  return absl::InvalidArgumentError(std::move(message));
}

// strconv.Atoi and the parser's sign check.
absl::Status ParseInt(std::string_view expr, int* out) {
  bool digits = !expr.empty();
  size_t start = (!expr.empty() && (expr[0] == '-' || expr[0] == '+')) ? 1 : 0;
  if (start == expr.size()) digits = false;
  for (size_t i = start; i < expr.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(expr[i]))) digits = false;
  }
  int64_t v = 0;
  if (!digits || !absl::SimpleAtoi(std::string(expr), &v) || v > INT32_MAX ||
      v < INT32_MIN) {
    return Error(Cat("failed to parse int from ", expr,
                     ": strconv.Atoi: parsing ", Quote(expr),
                     ": invalid syntax"));
  }
  if (v < 0) return Error(Cat("negative number (", v, ") not allowed: ", expr));
  *out = static_cast<int>(v);
  return absl::OkStatus();
}

absl::Status ParseIntOrName(std::string_view expr, const Bounds& b, int* out) {
  auto it = b.names.find(absl::AsciiStrToLower(std::string(expr)));
  if (it != b.names.end()) {
    *out = it->second;
    return absl::OkStatus();
  }
  return ParseInt(expr, out);
}

// robfig's getRange: the bits of one comma-separated expression.
absl::Status ParseRange(std::string_view expr, const Bounds& b,
                        uint64_t* bits) {
  const std::vector<std::string> range_and_step =
      absl::StrSplit(std::string(expr), '/');
  const std::vector<std::string> low_and_high =
      absl::StrSplit(range_and_step[0], '-');
  const bool single = low_and_high.size() == 1;
  int start = 0, end = 0, step = 1;
  uint64_t extra = 0;
  if (low_and_high[0] == "*" || low_and_high[0] == "?") {
    start = b.min;
    end = b.max;
    extra = kStar;
  } else {
    if (absl::Status s = ParseIntOrName(low_and_high[0], b, &start); !s.ok()) {
      return s;
    }
    if (low_and_high.size() == 1) {
      end = start;
    } else if (low_and_high.size() == 2) {
      if (absl::Status s = ParseIntOrName(low_and_high[1], b, &end); !s.ok()) {
        return s;
      }
    } else {
      return Error(Cat("too many hyphens: ", expr));
    }
  }
  if (range_and_step.size() == 2) {
    if (absl::Status s = ParseInt(range_and_step[1], &step); !s.ok()) return s;
    if (single) end = b.max;
    if (step > 1) extra = 0;
  } else if (range_and_step.size() > 2) {
    return Error(Cat("too many slashes: ", expr));
  }
  if (start < b.min) {
    return Error(Cat("beginning of range (", start, ") below minimum (", b.min,
                     "): ", expr));
  }
  if (end > b.max) {
    return Error(
        Cat("end of range (", end, ") above maximum (", b.max, "): ", expr));
  }
  if (start > end) {
    return Error(Cat("beginning of range (", start, ") beyond end of range (",
                     end, "): ", expr));
  }
  if (step == 0) {
    return Error(Cat("step of range should be a positive number: ", expr));
  }
  for (int i = start; i <= end; i += step) *bits |= uint64_t{1} << i;
  *bits |= extra;
  return absl::OkStatus();
}

// Go's time.ParseDuration, as far as accepting or refusing goes.
bool GoDuration(std::string_view s) {
  if (s.empty()) return false;
  if (s[0] == '-' || s[0] == '+') s.remove_prefix(1);
  if (s == "0") return true;
  if (s.empty()) return false;
  while (!s.empty()) {
    size_t n = 0;
    bool dot = false;
    while (n < s.size() && (std::isdigit(static_cast<unsigned char>(s[n])) ||
                            (s[n] == '.' && !dot))) {
      dot = dot || s[n] == '.';
      ++n;
    }
    if (n == 0 || (n == 1 && dot)) return false;
    s.remove_prefix(n);
    bool unit = false;
    for (std::string_view u :
         {"ns", "us", "\xC2\xB5s", "\xCE\xBCs", "ms", "s", "m", "h"}) {
      if (s.substr(0, u.size()) == u && !(u == "m" && s.substr(0, 2) == "ms")) {
        s.remove_prefix(u.size());
        unit = true;
        break;
      }
    }
    if (!unit) return false;
  }
  return true;
}

bool Has(uint64_t bits, int i) { return (bits & (uint64_t{1} << i)) != 0; }

// Sunday 0 .. Saturday 6, as Go's time.Weekday.
int Weekday(absl::CivilDay d) {
  return (static_cast<int>(absl::GetWeekday(d)) + 1) % 7;
}

}  // namespace

absl::StatusOr<absl::TimeZone> LoadCronTimeZone(std::string_view name) {
  if (name.empty() || name == "UTC") return absl::UTCTimeZone();
  if (name == "Local") return absl::LocalTimeZone();
  absl::TimeZone tz;
  if (!absl::LoadTimeZone(std::string(name), &tz)) {
    return absl::InvalidArgumentError(Cat("unknown time zone ", name));
  }
  return tz;
}

absl::StatusOr<CronSchedule> CronSchedule::Parse(std::string_view spec_in) {
  if (spec_in.empty()) return Error("empty spec string");
  std::string spec(spec_in);
  CronSchedule out;
  if (absl::StartsWith(spec, "TZ=") || absl::StartsWith(spec, "CRON_TZ=")) {
    const size_t space = spec.find(' ');
    const size_t eq = spec.find('=');
    const std::string name =
        spec.substr(eq + 1, space == std::string::npos ? std::string::npos
                                                       : space - eq - 1);
    absl::StatusOr<absl::TimeZone> tz = LoadCronTimeZone(name);
    if (!tz.ok() || space == std::string::npos) {
      return Error(Cat("provided bad location ", name, ": ",
                       tz.ok() ? "no schedule" : tz.status().message()));
    }
    out.zone_ = *tz;
    spec = spec.substr(space);
  }
  absl::StripAsciiWhitespace(&spec);
  if (spec.empty()) return Error("empty spec string");
  if (spec[0] == '@') {
    static const auto* const kDescriptors =
        new std::map<std::string, std::string>{
            {"@yearly", "0 0 1 1 *"},  {"@annually", "0 0 1 1 *"},
            {"@monthly", "0 0 1 * *"}, {"@weekly", "0 0 * * 0"},
            {"@daily", "0 0 * * *"},   {"@midnight", "0 0 * * *"},
            {"@hourly", "0 * * * *"}};
    if (auto it = kDescriptors->find(spec); it != kDescriptors->end()) {
      spec = it->second;
    } else if (absl::StartsWith(spec, "@every ")) {
      const std::string d = spec.substr(7);
      absl::Duration every;
      if (!GoDuration(d) ||
          !absl::ParseDuration(absl::StrReplaceAll(d, {{"\xC2\xB5s", "us"},
                                                       {"\xCE\xBCs", "us"}}),
                               &every)) {
        return Error(Cat("failed to parse duration ", spec,
                         ": time: invalid duration ", Quote(d)));
      }
      // robfig's Every: at least a second, whole seconds.
      every = absl::Trunc(every, absl::Seconds(1));
      out.every_ = std::max(every, absl::Seconds(1));
      return out;
    } else {
      return Error(Cat("unrecognized descriptor: ", spec));
    }
  }
  const std::vector<std::string> fields =
      absl::StrSplit(spec, absl::ByAnyChar(" \t\n"), absl::SkipEmpty());
  if (fields.size() != 5) {
    return Error(Cat("expected exactly 5 fields, found ", fields.size(), ": [",
                     absl::StrJoin(fields, " "), "]"));
  }
  uint64_t* const bits[] = {&out.minute_, &out.hour_, &out.dom_, &out.month_,
                            &out.dow_};
  for (int i = 0; i < 5; ++i) {
    for (const std::string& expr :
         std::vector<std::string>(absl::StrSplit(fields[i], ','))) {
      if (absl::Status s = ParseRange(expr, FieldBounds(i), bits[i]); !s.ok()) {
        return s;
      }
    }
  }
  return out;
}

absl::Time CronSchedule::Next(absl::Time t,
                              const absl::TimeZone& zone_in) const {
  if (every_ > absl::ZeroDuration()) {
    return absl::Trunc(t - absl::UnixEpoch(), absl::Seconds(1)) +
           absl::UnixEpoch() + every_;
  }
  const absl::TimeZone zone = zone_.value_or(zone_in);
  // The first whole minute after t (robfig adds a second, and seconds
  // match only 0).
  absl::CivilMinute m = absl::ToCivilMinute(t, zone) + 1;
  const int64_t year_limit = m.year() + 5;
  auto day_matches = [this](absl::CivilDay d) {
    const bool dom = Has(dom_, d.day());
    const bool dow = Has(dow_, Weekday(d));
    if ((dom_ & kStar) != 0 || (dow_ & kStar) != 0) return dom && dow;
    return dom || dow;
  };
  while (m.year() <= year_limit) {
    if (!Has(month_, m.month())) {
      m = absl::CivilMinute(absl::CivilMonth(m) + 1);
      continue;
    }
    if (!day_matches(absl::CivilDay(m))) {
      m = absl::CivilMinute(absl::CivilDay(m) + 1);
      continue;
    }
    if (!Has(hour_, m.hour())) {
      m = absl::CivilMinute(absl::CivilHour(m) + 1);
      continue;
    }
    if (!Has(minute_, m.minute())) {
      m += 1;
      continue;
    }
    const absl::TimeZone::TimeInfo info = zone.At(m);
    // A wall-clock time daylight saving skips, or the second pass of a
    // repeated one, does not fire.
    if (info.kind == absl::TimeZone::TimeInfo::SKIPPED || info.pre <= t) {
      m += 1;
      continue;
    }
    return info.pre;
  }
  return absl::InfiniteFuture();
}

}  // namespace apiserver
}  // namespace kcr
