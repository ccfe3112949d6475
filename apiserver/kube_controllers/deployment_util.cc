// Helpers over Deployments and ReplicaSets (deployment_internal.h), as
// kube's deployment/util has them.
#include <cmath>
#include <string>

#include "absl/strings/numbers.h"
#include "api/json/json_util.h"
#include "api/types/field.h"
#include "apiserver/kube_controllers/deployment_internal.h"
#include "base/str_cat.h"

namespace kcr {
namespace apiserver {
namespace deployment_internal {
namespace {

namespace field = ::kcr::api::field;
using Value = rapidjson::Value;

}  // namespace

bool ParseInt(std::string_view s, int64_t* v) {
  return absl::SimpleAtoi(absl::string_view(s.data(), s.size()), v);
}

absl::StatusOr<int64_t> ScaledValue(const Value* v, int64_t total,
                                    bool round_up) {
  if (v == nullptr) return 0;
  if (v->IsInt64()) return v->GetInt64();
  if (v->IsString()) {
    std::string_view s = field::View(*v);
    int64_t percent;
    if (!s.empty() && s.back() == '%' &&
        ParseInt(s.substr(0, s.size() - 1), &percent)) {
      const double scaled =
          static_cast<double>(percent) * static_cast<double>(total) / 100.0;
      return static_cast<int64_t>(round_up ? std::ceil(scaled)
                                           : std::floor(scaled));
    }
  }
  return absl::InvalidArgumentError(Cat("invalid value for IntOrString: ",
                                        json::JsonToString(*v).value_or("?")));
}

int64_t SpecReplicas(const api::Object& o) {
  return field::Int64(field::Object(&o.json(), "spec"), "replicas").value_or(1);
}

int64_t StatusCount(const api::Object& o, std::string_view key) {
  return field::Int64(field::Object(&o.json(), "status"), key).value_or(0);
}

const Value* TemplateOf(const api::Object& o) {
  return field::Object(field::Object(&o.json(), "spec"), "template");
}

bool CreatedBefore(const api::ObjectPtr& a, const api::ObjectPtr& b) {
  if (a->creation_timestamp() != b->creation_timestamp()) {
    return a->creation_timestamp() < b->creation_timestamp();
  }
  return a->name() < b->name();
}

int64_t SumSpec(const std::vector<api::ObjectPtr>& rss) {
  int64_t n = 0;
  for (const auto& rs : rss) n += SpecReplicas(*rs);
  return n;
}

int64_t SumStatus(const std::vector<api::ObjectPtr>& rss,
                  std::string_view key) {
  int64_t n = 0;
  for (const auto& rs : rss) n += StatusCount(*rs, key);
  return n;
}

std::vector<api::ObjectPtr> Active(const std::vector<api::ObjectPtr>& rss) {
  std::vector<api::ObjectPtr> out;
  for (const auto& rs : rss) {
    if (SpecReplicas(*rs) > 0) out.push_back(rs);
  }
  return out;
}

}  // namespace deployment_internal
}  // namespace apiserver
}  // namespace kcr
