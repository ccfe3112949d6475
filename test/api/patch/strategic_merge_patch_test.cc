#include "api/patch/strategic_merge_patch.h"

#include <string>

#include "api/patch/patch_schema.h"
#include "gtest/gtest.h"
#include "test/api/json/json_test_util.h"

namespace kcr {
namespace api {
namespace {

using ::kcr::json::testing::DeepArray;
using ::kcr::json::testing::Json;
using ::kcr::json::testing::JsonEq;
using ::kcr::json::testing::Str;

const PatchSchema& Deployment() {
  return *BuiltinPatchSchema("apps", "Deployment");
}
const PatchSchema& Pod() { return *BuiltinPatchSchema("", "Pod"); }

// Applies and compares with `want`, all as JSON text.
::testing::AssertionResult Patches(const PatchSchema& schema,
                                   absl::string_view target,
                                   absl::string_view patch,
                                   absl::string_view want) {
  absl::StatusOr<rapidjson::Document> got =
      ApplyStrategicMergePatch(Json(target), Json(patch), schema);
  if (!got.ok()) {
    return ::testing::AssertionFailure() << got.status();
  }
  return JsonEq(Json(want), *got);
}

std::string ErrorOf(const PatchSchema& schema, absl::string_view target,
                    absl::string_view patch) {
  absl::StatusOr<rapidjson::Document> got =
      ApplyStrategicMergePatch(Json(target), Json(patch), schema);
  if (got.ok()) return "no error: " + Str(*got);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(got.status().message());
}

constexpr absl::string_view kLiveDeployment = R"({
  "apiVersion":"apps/v1","kind":"Deployment",
  "metadata":{"name":"d","namespace":"default","labels":{"app":"d"}},
  "spec":{"replicas":1,"selector":{"matchLabels":{"app":"d"}},
    "strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%","maxUnavailable":"25%"}},
    "template":{"metadata":{"labels":{"app":"d"}},"spec":{"containers":[
      {"name":"a","image":"busybox:1","env":[{"name":"X","value":"1"},{"name":"Y","value":"2"}]},
      {"name":"b","image":"busybox:1","args":["sleep","1"]}]}}}})";

// Bodies kubectl 1.32 sent, captured from `kubectl apply -f` of a
// Deployment (containers a with env X and Y, and b) and three edits of the
// manifest, and from `kubectl scale deployment d --replicas=3` (a merge
// patch to deployments/d/scale, applied here to the Deployment).
constexpr absl::string_view kLiveFromKubectlCreate =
    R"json({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"annotations\":{},\"name\":\"d\",\"namespace\":\"default\"},\"spec\":{\"replicas\":1,\"selector\":{\"matchLabels\":{\"app\":\"d\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"d\"}},\"spec\":{\"containers\":[{\"env\":[{\"name\":\"X\",\"value\":\"1\"},{\"name\":\"Y\",\"value\":\"2\"}],\"image\":\"busybox:1\",\"name\":\"a\"},{\"image\":\"busybox:1\",\"name\":\"b\"}]}}}}\n"},"name":"d","namespace":"default"},"spec":{"replicas":1,"selector":{"matchLabels":{"app":"d"}},"template":{"metadata":{"labels":{"app":"d"}},"spec":{"containers":[{"env":[{"name":"X","value":"1"},{"name":"Y","value":"2"}],"image":"busybox:1","name":"a"},{"image":"busybox:1","name":"b"}]}}}})json";

constexpr absl::string_view kApplyImageChange =
    R"json({"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"annotations\":{},\"name\":\"d\",\"namespace\":\"default\"},\"spec\":{\"replicas\":1,\"selector\":{\"matchLabels\":{\"app\":\"d\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"d\"}},\"spec\":{\"containers\":[{\"env\":[{\"name\":\"X\",\"value\":\"1\"},{\"name\":\"Y\",\"value\":\"2\"}],\"image\":\"busybox:2\",\"name\":\"a\"},{\"image\":\"busybox:1\",\"name\":\"b\"}]}}}}\n"}},"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"a"},{"name":"b"}],"containers":[{"image":"busybox:2","name":"a"}]}}}})json";

