#include "controllers/loadtest/run_result.h"

#include <cmath>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "rapidjson/document.h"
#include "rapidjson/error/en.h"

namespace kcr::loadtest {

using LoadTest = LoadTest;

namespace {

absl::Status ReadCount(const rapidjson::Value& obj, const char* key,
                       std::optional<int64_t>* out) {
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd()) {
    return absl::InvalidArgumentError(
        absl::StrCat("summary: no \"", key, "\""));
  }
  if (!it->value.IsInt64() || it->value.GetInt64() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("summary: \"", key, "\" must be a non-negative integer"));
  }
  *out = it->value.GetInt64();
  return absl::OkStatus();
}

// An absent percentile stays absent (a summary of zero requests may leave
// them out); a present one must be a non-negative finite number.
absl::Status ReadPercentile(const rapidjson::Value& obj, const char* key,
                            std::optional<double>* out) {
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd()) return absl::OkStatus();
  if (!it->value.IsNumber() || !std::isfinite(it->value.GetDouble()) ||
      it->value.GetDouble() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("summary: \"", key, "\" must be a non-negative number"));
  }
  *out = it->value.GetDouble();
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<LoadTest::PodResult> ParseSummary(std::string_view pod,
                                                 std::string_view message) {
  const std::string text(absl::StripAsciiWhitespace(
      absl::string_view(message.data(), message.size())));
  rapidjson::Document doc;
  doc.Parse(text.data(), text.size());
  if (doc.HasParseError()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "summary: not JSON (", rapidjson::GetParseError_En(doc.GetParseError()),
        " at offset ", doc.GetErrorOffset(), ")"));
  }
  if (!doc.IsObject()) {
    return absl::InvalidArgumentError("summary: not a JSON object");
  }
  LoadTest::PodResult r;
  r.pod = std::string(pod);
  absl::Status s = ReadCount(doc, "requests", &r.requests);
  if (s.ok()) s = ReadCount(doc, "failures", &r.failures);
  if (!s.ok()) return s;
  if (*r.failures > *r.requests) {
    return absl::InvalidArgumentError("summary: more failures than requests");
  }
  LoadTest::Latency l;
  s = ReadPercentile(doc, "p50Ms", &l.p50);
  if (s.ok()) s = ReadPercentile(doc, "p90Ms", &l.p90);
  if (s.ok()) s = ReadPercentile(doc, "p99Ms", &l.p99);
  if (!s.ok()) return s;
  if (l.p50 || l.p90 || l.p99) r.latency_ms = l;
  return r;
}

LoadTest::Result Aggregate(std::vector<LoadTest::PodResult> pods) {
  LoadTest::Result result;
  int64_t requests = 0, failures = 0;
  bool any_summary = false;
  // Per percentile: the sum of value * requests and of the weights, over
  // the pods that report it.
  struct Weighted {
    double sum = 0;
    double weight = 0;
    void Add(const std::optional<double>& v, int64_t w) {
      if (!v || w <= 0) return;
      sum += *v * static_cast<double>(w);
      weight += static_cast<double>(w);
    }
    std::optional<double> Mean() const {
      if (weight <= 0) return std::nullopt;
      return sum / weight;
    }
  } p50, p90, p99;
  for (const LoadTest::PodResult& pod : pods) {
    if (!pod.requests) continue;
    any_summary = true;
    requests += *pod.requests;
    failures += pod.failures.value_or(0);
    if (pod.latency_ms) {
      p50.Add(pod.latency_ms->p50, *pod.requests);
      p90.Add(pod.latency_ms->p90, *pod.requests);
      p99.Add(pod.latency_ms->p99, *pod.requests);
    }
  }
  if (any_summary) {
    result.requests = requests;
    result.failures = failures;
    LoadTest::Latency l{p50.Mean(), p90.Mean(), p99.Mean(), std::nullopt};
    if (l.p50 || l.p90 || l.p99) result.latency_ms = l;
  }
  result.pods = std::move(pods);
  return result;
}

int CountWithoutSummary(const LoadTest::Result& result) {
  int n = 0;
  for (const LoadTest::PodResult& pod : result.pods) {
    if (!pod.requests) ++n;
  }
  return n;
}

}  // namespace kcr::loadtest
