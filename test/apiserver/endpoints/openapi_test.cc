// The OpenAPI document builders: what kubectl reads from them (the kind's
// schema by x-kubernetes-group-version-kind, fieldValidation on PATCH, the
// patch media types) and that every reference resolves.
#include "apiserver/endpoints/openapi.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "api/json/json_util.h"
#include "apiserver/endpoints/openapi_kinds.h"
#include "apiserver/endpoints/openapi_v2.h"
#include "apiserver/endpoints/openapi_v3.h"
#include "apiserver/registry/resources.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "rapidjson/pointer.h"

namespace kcr {
namespace apiserver {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kWidgetCrd[] = R"({
  "apiVersion": "apiextensions.k8s.io/v1",
  "kind": "CustomResourceDefinition",
  "metadata": {"name": "widgets.example.com"},
  "spec": {
    "group": "example.com",
    "scope": "Namespaced",
    "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
    "versions": [
      {"name": "v1", "served": true, "storage": true,
       "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}},
       "schema": {"openAPIV3Schema": {
         "type": "object",
         "description": "A Widget makes widgets.",
         "properties": {
           "spec": {"type": "object", "description": "What to make.",
             "properties": {
               "replicas": {"type": "integer", "description": "How many.", "nullable": true},
               "port": {"x-kubernetes-int-or-string": true,
                        "anyOf": [{"type": "integer"}, {"type": "string"}]}}},
           "status": {"type": "object"}}}}},
      {"name": "v2", "served": false, "storage": false,
       "schema": {"openAPIV3Schema": {"type": "object"}}},
      {"name": "v1beta1", "served": true, "storage": false,
       "schema": {"openAPIV3Schema": {"type": "object"}}}
    ]
  }
})";

constexpr char kClusterCrd[] = R"({
  "metadata": {"name": "gadgets.tools.example.com"},
  "spec": {
    "group": "tools.example.com",
    "scope": "Cluster",
    "names": {"plural": "gadgets", "kind": "Gadget", "listKind": "GadgetCollection"},
    "versions": [{"name": "v1alpha1", "served": true, "storage": true,
                  "schema": {"openAPIV3Schema": {"type": "object"}}}]
  }
})";

rapidjson::Document Parse(const std::string& text) {
  rapidjson::Document doc;
  absl::Status s = json::ParseJson(text, &doc);
  EXPECT_TRUE(s.ok()) << s;
  return doc;
}

const rapidjson::Value* At(const rapidjson::Value& root, const char* pointer) {
  return rapidjson::Pointer(pointer).Get(root);
}

// Every "$ref" under `v`.
void Refs(const rapidjson::Value& v, std::vector<std::string>* out) {
  if (v.IsObject()) {
    for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
      // A property may be named $ref (JSONSchemaProps has one).
      if (std::string(it->name.GetString()) == "$ref" && it->value.IsString()) {
        out->push_back(it->value.GetString());
      } else {
        Refs(it->value, out);
      }
    }
  } else if (v.IsArray()) {
    for (const auto& e : v.GetArray()) Refs(e, out);
  }
}

// Names of the query parameters of an operation.
std::vector<std::string> ParameterNames(const rapidjson::Value& op) {
  std::vector<std::string> names;
  auto it = op.FindMember("parameters");
  if (it == op.MemberEnd()) return names;
  for (const auto& p : it->value.GetArray()) {
    names.push_back(p["name"].GetString());
  }
  return names;
}

class OpenApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    widget_ = Parse(kWidgetCrd);
    cluster_ = Parse(kClusterCrd);
    apis_ = CustomResourceKinds(widget_);
    for (OpenApiKind& api : CustomResourceKinds(cluster_)) {
      apis_.push_back(api);
    }
  }

  rapidjson::Document widget_;
  rapidjson::Document cluster_;
  std::vector<OpenApiKind> apis_;
};