constexpr absl::string_view kApplyReorderAndEnvRemoval =
    R"json({"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"annotations\":{},\"name\":\"d\",\"namespace\":\"default\"},\"spec\":{\"replicas\":2,\"selector\":{\"matchLabels\":{\"app\":\"d\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"d\"}},\"spec\":{\"containers\":[{\"image\":\"busybox:2\",\"name\":\"b\"},{\"env\":[{\"name\":\"Y\",\"value\":\"2\"}],\"image\":\"busybox:1\",\"name\":\"a\"}]}}}}\n"}},"spec":{"replicas":2,"template":{"spec":{"$setElementOrder/containers":[{"name":"b"},{"name":"a"}],"containers":[{"image":"busybox:2","name":"b"},{"$setElementOrder/env":[{"name":"Y"}],"env":[{"$patch":"delete","name":"X"}],"name":"a"}]}}}})json";

constexpr absl::string_view kApplyDeleteContainer =
    R"json({"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"annotations\":{},\"name\":\"d\",\"namespace\":\"default\"},\"spec\":{\"replicas\":1,\"selector\":{\"matchLabels\":{\"app\":\"d\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"d\"}},\"spec\":{\"containers\":[{\"env\":[{\"name\":\"X\",\"value\":\"1\"},{\"name\":\"Y\",\"value\":\"2\"}],\"image\":\"busybox:1\",\"name\":\"a\"}]}}}}\n"}},"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"a"}],"containers":[{"$patch":"delete","name":"b"}]}}}})json";

constexpr absl::string_view kScale = R"json({"spec":{"replicas":3}})json";

const rapidjson::Value& Containers(const rapidjson::Value& d) {
  return d["spec"]["template"]["spec"]["containers"];
}

std::string LastApplied(const rapidjson::Value& d) {
  return d["metadata"]["annotations"]
          ["kubectl.kubernetes.io/last-applied-configuration"]
              .GetString();
}

TEST(KubectlBodiesTest, ApplyImageChange) {
  absl::StatusOr<rapidjson::Document> got = ApplyStrategicMergePatch(
      Json(kLiveFromKubectlCreate), Json(kApplyImageChange), Deployment());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(JsonEq(
      Json(
          R"([{"name":"a","image":"busybox:2","env":[{"name":"X","value":"1"},{"name":"Y","value":"2"}]},{"name":"b","image":"busybox:1"}])"),
      Containers(*got)));
  EXPECT_NE(LastApplied(*got).find("busybox:2"), std::string::npos);
}

TEST(KubectlBodiesTest, ApplyReorderAndEnvRemoval) {
  absl::StatusOr<rapidjson::Document> got =
      ApplyStrategicMergePatch(Json(kLiveFromKubectlCreate),
                               Json(kApplyReorderAndEnvRemoval), Deployment());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)["spec"]["replicas"].GetInt(), 2);
  EXPECT_TRUE(JsonEq(
      Json(
          R"([{"name":"b","image":"busybox:2"},{"name":"a","image":"busybox:1","env":[{"name":"Y","value":"2"}]}])"),
      Containers(*got)));
}

TEST(KubectlBodiesTest, ApplyDeleteContainer) {
  absl::StatusOr<rapidjson::Document> got = ApplyStrategicMergePatch(
      Json(kLiveFromKubectlCreate), Json(kApplyDeleteContainer), Deployment());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(JsonEq(
      Json(
          R"([{"name":"a","image":"busybox:1","env":[{"name":"X","value":"1"},{"name":"Y","value":"2"}]}])"),
      Containers(*got)));
}

TEST(KubectlBodiesTest, Scale) {
  absl::StatusOr<rapidjson::Document> got = ApplyStrategicMergePatch(
      Json(kLiveFromKubectlCreate), Json(kScale), Deployment());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)["spec"]["replicas"].GetInt(), 3);
  EXPECT_EQ(Containers(*got).Size(), 2u);
}

