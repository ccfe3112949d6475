#include "api/crd/loadtest.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "runtime/base/status_macros.h"

namespace kcr {
namespace api {
namespace crd {

using namespace internal;  // NOLINT: the field helpers are this file's idiom.

namespace {

absl::Status ReadLatency(const rapidjson::Value& obj, const std::string& path,
                         std::optional<LoadTest::Latency>* out) {
  const rapidjson::Value* v;
  KCR_RETURN_IF_ERROR(ReadObject(obj, "latencyMs", path, &v));
  if (v == nullptr) return absl::OkStatus();
  std::string p = Child(path, "latencyMs");
  LoadTest::Latency l;
  KCR_RETURN_IF_ERROR(ReadDouble(*v, "p50", p, &l.p50));
  KCR_RETURN_IF_ERROR(ReadDouble(*v, "p90", p, &l.p90));
  KCR_RETURN_IF_ERROR(ReadDouble(*v, "p99", p, &l.p99));
  KCR_RETURN_IF_ERROR(ReadDouble(*v, "max", p, &l.max));
  *out = l;
  return absl::OkStatus();
}

void WriteLatency(rapidjson::Value* obj,
                  const std::optional<LoadTest::Latency>& l, Allocator& a) {
  if (!l) return;
  rapidjson::Value v(rapidjson::kObjectType);
  WriteDouble(&v, "p50", l->p50, a);
  WriteDouble(&v, "p90", l->p90, a);
  WriteDouble(&v, "p99", l->p99, a);
  WriteDouble(&v, "max", l->max, a);
  WriteMember(obj, "latencyMs", &v, a);
}

void ValidateLatency(const std::string& path,
                     const std::optional<LoadTest::Latency>& l,
                     std::vector<std::string>* out) {
  if (!l) return;
  std::string p = Child(path, "latencyMs");
  if (l->p50) ValidateMinimum(Child(p, "p50"), *l->p50, 0.0, out);
  if (l->p90) ValidateMinimum(Child(p, "p90"), *l->p90, 0.0, out);
  if (l->p99) ValidateMinimum(Child(p, "p99"), *l->p99, 0.0, out);
  if (l->max) ValidateMinimum(Child(p, "max"), *l->max, 0.0, out);
}

// An IANA service name, as the CRD's pattern and maxLength state it.
bool IsPortName(const std::string& s) {
  if (s.empty() || s.size() > 15) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    bool alnum = absl::ascii_isdigit(c) || (c >= 'a' && c <= 'z');
    if (!alnum && !(c == '-' && i > 0 && i + 1 < s.size())) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<LoadTest> LoadTest::FromJson(const rapidjson::Value& json) {
  LoadTest t;
  KCR_RETURN_IF_ERROR(
      ReadTypeAndMetadata(json, kApiVersion, kKind, &t.metadata));
  const rapidjson::Value* spec;
  KCR_RETURN_IF_ERROR(ReadObject(json, "spec", "", &spec));
  if (spec != nullptr) {
    t.has_spec = true;
    KCR_RETURN_IF_ERROR(ReadInt(*spec, "replicas", "spec", &t.spec.replicas));
    const rapidjson::Value* test;
    KCR_RETURN_IF_ERROR(ReadObject(*spec, "test", "spec", &test));
    if (test != nullptr) {
      Test x;
      const char* p = "spec.test";
      KCR_RETURN_IF_ERROR(ReadString(*test, "method", p, &x.method));
      KCR_RETURN_IF_ERROR(ReadString(*test, "serviceName", p, &x.service_name));
      KCR_RETURN_IF_ERROR(
          ReadIntOrString(*test, "servicePort", p, &x.service_port));
      KCR_RETURN_IF_ERROR(ReadString(*test, "path", p, &x.path));
      KCR_RETURN_IF_ERROR(ReadInt(*test, "repeat", p, &x.repeat));
      t.spec.test = std::move(x);
    }
  }
  const rapidjson::Value* status;
  KCR_RETURN_IF_ERROR(ReadObject(json, "status", "", &status));
  if (status != nullptr) {
    Status s;
    KCR_RETURN_IF_ERROR(ReadString(*status, "state", "status", &s.state));
    KCR_RETURN_IF_ERROR(
        ReadStringList(*status, "children", "status", &s.children));
    KCR_RETURN_IF_ERROR(ReadString(*status, "message", "status", &s.message));
    KCR_RETURN_IF_ERROR(ReadInt(*status, "observedGeneration", "status",
                                &s.observed_generation));
    KCR_RETURN_IF_ERROR(
        ReadConditions(*status, "conditions", "status", &s.conditions));
    const rapidjson::Value* result;
    KCR_RETURN_IF_ERROR(ReadObject(*status, "result", "status", &result));
    if (result != nullptr) {
      Result r;
      const std::string p = "status.result";
      KCR_RETURN_IF_ERROR(ReadInt(*result, "requests", p, &r.requests));
      KCR_RETURN_IF_ERROR(ReadInt(*result, "failures", p, &r.failures));
      KCR_RETURN_IF_ERROR(ReadLatency(*result, p, &r.latency_ms));
      auto pods = result->FindMember("pods");
      if (pods != result->MemberEnd() && !pods->value.IsNull()) {
        if (!pods->value.IsArray()) {
          return absl::InvalidArgumentError(
              "status.result.pods: must be a list");
        }
        for (rapidjson::SizeType i = 0; i < pods->value.Size(); ++i) {
          const rapidjson::Value& e = pods->value[i];
          std::string item = absl::StrCat(p, ".pods[", i, "]");
          KCR_RETURN_IF_ERROR(RequireObject(e, item));
          PodResult pr;
          std::optional<std::string> pod;
          KCR_RETURN_IF_ERROR(ReadString(e, "pod", item, &pod));
          pr.pod = pod.value_or("");
          KCR_RETURN_IF_ERROR(ReadInt(e, "requests", item, &pr.requests));
          KCR_RETURN_IF_ERROR(ReadInt(e, "failures", item, &pr.failures));
          KCR_RETURN_IF_ERROR(ReadLatency(e, item, &pr.latency_ms));
          r.pods.push_back(std::move(pr));
        }
      }
      s.result = std::move(r);
    }
    t.status = std::move(s);
  }
  return t;
}

void LoadTest::ApplyDefaults() {
  if (!spec.test) return;
  Test& x = *spec.test;
  if (!x.method) x.method = kDefaultMethod;
  if (!x.service_port) x.service_port = IntOrString::Int(kDefaultServicePort);
  if (!x.path) x.path = kDefaultPath;
}

std::vector<std::string> LoadTest::Validate() const {
  std::vector<std::string> out;
  if (!has_spec) {
    ValidateRequired("spec", &out);
  } else {
    if (!spec.replicas) {
      ValidateRequired("spec.replicas", &out);
    } else {
      ValidateMinimum("spec.replicas", *spec.replicas, 1, &out);
    }
    if (!spec.test) {
      ValidateRequired("spec.test", &out);
    } else {
      const Test& x = *spec.test;
      if (!x.service_name) {
        ValidateRequired("spec.test.serviceName", &out);
      }
      if (x.method) {
        ValidateEnum("spec.test.method", *x.method,
                     {"GET", "POST", "PUT", "DELETE", "HEAD"}, &out);
      }
      if (x.service_name) {
        ValidateMinLength("spec.test.serviceName", *x.service_name, 1, &out);
      }
      if (x.service_port) {
        const char* p = "spec.test.servicePort";
        if (x.service_port->is_int) {
          ValidateMinimum(p, x.service_port->int_value, 1, &out);
          ValidateMaximum(p, x.service_port->int_value, 65535, &out);
        } else if (!IsPortName(x.service_port->str_value)) {
          out.push_back(absl::StrCat(
              p, ": Invalid value: ", Quote(x.service_port->str_value),
              ": must be a port number (1-65535) or an IANA service name (at "
              "most 15 characters of [a-z0-9-], starting and ending with an "
              "alphanumeric character)"));
        }
      }
      if (x.repeat) ValidateMinimum("spec.test.repeat", *x.repeat, 1, &out);
    }
  }
  if (status) {
    if (status->state) {
      ValidateEnum("status.state", *status->state,
                   {kPending, kExecuting, kFinished, kFailed}, &out);
    }
    if (status->observed_generation) {
      ValidateMinimum("status.observedGeneration", *status->observed_generation,
                      0, &out);
    }
    if (status->result) {
      const Result& r = *status->result;
      const std::string p = "status.result";
      if (r.requests)
        ValidateMinimum(Child(p, "requests"), *r.requests, 0, &out);
      if (r.failures)
        ValidateMinimum(Child(p, "failures"), *r.failures, 0, &out);
      ValidateLatency(p, r.latency_ms, &out);
      for (size_t i = 0; i < r.pods.size(); ++i) {
        const PodResult& pr = r.pods[i];
        std::string item = absl::StrCat(p, ".pods[", i, "]");
        if (pr.pod.empty()) ValidateRequired(Child(item, "pod"), &out);
        if (pr.requests) {
          ValidateMinimum(Child(item, "requests"), *pr.requests, 0, &out);
        }
        if (pr.failures) {
          ValidateMinimum(Child(item, "failures"), *pr.failures, 0, &out);
        }
        ValidateLatency(item, pr.latency_ms, &out);
      }
    }
    ValidateConditions("status.conditions", status->conditions, &out);
  }
  return out;
}

rapidjson::Document LoadTest::ToJson() const {
  rapidjson::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  WriteString(&d, "apiVersion", std::string(kApiVersion), a);
  WriteString(&d, "kind", std::string(kKind), a);
  WriteRaw(&d, "metadata", metadata, a);
  if (has_spec) {
    rapidjson::Value s(rapidjson::kObjectType);
    WriteInt(&s, "replicas", spec.replicas, a);
    if (spec.test) {
      const Test& x = *spec.test;
      rapidjson::Value t(rapidjson::kObjectType);
      WriteString(&t, "method", x.method, a);
      WriteString(&t, "serviceName", x.service_name, a);
      WriteIntOrString(&t, "servicePort", x.service_port, a);
      WriteString(&t, "path", x.path, a);
      WriteInt(&t, "repeat", x.repeat, a);
      WriteMember(&s, "test", &t, a);
    }
    WriteMember(&d, "spec", &s, a);
  }
  if (status) {
    rapidjson::Value st(rapidjson::kObjectType);
    WriteString(&st, "state", status->state, a);
    WriteStringList(&st, "children", status->children, a);
    WriteString(&st, "message", status->message, a);
    if (status->result) {
      const Result& r = *status->result;
      rapidjson::Value rv(rapidjson::kObjectType);
      WriteInt(&rv, "requests", r.requests, a);
      WriteInt(&rv, "failures", r.failures, a);
      WriteLatency(&rv, r.latency_ms, a);
      if (!r.pods.empty()) {
        rapidjson::Value pods(rapidjson::kArrayType);
        for (const PodResult& pr : r.pods) {
          rapidjson::Value pv(rapidjson::kObjectType);
          WriteString(&pv, "pod", pr.pod, a);
          WriteInt(&pv, "requests", pr.requests, a);
          WriteInt(&pv, "failures", pr.failures, a);
          WriteLatency(&pv, pr.latency_ms, a);
          pods.PushBack(pv, a);
        }
        WriteMember(&rv, "pods", &pods, a);
      }
      WriteMember(&st, "result", &rv, a);
    }
    WriteInt(&st, "observedGeneration", status->observed_generation, a);
    WriteConditions(&st, "conditions", status->conditions, a);
    WriteMember(&d, "status", &st, a);
  }
  return d;
}

}  // namespace crd
}  // namespace api
}  // namespace kcr