TEST_F(OpenApiTest, ServedVersionsOnly) {
  std::vector<OpenApiKind> w = CustomResourceKinds(widget_);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].version, "v1");
  EXPECT_EQ(w[0].list_kind, "WidgetList");
  EXPECT_TRUE(w[0].namespaced);
  EXPECT_TRUE(w[0].has_status);
  EXPECT_TRUE(w[0].has_scale);
  ASSERT_NE(w[0].schema, nullptr);
  EXPECT_EQ(w[1].version, "v1beta1");
  EXPECT_FALSE(w[1].has_status);
  std::vector<OpenApiKind> c = CustomResourceKinds(cluster_);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_FALSE(c[0].namespaced);
  EXPECT_EQ(c[0].list_kind, "GadgetCollection");
  EXPECT_TRUE(CustomResourceKinds(Parse(R"({"spec":{}})")).empty());
  EXPECT_TRUE(CustomResourceKinds(Parse("[]")).empty());
}

TEST_F(OpenApiTest, OneDocumentPerGroupVersion) {
  auto docs = BuildOpenApiV3Documents(apis_);
  std::vector<std::string> keys;
  for (const auto& [gv, doc] : docs) keys.push_back(gv);
  EXPECT_THAT(keys,
              ElementsAre("apis/example.com/v1", "apis/example.com/v1beta1",
                          "apis/tools.example.com/v1alpha1"));
}

TEST_F(OpenApiTest, KindSchemaFromTheCrd) {
  auto docs = BuildOpenApiV3Documents(apis_);
  rapidjson::Document doc = Parse(docs["apis/example.com/v1"]);
  EXPECT_EQ(std::string(At(doc, "/openapi")->GetString()), "3.0.0");
  const rapidjson::Value* widget =
      At(doc, "/components/schemas/com.example.v1.Widget");
  ASSERT_NE(widget, nullptr);
  EXPECT_EQ(std::string((*widget)["description"].GetString()),
            "A Widget makes widgets.");
  EXPECT_EQ(std::string(At(*widget,
                           "/properties/spec/properties/replicas/"
                           "description")
                            ->GetString()),
            "How many.");
  EXPECT_EQ(
      std::string(
          At(*widget, "/x-kubernetes-group-version-kind/0/kind")->GetString()),
      "Widget");
  EXPECT_EQ(
      std::string(
          At(*widget, "/x-kubernetes-group-version-kind/0/group")->GetString()),
      "example.com");
  EXPECT_EQ(
      std::string(At(*widget, "/properties/apiVersion/type")->GetString()),
      "string");
  EXPECT_EQ(std::string(At(*widget, "/properties/kind/type")->GetString()),
            "string");
  EXPECT_EQ(std::string(
                At(*widget, "/properties/metadata/allOf/0/$ref")->GetString()),
            "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1."
            "ObjectMeta");
  const rapidjson::Value* list =
      At(doc, "/components/schemas/com.example.v1.WidgetList");
  ASSERT_NE(list, nullptr);
  EXPECT_EQ(std::string(At(*list, "/properties/items/items/$ref")->GetString()),
            "#/components/schemas/com.example.v1.Widget");
  EXPECT_EQ(
      std::string(
          At(*list, "/x-kubernetes-group-version-kind/0/kind")->GetString()),
      "WidgetList");
}

TEST_F(OpenApiTest, EveryReferenceResolves) {
  for (const auto& [gv, text] : BuildOpenApiV3Documents(apis_)) {
    rapidjson::Document doc = Parse(text);
    std::vector<std::string> refs;
    Refs(doc, &refs);
    EXPECT_FALSE(refs.empty()) << gv;
    for (const std::string& ref : refs) {
      ASSERT_THAT(ref, ::testing::StartsWith("#/components/schemas/"));
      EXPECT_NE(rapidjson::Pointer(ref.substr(1).c_str()).Get(doc), nullptr)
          << gv << " " << ref;
    }
  }
}