TEST(SchemaTest, BuiltinKindsSupportStrategicMergePatch) {
  EXPECT_TRUE(SupportsStrategicMergePatch("", "Pod"));
  EXPECT_TRUE(SupportsStrategicMergePatch("apps", "Deployment"));
  EXPECT_TRUE(SupportsStrategicMergePatch("coordination.k8s.io", "Lease"));
  EXPECT_TRUE(SupportsStrategicMergePatch("", "ConfigMap"));
  EXPECT_FALSE(SupportsStrategicMergePatch("example.com", "Widget"));
  EXPECT_FALSE(SupportsStrategicMergePatch("", "Deployment"));
  EXPECT_EQ(GroupOfApiVersion("apps/v1"), "apps");
  EXPECT_EQ(GroupOfApiVersion("v1"), "");
  const FieldPatchMeta* env =
      Deployment().Find("spec.template.spec.containers.env");
  ASSERT_NE(env, nullptr);
  EXPECT_EQ(env->merge_key, "name");
  EXPECT_EQ(Pod().Find("spec.containers.ports")->merge_key, "containerPort");
  EXPECT_EQ(BuiltinPatchSchema("", "Service")->Find("spec.ports")->merge_key,
            "port");
  EXPECT_EQ(Pod().Find("spec.tolerations")->strategy, FieldStrategy::kAtomic);
  EXPECT_EQ(Pod().Find("metadata.finalizers")->strategy,
            FieldStrategy::kMergePrimitives);
  EXPECT_EQ(Pod().Find("spec.nodeSelector"), nullptr);
}

// kubectl 1.32 `kubectl apply` after the manifest swapped the containers,
// bumped b's image and replicas, and dropped env X from a (observed body).
TEST(StrategicMergePatchTest, KubectlApplyReorderImageAndEnvRemoval) {
  EXPECT_TRUE(Patches(
      Deployment(), kLiveDeployment,
      R"({"spec":{"replicas":2,"template":{"spec":{"$setElementOrder/containers":[{"name":"b"},{"name":"a"}],"containers":[{"image":"busybox:2","name":"b"},{"$setElementOrder/env":[{"name":"Y"}],"env":[{"$patch":"delete","name":"X"}],"name":"a"}]}}}})",
      R"({"apiVersion":"apps/v1","kind":"Deployment",
  "metadata":{"name":"d","namespace":"default","labels":{"app":"d"}},
  "spec":{"replicas":2,"selector":{"matchLabels":{"app":"d"}},
    "strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%","maxUnavailable":"25%"}},
    "template":{"metadata":{"labels":{"app":"d"}},"spec":{"containers":[
      {"name":"b","image":"busybox:2","args":["sleep","1"]},
      {"name":"a","image":"busybox:1","env":[{"name":"Y","value":"2"}]}]}}}})"));
}

// The order matters, not only the content.
TEST(StrategicMergePatchTest, SetElementOrderOrdersTheResult) {
  absl::StatusOr<rapidjson::Document> got = ApplyStrategicMergePatch(
      Json(kLiveDeployment),
      Json(
          R"({"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"b"},{"name":"a"}]}}}})"),
      Deployment());
  ASSERT_TRUE(got.ok()) << got.status();
  const rapidjson::Value& c = (*got)["spec"]["template"]["spec"]["containers"];
  ASSERT_EQ(c.Size(), 2u);
  EXPECT_STREQ(c[0]["name"].GetString(), "b");
  EXPECT_STREQ(c[1]["name"].GetString(), "a");
}

// kubectl apply after a container was removed from the manifest.
TEST(StrategicMergePatchTest, KubectlApplyDeletesContainer) {
  EXPECT_TRUE(Patches(
      Deployment(),
      R"({"spec":{"template":{"spec":{"containers":[{"name":"a","image":"x"},{"name":"b","image":"y"}]}}}})",
      R"({"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"a"}],"containers":[{"$patch":"delete","name":"b"}]}}}})",
      R"({"spec":{"template":{"spec":{"containers":[{"name":"a","image":"x"}]}}}})"));
}

// kubectl apply changing one image (the annotation update rides along).
TEST(StrategicMergePatchTest, KubectlApplyImageChange) {
  EXPECT_TRUE(Patches(
      Deployment(), kLiveDeployment,
      R"({"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}\n"}},"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"a"},{"name":"b"}],"containers":[{"image":"busybox:3","name":"a"}]}}}})",
      R"({"apiVersion":"apps/v1","kind":"Deployment",
  "metadata":{"name":"d","namespace":"default","labels":{"app":"d"},"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}\n"}},
  "spec":{"replicas":1,"selector":{"matchLabels":{"app":"d"}},
    "strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%","maxUnavailable":"25%"}},
    "template":{"metadata":{"labels":{"app":"d"}},"spec":{"containers":[
      {"name":"a","image":"busybox:3","env":[{"name":"X","value":"1"},{"name":"Y","value":"2"}]},
      {"name":"b","image":"busybox:1","args":["sleep","1"]}]}}}})"));
}

