// What a PATCH costs the local API server, per request, on the fixtures
// the tests use:
//
//   bazel run -c opt //bench:patch_benchmark
//
// BM_StrategicMergePatch   the body `kubectl apply` sends for an image
//                          change (with $setElementOrder) applied to a
//                          Deployment.
// BM_ServerSideApply       `kubectl apply --server-side` of the Deployment's
//                          spec by its owner: merge, conflict check, field
//                          sets, managedFields written.
// BM_RecordUpdate          the managedFields bookkeeping every write does
//                          (an Update manager) for a Pod status change.
// BM_MergePatch            a JSON merge patch of the same Deployment, for
//                          scale.
#include <fstream>
#include <iterator>
#include <string>

#include "absl/time/time.h"
#include "api/patch/merge_patch.h"
#include "api/patch/patch_schema.h"
#include "api/patch/strategic_merge_patch.h"
#include "apiserver/apply/fieldmanager.h"
#include "benchmark/benchmark.h"
#include "rapidjson/document.h"

namespace kcr {
namespace api {
namespace {

rapidjson::Document Load(const char* path) {
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  rapidjson::Document doc;
  doc.Parse(text.c_str(), text.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    std::fprintf(stderr, "cannot read %s\n", path);
    std::abort();
  }
  return doc;
}

rapidjson::Document Parse(const char* text) {
  rapidjson::Document doc;
  doc.Parse(text);
  return doc;
}

void BM_StrategicMergePatch(benchmark::State& state) {
  const rapidjson::Document live = Load("test/api/testdata/deployment.json");
  const rapidjson::Document patch = Parse(
      R"({"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}\n"}},)"
      R"("spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"web"}],)"
      R"("containers":[{"image":"nginx:1.27","name":"web"}]}}}})");
  const PatchSchema& schema = *BuiltinPatchSchema("apps", "Deployment");
  for (auto _ : state) {
    absl::StatusOr<rapidjson::Document> out =
        ApplyStrategicMergePatch(live, patch, schema);
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_StrategicMergePatch);

void BM_MergePatch(benchmark::State& state) {
  const rapidjson::Document live = Load("test/api/testdata/deployment.json");
  const rapidjson::Document patch = Parse(R"({"spec":{"replicas":5}})");
  for (auto _ : state) {
    absl::StatusOr<rapidjson::Document> out = ApplyMergePatch(live, patch);
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MergePatch);

void BM_ServerSideApply(benchmark::State& state) {
  const rapidjson::Document deployment =
      Load("test/api/testdata/deployment.json");
  rapidjson::Document config(rapidjson::kObjectType);
  auto& a = config.GetAllocator();
  config.AddMember("apiVersion", "apps/v1", a);
  config.AddMember("kind", "Deployment", a);
  rapidjson::Value md(rapidjson::kObjectType);
  md.AddMember("name", rapidjson::Value(deployment["metadata"]["name"], a), a);
  config.AddMember("metadata", md, a);
  config.AddMember("spec", rapidjson::Value(deployment["spec"], a), a);
  const PatchSchema* schema = BuiltinPatchSchema("apps", "Deployment");
  apiserver::ApplyOptions options;
  options.field_manager = "kubectl";
  options.scope = apiserver::FieldScope::kMainResource;
  absl::StatusOr<apiserver::ApplyResult> first =
      apiserver::ServerSideApply(&deployment, config, schema, options);
  if (!first.ok() || !first->conflicts.empty()) std::abort();
  const rapidjson::Document live = std::move(first->object);
  for (auto _ : state) {
    absl::StatusOr<apiserver::ApplyResult> out =
        apiserver::ServerSideApply(&live, config, schema, options);
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ServerSideApply);

void BM_RecordUpdate(benchmark::State& state) {
  const rapidjson::Document pod = Load("test/api/testdata/pod.json");
  rapidjson::Document next;
  next.CopyFrom(pod, next.GetAllocator());
  if (next.HasMember("status") && next["status"].IsObject()) {
    next["status"].RemoveMember("phase");
    next["status"].AddMember("phase", "Succeeded", next.GetAllocator());
  }
  const PatchSchema* schema = BuiltinPatchSchema("", "Pod");
  apiserver::UpdateOptions options;
  options.field_manager = "kubelet";
  options.subresource = "status";
  options.scope = apiserver::FieldScope::kStatus;
  for (auto _ : state) {
    rapidjson::Document object;
    object.CopyFrom(next, object.GetAllocator());
    absl::Status s =
        apiserver::RecordUpdateManagedFields(&pod, &object, schema, options);
    benchmark::DoNotOptimize(s);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RecordUpdate);

}  // namespace
}  // namespace api
}  // namespace kcr

BENCHMARK_MAIN();