TEST_F(OpenApiTest, PatchListsFieldValidationAndNoStrategicMerge) {
  auto docs = BuildOpenApiV3Documents(apis_);
  rapidjson::Document doc = Parse(docs["apis/example.com/v1"]);
  const rapidjson::Value& paths = doc["paths"];
  std::set<std::string> names;
  for (auto it = paths.MemberBegin(); it != paths.MemberEnd(); ++it) {
    names.insert(it->name.GetString());
  }
  EXPECT_THAT(names,
              ElementsAre("/apis/example.com/v1/namespaces/{namespace}/widgets",
                          "/apis/example.com/v1/namespaces/{namespace}/widgets/"
                          "{name}",
                          "/apis/example.com/v1/namespaces/{namespace}/widgets/"
                          "{name}/scale",
                          "/apis/example.com/v1/namespaces/{namespace}/widgets/"
                          "{name}/status",
                          "/apis/example.com/v1/widgets"));
  const rapidjson::Value& object =
      paths["/apis/example.com/v1/namespaces/{namespace}/widgets/{name}"];
  const rapidjson::Value& patch = object["patch"];
  EXPECT_THAT(ParameterNames(patch), ElementsAre("dryRun", "fieldManager",
                                                 "fieldValidation", "force"));
  // kubectl matches a PATCH operation by a single group-version-kind map.
  EXPECT_EQ(
      std::string(
          At(patch, "/x-kubernetes-group-version-kind/kind")->GetString()),
      "Widget");
  EXPECT_EQ(std::string(patch["x-kubernetes-action"].GetString()), "patch");
  const rapidjson::Value& content = patch["requestBody"]["content"];
  EXPECT_TRUE(content.HasMember("application/merge-patch+json"));
  EXPECT_TRUE(content.HasMember("application/json-patch+json"));
  EXPECT_TRUE(content.HasMember("application/apply-patch+yaml"));
  // Custom resources take no strategic merge patch: kubectl must fall back
  // to a JSON merge patch, as against kube-apiserver.
  EXPECT_FALSE(content.HasMember("application/strategic-merge-patch+json"));
  EXPECT_THAT(ParameterNames(object["put"]),
              ElementsAre("dryRun", "fieldManager", "fieldValidation"));
  EXPECT_EQ(std::string(object["get"]["operationId"].GetString()),
            "readExampleComV1NamespacedWidget");
  // Every PATCH of the kind (the status one too) lists fieldValidation.
  const rapidjson::Value& status = paths
      ["/apis/example.com/v1/namespaces/{namespace}/widgets/{name}/status"];
  EXPECT_THAT(ParameterNames(status["patch"]),
              ::testing::Contains("fieldValidation"));
  const rapidjson::Value& scale =
      paths["/apis/example.com/v1/namespaces/{namespace}/widgets/{name}/scale"];
  EXPECT_EQ(std::string(At(scale["patch"],
                           "/x-kubernetes-group-version-kind/"
                           "group")
                            ->GetString()),
            "autoscaling");
  EXPECT_THAT(ParameterNames(paths["/apis/example.com/v1/namespaces/"
                                   "{namespace}/widgets"]["get"]),
              ::testing::Contains("watch"));
}

// kube-apiserver 1.37 advertises shardSelector (KEP-5866) on every list,
// watch and deletecollection: clients look for it to learn that the server
// shards. A sharded list's metadata.shardInfo has its schema.
TEST_F(OpenApiTest, ListsAdvertiseShardSelector) {
  auto docs = BuildOpenApiV3Documents(apis_);
  rapidjson::Document doc = Parse(docs["apis/example.com/v1"]);
  const rapidjson::Value& collection =
      doc["paths"]["/apis/example.com/v1/namespaces/{namespace}/widgets"];
  EXPECT_THAT(ParameterNames(collection["get"]),
              ::testing::Contains("shardSelector"));
  EXPECT_THAT(ParameterNames(collection["delete"]),
              ::testing::Contains("shardSelector"));
  EXPECT_THAT(
      ParameterNames(doc["paths"]["/apis/example.com/v1/widgets"]["get"]),
      ::testing::Contains("shardSelector"));
  const rapidjson::Value* info =
      At(doc,
         "/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta/"
         "properties/shardInfo");
  ASSERT_NE(info, nullptr);
  EXPECT_NE(At(doc,
               "/components/schemas/"
               "io.k8s.apimachinery.pkg.apis.meta.v1.ShardInfo/properties/"
               "selector"),
            nullptr);
}