// Observed kubectl 1.28 client-side apply of a ConfigMap.
TEST(StrategicMergePatchTest, KubectlApplyConfigMap) {
  const PatchSchema& cm = *BuiltinPatchSchema("", "ConfigMap");
  EXPECT_TRUE(Patches(
      cm,
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm1","labels":{"app":"demo"},"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"old"}},"data":{"a":"1"}})",
      R"({"data":{"a":"2","b":"3"},"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"new"}}})",
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm1","labels":{"app":"demo"},"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"new"}},"data":{"a":"2","b":"3"}})"));
}

TEST(StrategicMergePatchTest, KeyedListMergesAndAppendsLikeApimachinery) {
  // Without $setElementOrder a new element goes before the server elements
  // that follow it, as apimachinery's mergeSortedSlice places it.
  EXPECT_TRUE(Patches(
      Pod(), R"({"spec":{"containers":[{"name":"a"},{"name":"b"}]}})",
      R"({"spec":{"containers":[{"name":"c","image":"z"}]}})",
      R"({"spec":{"containers":[{"name":"c","image":"z"},{"name":"a"},{"name":"b"}]}})"));
  EXPECT_TRUE(Patches(
      Pod(), R"({"spec":{"containers":[{"name":"a"},{"name":"b"}]}})",
      R"({"spec":{"containers":[{"name":"b","image":"z"},{"name":"c"}]}})",
      R"({"spec":{"containers":[{"name":"a"},{"name":"b","image":"z"},{"name":"c"}]}})"));
  // With it, new elements land where the order says.
  EXPECT_TRUE(Patches(
      Pod(), R"({"spec":{"containers":[{"name":"a"},{"name":"b"}]}})",
      R"({"spec":{"$setElementOrder/containers":[{"name":"a"},{"name":"b"},{"name":"c"}],"containers":[{"name":"c"}]}})",
      R"({"spec":{"containers":[{"name":"a"},{"name":"b"},{"name":"c"}]}})"));
}

TEST(StrategicMergePatchTest, NestedKeyedLists) {
  EXPECT_TRUE(Patches(
      Pod(),
      R"({"spec":{"containers":[{"name":"a","ports":[{"containerPort":80,"name":"http"}],"volumeMounts":[{"mountPath":"/x","name":"v"}]}],"volumes":[{"name":"v","emptyDir":{}}]}})",
      R"({"spec":{"containers":[{"name":"a","ports":[{"containerPort":80,"protocol":"TCP"},{"containerPort":443}],"volumeMounts":[{"mountPath":"/x","readOnly":true}]}],"volumes":[{"name":"w","configMap":{"name":"c"}}]}})",
      R"({"spec":{"containers":[{"name":"a","ports":[{"containerPort":80,"name":"http","protocol":"TCP"},{"containerPort":443}],"volumeMounts":[{"mountPath":"/x","name":"v","readOnly":true}]}],"volumes":[{"name":"w","configMap":{"name":"c"}},{"name":"v","emptyDir":{}}]}})"));
}

TEST(StrategicMergePatchTest, ServicePortsMergeByPort) {
  EXPECT_TRUE(Patches(
      *BuiltinPatchSchema("", "Service"),
      R"({"spec":{"ports":[{"port":80,"targetPort":8080},{"port":443}]}})",
      R"({"spec":{"ports":[{"port":80,"targetPort":9090}]}})",
      R"({"spec":{"ports":[{"port":80,"targetPort":9090},{"port":443}]}})"));
}

