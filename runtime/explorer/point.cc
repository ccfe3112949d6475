#include "runtime/explorer/point.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/string_view.h"

namespace kcr::explorer {
namespace {

absl::Status Bad(std::string_view text, std::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(
      "bad exploration point \"", ToAbsl(text), "\": ", ToAbsl(why)));
}

bool PositiveInt(absl::string_view s, int* out) {
  return absl::SimpleAtoi(s, out) && *out > 0;
}

}  // namespace

std::string Point::Class() const {
  switch (kind) {
    case Kind::kReference:
      return "reference";
    case Kind::kCrashAfterWrite:
      return "crash";
    case Kind::kError:
      return "api-error";
    case Kind::kStaleView:
      return "stale-view";
    case Kind::kUnobserved:
      return "unobserved";
  }
  return "";
}

std::string Point::ToString() const {
  switch (kind) {
    case Kind::kReference:
      return "reference";
    case Kind::kCrashAfterWrite:
      return absl::StrCat("crash-after-write:", write);
    case Kind::kError:
      return absl::StrCat("error-", code, after_store ? "-after-store" : "",
                          "-on-write:", write);
    case Kind::kStaleView:
      return absl::StrCat("stale-view:", resource, ":step:", step);
    case Kind::kUnobserved:
      return absl::StrCat("unobserved:step:", step, ":", nth);
  }
  return "";
}

absl::StatusOr<Point> Point::Parse(std::string_view text) {
  std::vector<absl::string_view> parts = absl::StrSplit(ToAbsl(text), ':');
  Point p;
  const absl::string_view head = parts[0];
  if (head == "reference" && parts.size() == 1) return p;
  if (head == "crash-after-write" && parts.size() == 2) {
    p.kind = Kind::kCrashAfterWrite;
    if (!PositiveInt(parts[1], &p.write)) return Bad(text, "K must be > 0");
    return p;
  }
  if (head.substr(0, 6) == "error-" && parts.size() == 2) {
    p.kind = Kind::kError;
    std::vector<absl::string_view> words = absl::StrSplit(head, '-');
    // error CODE [after store] on write
    if (words.size() != 4 && words.size() != 6) return Bad(text, "form");
    if (!PositiveInt(words[1], &p.code)) return Bad(text, "CODE");
    if (p.code != 409 && p.code != 500 && p.code != 429 && p.code != 504) {
      return Bad(text, "CODE must be 409, 500, 429 or 504");
    }
    if (words.size() == 6) {
      if (words[2] != "after" || words[3] != "store" || p.code != 504) {
        return Bad(text, "only 504 comes after-store");
      }
      p.after_store = true;
    }
    if (words[words.size() - 2] != "on" || words.back() != "write") {
      return Bad(text, "form");
    }
    if (!PositiveInt(parts[1], &p.write)) return Bad(text, "K must be > 0");
    return p;
  }
  if (head == "stale-view" && parts.size() == 4 && parts[2] == "step") {
    p.kind = Kind::kStaleView;
    p.resource = std::string(parts[1]);
    if (p.resource.empty()) return Bad(text, "no resource");
    if (!PositiveInt(parts[3], &p.step)) return Bad(text, "S must be > 0");
    return p;
  }
  if (head == "unobserved" && parts.size() == 4 && parts[1] == "step") {
    p.kind = Kind::kUnobserved;
    if (!PositiveInt(parts[2], &p.step)) return Bad(text, "S must be > 0");
    if (!PositiveInt(parts[3], &p.nth)) return Bad(text, "N must be > 0");
    return p;
  }
  return Bad(text, "unknown form");
}

std::string Selection::ToString() const {
  return absl::StrCat(scenario, ":", point.ToString(), ":seed=", seed);
}

absl::StatusOr<Selection> Selection::Parse(std::string_view text) {
  const absl::string_view t = ToAbsl(text);
  const size_t first = t.find(':');
  const size_t seed_at = t.rfind(":seed=");
  if (first == absl::string_view::npos || seed_at == absl::string_view::npos ||
      seed_at <= first) {
    return Bad(text, "want <scenario>:<point>:seed=<n>");
  }
  Selection s;
  s.scenario = std::string(t.substr(0, first));
  if (s.scenario.empty()) return Bad(text, "no scenario");
  if (!absl::SimpleAtoi(t.substr(seed_at + 6), &s.seed)) {
    return Bad(text, "seed");
  }
  auto point = Point::Parse(ToStd(t.substr(first + 1, seed_at - first - 1)));
  if (!point.ok()) return point.status();
  s.point = *std::move(point);
  return s;
}

}  // namespace kcr::explorer