TEST_F(OpenApiTest, ClusterScopedPaths) {
  auto docs = BuildOpenApiV3Documents(apis_);
  rapidjson::Document doc = Parse(docs["apis/tools.example.com/v1alpha1"]);
  EXPECT_TRUE(
      doc["paths"].HasMember("/apis/tools.example.com/v1alpha1/gadgets"));
  EXPECT_TRUE(doc["paths"].HasMember(
      "/apis/tools.example.com/v1alpha1/gadgets/{name}"));
  EXPECT_THAT(docs["apis/tools.example.com/v1alpha1"],
              Not(HasSubstr("namespaces")));
  EXPECT_NE(At(doc,
               "/components/schemas/com.example.tools.v1alpha1."
               "GadgetCollection"),
            nullptr);
}

TEST_F(OpenApiTest, SwaggerV2Definitions) {
  rapidjson::Document doc = Parse(BuildSwaggerV2Document(apis_, "v1.32.4"));
  EXPECT_EQ(std::string(doc["swagger"].GetString()), "2.0");
  EXPECT_EQ(std::string(At(doc, "/info/version")->GetString()), "v1.32.4");
  const rapidjson::Value* widget =
      At(doc, "/definitions/com.example.v1.Widget");
  ASSERT_NE(widget, nullptr);
  EXPECT_EQ(
      std::string(
          At(*widget, "/x-kubernetes-group-version-kind/0/kind")->GetString()),
      "Widget");
  EXPECT_EQ(std::string(At(*widget, "/properties/metadata/$ref")->GetString()),
            "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta");
  const std::string text = BuildSwaggerV2Document(apis_, "v1.32.4");
  EXPECT_THAT(text, Not(HasSubstr("nullable")));
  EXPECT_THAT(text, Not(HasSubstr("anyOf")));
  EXPECT_THAT(text, Not(HasSubstr("#/components/")));
  std::vector<std::string> refs;
  Refs(doc, &refs);
  for (const std::string& ref : refs) {
    EXPECT_NE(rapidjson::Pointer(ref.substr(1).c_str()).Get(doc), nullptr)
        << ref;
  }
}

