#include "runtime/metrics/healthz.h"

#include <set>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "glog/logging.h"

namespace kcr::metrics {
namespace {

constexpr char kText[] = "text/plain; charset=utf-8";

// The values of every `exclude` parameter (repeated, or comma-separated).
std::set<std::string> Excluded(const std::string& query) {
  std::set<std::string> out;
  for (absl::string_view param : absl::StrSplit(query, '&')) {
    if (!absl::ConsumePrefix(&param, "exclude=")) continue;
    for (absl::string_view name : absl::StrSplit(param, ',')) {
      if (!name.empty()) out.emplace(name);
    }
  }
  return out;
}

// `detail` on one line: line breaks as spaces.
std::string OneLine(std::string detail) {
  for (char& c : detail) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return detail;
}

}  // namespace

absl::Status HealthChecks::Add(const std::string& name, Check check) {
  return AddWithDetail(
      name, [check = std::move(check)]() -> absl::StatusOr<std::string> {
        absl::Status s = check();
        if (!s.ok()) return s;
        return std::string();
      });
}

absl::Status HealthChecks::AddWithDetail(const std::string& name,
                                         DetailedCheck check) {
  if (name.empty() || absl::StrContains(name, '/')) {
    return absl::InvalidArgumentError(absl::StrCat(
        "health check name \"", name, "\" must be non-empty and hold no '/'"));
  }
  MutexLock lock(&mu_);
  checks_[name] = std::move(check);
  return absl::OkStatus();
}

void HealthChecks::ServeOn(HttpEndpoint& endpoint, const std::string& path) {
  endpoint.Handle(path, [this](const HttpGet& get) { return Answer(get, ""); });
  const std::string prefix = absl::StrCat(path, "/");
  endpoint.Handle(prefix, [this, prefix](const HttpGet& get) {
    return Answer(get, get.path.substr(prefix.size()));
  });
}

HttpReply HealthChecks::Answer(const HttpGet& get,
                               const std::string& name) const {
  std::map<std::string, DetailedCheck> checks;
  {
    MutexLock lock(&mu_);
    checks = checks_;
  }
  if (!name.empty()) {
    auto it = checks.find(name);
    if (it == checks.end() && !(checks.empty() && name == "ping")) {
      return {404, kText, "404 page not found\n"};
    }
    if (it != checks.end()) {
      absl::StatusOr<std::string> r = it->second();
      if (!r.ok()) {
        return {500, kText,
                absl::StrCat("internal server error: ", r.status().message(),
                             "\n")};
      }
      if (!r->empty()) return {200, kText, OneLine(*r)};
    }
    return {200, kText, "ok"};
  }
  std::set<std::string> excluded = Excluded(get.query);
  std::string lines;
  bool failed = false;
  if (checks.empty()) lines = "[+]ping ok\n";
  for (const auto& [check_name, check] : checks) {  // sorted by name
    if (excluded.erase(check_name) > 0) {
      absl::StrAppend(&lines, "[+]", check_name, " excluded: ok\n");
      continue;
    }
    if (absl::StatusOr<std::string> r = check(); !r.ok()) {
      VLOG(1) << "healthz check failed checker=" << check_name
              << " error=" << r.status();
      absl::StrAppend(&lines, "[-]", check_name, " failed: reason withheld\n");
      failed = true;
    } else if (r->empty()) {
      absl::StrAppend(&lines, "[+]", check_name, " ok\n");
    } else {
      absl::StrAppend(&lines, "[+]", check_name, " ok: ", OneLine(*r), "\n");
    }
  }
  if (!failed && !get.HasQueryParam("verbose")) return {200, kText, "ok"};
  if (!excluded.empty()) {
    std::vector<std::string> quoted;
    for (const std::string& e : excluded)
      quoted.push_back(absl::StrCat("\"", e, "\""));
    absl::StrAppend(&lines,
                    "warn: some health checks cannot be excluded: no matches "
                    "for ",
                    absl::StrJoin(quoted, ","), "\n");
  }
  if (failed) {
    LOG(INFO) << "healthz check failed path=" << get.path;
    absl::StrAppend(&lines, "healthz check failed\n");
    return {500, kText, lines};
  }
  absl::StrAppend(&lines, "healthz check passed\n");
  return {200, kText, lines};
}

}  // namespace kcr::metrics