TEST(StrategicMergePatchTest, ConditionsAndOwnerReferences) {
  EXPECT_TRUE(Patches(
      Pod(),
      R"({"metadata":{"ownerReferences":[{"uid":"1","name":"a"}]},"status":{"conditions":[{"type":"Ready","status":"False"},{"type":"Initialized","status":"True"}]}})",
      R"({"metadata":{"ownerReferences":[{"uid":"2","name":"b"}]},"status":{"conditions":[{"type":"Ready","status":"True"}]}})",
      R"({"metadata":{"ownerReferences":[{"uid":"2","name":"b"},{"uid":"1","name":"a"}]},"status":{"conditions":[{"type":"Ready","status":"True"},{"type":"Initialized","status":"True"}]}})"));
}

TEST(StrategicMergePatchTest, AtomicListsAreReplaced) {
  EXPECT_TRUE(Patches(
      Pod(),
      R"({"spec":{"tolerations":[{"key":"a"},{"key":"b"}],"containers":[{"name":"a","args":["1","2"],"command":["sh"]}]}})",
      R"({"spec":{"tolerations":[{"key":"c"}],"containers":[{"name":"a","args":["3"]}]}})",
      R"({"spec":{"tolerations":[{"key":"c"}],"containers":[{"name":"a","args":["3"],"command":["sh"]}]}})"));
  // A list the schema does not know is replaced too.
  EXPECT_TRUE(Patches(Pod(), R"({"spec":{"x":[1,2]}})", R"({"spec":{"x":[3]}})",
                      R"({"spec":{"x":[3]}})"));
}

TEST(StrategicMergePatchTest, FinalizersMergeAsSetAndDeleteFromPrimitiveList) {
  EXPECT_TRUE(Patches(Pod(), R"({"metadata":{"finalizers":["a","b"]}})",
                      R"({"metadata":{"finalizers":["c","a","c"]}})",
                      R"({"metadata":{"finalizers":["c","a","b"]}})"));
  EXPECT_TRUE(Patches(
      Pod(), R"({"metadata":{"finalizers":["a","b","c"]}})",
      R"({"metadata":{"$deleteFromPrimitiveList/finalizers":["b","zz"]}})",
      R"({"metadata":{"finalizers":["a","c"]}})"));
  // What kubectl apply sends when a finalizer leaves the manifest.
  EXPECT_TRUE(Patches(
      Pod(), R"({"metadata":{"finalizers":["a","b","c"]}})",
      R"({"metadata":{"$setElementOrder/finalizers":["c","a"],"$deleteFromPrimitiveList/finalizers":["b"]}})",
      R"({"metadata":{"finalizers":["c","a"]}})"));
  // Deleting from a missing list is a no-op.
  EXPECT_TRUE(
      Patches(Pod(), R"({"metadata":{}})",
              R"({"metadata":{"$deleteFromPrimitiveList/finalizers":["b"]}})",
              R"({"metadata":{}})"));
}

TEST(StrategicMergePatchTest, RetainKeysClearsOtherMembers) {
  // kubectl apply switching a Deployment to the Recreate strategy.
  EXPECT_TRUE(Patches(
      Deployment(),
      R"({"spec":{"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":1}}}})",
      R"({"spec":{"strategy":{"$retainKeys":["type"],"rollingUpdate":null,"type":"Recreate"}}})",
      R"({"spec":{"strategy":{"type":"Recreate"}}})"));
  EXPECT_TRUE(Patches(
      Pod(),
      R"({"spec":{"volumes":[{"name":"v","emptyDir":{},"hostPath":{"path":"/"}}]}})",
      R"({"spec":{"volumes":[{"$retainKeys":["name","emptyDir"],"name":"v","emptyDir":{"medium":"Memory"}}]}})",
      R"({"spec":{"volumes":[{"name":"v","emptyDir":{"medium":"Memory"}}]}})"));
}

TEST(StrategicMergePatchTest, PatchDirectivesInMaps) {
  EXPECT_TRUE(Patches(Pod(), R"({"metadata":{"labels":{"a":"1","b":"2"}}})",
                      R"({"metadata":{"labels":{"$patch":"replace","c":"3"}}})",
                      R"({"metadata":{"labels":{"c":"3"}}})"));
  EXPECT_TRUE(Patches(Pod(), R"({"metadata":{"labels":{"a":"1"}}})",
                      R"({"metadata":{"labels":{"$patch":"delete"}}})",
                      R"({"metadata":{"labels":{}}})"));
  // A replace on a member the target lacks still drops the directive.
  EXPECT_TRUE(Patches(Pod(), R"({"metadata":{}})",
                      R"({"metadata":{"labels":{"$patch":"replace","c":"3"}}})",
                      R"({"metadata":{"labels":{"c":"3"}}})"));
}

