#include "controllers/loadtest/loadtest_types.h"

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace kcr::loadtest {

using namespace api::crd;            // NOLINT: the CRD field types and
using namespace api::crd::internal;  // NOLINT: helpers are this file's idiom.

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
    KCR_RETURN_IF_ERROR(
        ReadStatusCommon(*status, &s.observed_generation, &s.conditions));
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

rapidjson::Document LoadTest::ToJson() const {
  rapidjson::Document d = NewDocument(kApiVersion, kKind, metadata);
  auto& a = d.GetAllocator();
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
          // An empty name is an absent one (the field is required).
          if (!pr.pod.empty()) WriteString(&pv, "pod", pr.pod, a);
          WriteInt(&pv, "requests", pr.requests, a);
          WriteInt(&pv, "failures", pr.failures, a);
          WriteLatency(&pv, pr.latency_ms, a);
          pods.PushBack(pv, a);
        }
        WriteMember(&rv, "pods", &pods, a);
      }
      WriteMember(&st, "result", &rv, a);
    }
    WriteStatusCommon(&st, status->observed_generation, status->conditions, a);
    WriteMember(&d, "status", &st, a);
  }
  return d;
}

}  // namespace kcr::loadtest