TEST(OpenApiBuiltinTest, GoTypesOfTheBuiltinKinds) {
  ResourceRegistry resources;
  std::vector<OpenApiKind> kinds = BuiltinKinds(resources);
  auto pod = std::find_if(kinds.begin(), kinds.end(), [](const OpenApiKind& k) {
    return k.group.empty() && k.kind == "Pod";
  });
  ASSERT_NE(pod, kinds.end());
  EXPECT_TRUE(pod->builtin);
  EXPECT_EQ(pod->plural, "pods");
  EXPECT_TRUE(pod->has_status);
  ASSERT_NE(pod->schema, nullptr);
  // Other structs by reference to their definitions, as kube writes them.
  ASSERT_NE(At(*pod->schema, "/properties/spec/allOf/0/$ref"), nullptr);
  EXPECT_EQ(std::string(
                At(*pod->schema, "/properties/spec/allOf/0/$ref")->GetString()),
            "#/components/schemas/io.k8s.api.core.v1.PodSpec");

  auto docs = BuildOpenApiV3Documents(kinds);
  ASSERT_EQ(docs.count("api/v1"), 1u);
  ASSERT_EQ(docs.count("apis/apps/v1"), 1u);
  rapidjson::Document core = Parse(docs["api/v1"]);
  EXPECT_EQ(std::string(At(core, "/info/title")->GetString()), "Kubernetes");
  const rapidjson::Value* schema =
      At(core, "/components/schemas/io.k8s.api.core.v1.Pod");
  ASSERT_NE(schema, nullptr);
  EXPECT_EQ(
      std::string(
          At(*schema, "/x-kubernetes-group-version-kind/0/group")->GetString()),
      "");
  const rapidjson::Value* patch =
      At(core, "/paths/~1api~1v1~1namespaces~1{namespace}~1pods~1{name}/patch");
  ASSERT_NE(patch, nullptr);
  EXPECT_EQ(std::string((*patch)["operationId"].GetString()),
            "patchCoreV1NamespacedPod");
  EXPECT_THAT(ParameterNames(*patch), ::testing::Contains("fieldValidation"));
  // No strategic merge patch: kubectl keeps computing it from its
  // compiled-in types, which know the merge keys these schemas lack.
  EXPECT_FALSE(At(*patch, "/requestBody/content")
                   ->HasMember("application/strategic-merge-patch+json"));
  EXPECT_NE(At(core, "/paths/~1api~1v1~1namespaces/get"), nullptr);
  for (const auto& [gv, text] : docs) {
    rapidjson::Document doc = Parse(text);
    std::vector<std::string> refs;
    Refs(doc, &refs);
    for (const std::string& ref : refs) {
      EXPECT_NE(rapidjson::Pointer(ref.substr(1).c_str()).Get(doc), nullptr)
          << gv << " " << ref;
    }
  }
  EXPECT_THAT(docs["apis/apps/v1"],
              HasSubstr(R"("operationId":"readAppsV1NamespacedDeployment")"));
  EXPECT_THAT(docs["apis/apps/v1"], HasSubstr("io.k8s.api.apps.v1.Deployment"));
  // The definitions referred to, with kube's field types, required fields
  // and descriptions.
  const rapidjson::Value* container =
      At(core, "/components/schemas/io.k8s.api.core.v1.Container");
  ASSERT_NE(container, nullptr);
  EXPECT_EQ(std::string(At(*container, "/properties/image/type")->GetString()),
            "string");
  EXPECT_THAT(At(*container, "/properties/image/description")->GetString(),
              HasSubstr("Container image name."));
  EXPECT_EQ(std::string(At(*container, "/required/0")->GetString()), "name");
  rapidjson::Document apps = Parse(docs["apis/apps/v1"]);
  EXPECT_EQ(std::string(At(apps,
                           "/components/schemas/io.k8s.api.apps.v1."
                           "DeploymentSpec/properties/replicas/format")
                            ->GetString()),
            "int32");
  EXPECT_EQ(std::string(At(apps,
                           "/components/schemas/io.k8s.api.core.v1."
                           "ResourceRequirements/properties/limits/"
                           "additionalProperties/$ref")
                            ->GetString()),
            "#/components/schemas/io.k8s.apimachinery.pkg.api.resource."
            "Quantity");
}

TEST(OpenApiHashTest, UpperCaseHexSha512) {
  EXPECT_EQ(OpenApiHash(""),
            "CF83E1357EEFB8BDF1542850D66D8007D620E4050B5715DC83F4A921D36CE9CE"
            "47D0D13C5D85F2B0FF8318D2877EEC2F63B931BD47417A81A538327AF927DA3E");
  EXPECT_NE(OpenApiHash("a"), OpenApiHash("b"));
}

TEST(OpenApiIndexTest, ServerRelativeUrlsWithHashes) {
  EXPECT_EQ(OpenApiV3IndexJson({{"apis/example.com/v1", "AB12"}}),
            R"({"paths":{"apis/example.com/v1":{"serverRelativeURL":)"
            R"("/openapi/v3/apis/example.com/v1?hash=AB12"}}})");
  EXPECT_EQ(OpenApiV3IndexJson({}), R"({"paths":{}})");
}

}  // namespace
}  // namespace apiserver
}  // namespace kcr