TEST(StrategicMergePatchTest, ListReplaceDirective) {
  EXPECT_TRUE(Patches(
      Pod(),
      R"({"spec":{"containers":[{"name":"a","image":"x"},{"name":"b"}]}})",
      R"({"spec":{"containers":[{"$patch":"replace"},{"name":"c"}]}})",
      R"({"spec":{"containers":[{"name":"c"}]}})"));
}

TEST(StrategicMergePatchTest, NullsDeleteAndNewMembersDropNulls) {
  EXPECT_TRUE(Patches(
      Pod(), R"({"metadata":{"labels":{"a":"1","b":"2"}}})",
      R"({"metadata":{"labels":{"a":null,"zz":null},"annotations":{"x":"1","y":null}}})",
      R"({"metadata":{"labels":{"b":"2"},"annotations":{"x":"1"}}})"));
  // Type changes replace.
  EXPECT_TRUE(Patches(Pod(), R"({"spec":{"a":{"b":1},"c":[1]}})",
                      R"({"spec":{"a":"s","c":{"d":1}}})",
                      R"({"spec":{"a":"s","c":{"d":1}}})"));
}

TEST(StrategicMergePatchTest, NewKeyedListProcessesDirectives) {
  EXPECT_TRUE(Patches(
      Pod(), R"({"spec":{}})",
      R"({"spec":{"containers":[{"name":"a","env":[{"name":"X","value":"1"},{"$patch":"delete","name":"Y"}]}]}})",
      R"({"spec":{"containers":[{"name":"a","env":[{"name":"X","value":"1"}]}]}})"));
}

TEST(StrategicMergePatchTest, DirectivesAreOrdinaryFieldsWhenDisabled) {
  rapidjson::Document out;
  ASSERT_TRUE(internal::StrategicMerge(Json(R"({"a":{"b":1}})"),
                                       Json(R"({"a":{"$patch":"delete"}})"),
                                       Pod(), false, &out, out.GetAllocator())
                  .ok());
  EXPECT_TRUE(JsonEq(Json(R"({"a":{"b":1,"$patch":"delete"}})"), out));
}

TEST(StrategicMergePatchTest, BadPatchesAreClearErrors) {
  const std::string live = R"({"spec":{"containers":[{"name":"a"}]}})";
  EXPECT_EQ(ErrorOf(Pod(), live, R"({"spec":{"containers":[{"image":"x"}]}})"),
            "strategic merge patch: spec.containers: an element does not "
            "contain the declared merge key \"name\"");
  EXPECT_EQ(
      ErrorOf(Pod(), live, R"({"spec":{"containers":[{"$patch":"delete"}]}})"),
      "strategic merge patch: spec.containers: a $patch: delete element "
      "does not contain the declared merge key \"name\"");
  EXPECT_EQ(ErrorOf(Pod(), live, R"({"spec":{"$foo":1}})"),
            "strategic merge patch: spec: unknown directive \"$foo\"");
  EXPECT_EQ(ErrorOf(Pod(), live, R"({"spec":{"$patch":"merge"}})"),
            "strategic merge patch: spec: unknown patch type \"merge\" in map");
  EXPECT_EQ(
      ErrorOf(Pod(), live, R"({"spec":{"$patch":1}})"),
      "strategic merge patch: spec: the value of $patch must be a string");
  EXPECT_EQ(
      ErrorOf(Pod(), live, R"({"spec":{"containers":[{"$patch":"merge"}]}})"),
      "strategic merge patch: spec.containers: merging lists cannot yet be "
      "specified in the patch");
  EXPECT_EQ(
      ErrorOf(Pod(), live,
              R"({"spec":{"containers":[{"$patch":"bogus","name":"a"}]}})"),
      "strategic merge patch: spec.containers: unknown patch type "
      "\"bogus\" in list");
  EXPECT_EQ(ErrorOf(Pod(), live, R"({"spec":{"$retainKeys":"a"}})"),
            "strategic merge patch: spec: invalid patch format of retainKeys: "
            "not a list");
  EXPECT_EQ(ErrorOf(Pod(), live, R"({"spec":{"$retainKeys":["a"],"b":1}})"),
            "strategic merge patch: spec: patch content doesn't match "
            "retainKeys list: \"b\" is not retained");
  EXPECT_EQ(
      ErrorOf(Pod(), live, R"({"spec":{"$setElementOrder/containers":{}}})"),
      "strategic merge patch: spec: invalid patch format of setElementOrder "
      "list");
  EXPECT_EQ(
      ErrorOf(
          Pod(), live,
          R"({"spec":{"$setElementOrder/containers":[{"name":"a"},{"name":"b"}],"containers":[{"name":"b"},{"name":"a"}]}})"),
      "strategic merge patch: spec.containers: the order in the patch "
      "list doesn't match the $setElementOrder list");
  EXPECT_EQ(
      ErrorOf(Pod(), live,
              R"({"spec":{"$setElementOrder/containers":[{"image":"a"}]}})"),
      "strategic merge patch: spec.containers: a $setElementOrder element "
      "does not contain the declared merge key \"name\"");
  EXPECT_EQ(
      ErrorOf(Pod(), live,
              R"({"metadata":{"$deleteFromPrimitiveList/finalizers":"a"}})"),
      "strategic merge patch: metadata: invalid patch format of primitive "
      "list $deleteFromPrimitiveList/finalizers");
  EXPECT_EQ(ErrorOf(Pod(), live, R"({"spec":{"containers":[["a"]]}})"),
            "strategic merge patch: spec.containers: lists of lists are not "
            "supported");
  EXPECT_EQ(ErrorOf(Pod(), live, R"({"spec":{"containers":["a"]}})"),
            "strategic merge patch: spec.containers: list elements must be all "
            "objects or all scalars");
  EXPECT_EQ(ErrorOf(Pod(), R"({"metadata":{"finalizers":["a"]}})",
                    R"({"metadata":{"finalizers":[{"a":1}]}})"),
            "strategic merge patch: metadata.finalizers: list elements must be "
            "all objects or all scalars");
  EXPECT_EQ(ErrorOf(Pod(), R"({"metadata":{}})",
                    R"({"metadata":{"finalizers":[{"a":1}]}})"),
            "strategic merge patch: metadata.finalizers: cannot merge lists of "
            "objects without a merge key");
  EXPECT_EQ(ErrorOf(Pod(), live, "[1]"),
            "strategic merge patch: the patch must be a JSON object");
  EXPECT_EQ(ErrorOf(Pod(), "[]", "{}"),
            "strategic merge patch: the target must be a JSON object");
}

TEST(StrategicMergePatchTest, FailedPatchLeavesResultUnchanged) {
  rapidjson::Document out = Json(R"({"keep":1})");
  absl::Status s = ApplyStrategicMergePatch(
      Json(R"({"spec":{}})"), Json(R"({"spec":{"a":1,"$bad":2}})"), Pod(), &out,
      out.GetAllocator());
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(JsonEq(Json(R"({"keep":1})"), out));
}

TEST(StrategicMergePatchTest, DeepInputIsRefused) {
  rapidjson::Document deep;
  DeepArray(kMaxJsonDepth + 5, &deep);
  rapidjson::Document patch(rapidjson::kObjectType);
  patch.AddMember("x", rapidjson::Value(deep, patch.GetAllocator()),
                  patch.GetAllocator());
  absl::StatusOr<rapidjson::Document> got =
      ApplyStrategicMergePatch(Json("{}"), patch, Pod());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(StrategicMergePatchTest, TextForm) {
  absl::StatusOr<std::string> got =
      ApplyStrategicMergePatch(R"({"a":1})", R"({"b":2})", Pod());
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, R"({"a":1,"b":2})");
  EXPECT_EQ(
      ApplyStrategicMergePatch("{", "{}", Pod()).status().message(),
      "target: invalid JSON at offset 1: Missing a name for object member.");
  EXPECT_FALSE(ApplyStrategicMergePatch("{}", "{", Pod()).ok());
}

}  // namespace
}  // namespace api
}  // namespace kcr
