// Checks manifests/crds against the samples and the invalid examples with
// the same schema validation kube-apiserver applies, and checks the parts of
// each CRD that kubectl users see (names, short names, printer columns, the
// status subresource).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "api/json/json_util.h"
#include "api/json/yaml_to_json.h"
#include "api/meta/rest_mapper.h"
#include "api/schema/structural_schema.h"
#include "controllers/copyrator/copyrator_types.h"
#include "controllers/loadtest/loadtest_types.h"
#include "controllers/nginx/nginx_types.h"
#include "controllers/simpledeployment/simpledeployment_types.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "rapidjson/pointer.h"

namespace kcr {
namespace api {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::IsEmpty;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::unique_ptr<rapidjson::Document> LoadYaml(const std::string& path) {
  auto doc = json::YamlToJson(ReadFile(path));
  EXPECT_TRUE(doc.ok()) << path << ": " << doc.status();
  if (!doc.ok()) return std::make_unique<rapidjson::Document>();
  return std::move(*doc);
}

std::string Str(const rapidjson::Value& v) { return *json::JsonToString(v); }

const rapidjson::Value& At(const rapidjson::Value& root, const char* pointer) {
  const rapidjson::Value* v = rapidjson::Pointer(pointer).Get(root);
  static const rapidjson::Value kNull;
  EXPECT_NE(v, nullptr) << pointer;
  return v != nullptr ? *v : kNull;
}

struct Crd {
  std::string file;
  std::unique_ptr<rapidjson::Document> doc;
  std::unique_ptr<StructuralSchema> schema;
};

class CrdManifestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name :
         {"nginx", "copyrator_rule", "loadtest", "simpledeployment"}) {
      Crd crd;
      crd.file = std::string("manifests/crds/") + name + ".yaml";
      crd.doc = LoadYaml(crd.file);
      const rapidjson::Value& schema =
          At(*crd.doc, "/spec/versions/0/schema/openAPIV3Schema");
      auto s = StructuralSchema::Create(schema);
      ASSERT_TRUE(s.ok()) << crd.file << ": " << s.status();
      crd.schema = std::move(*s);
      std::string kind = At(*crd.doc, "/spec/names/kind").GetString();
      crds_[kind] = std::move(crd);
    }
  }

  const Crd& ForKind(const std::string& kind) { return crds_.at(kind); }

  std::map<std::string, Crd> crds_;
};

TEST_F(CrdManifestTest, NamesScopeAndVersions) {
  struct Want {
    const char* kind;
    const char* name;
    const char* group;
    const char* plural;
    const char* singular;
    std::vector<std::string> short_names;
  };
  std::vector<Want> wants = {
      {"Nginx",
       "nginxes.example.org",
       "example.org",
       "nginxes",
       "nginx",
       {"ngx"}},
      {"CopyratorRule",
       "copyrators.flant.com",
       "flant.com",
       "copyrators",
       "copyrator",
       {"copyr"}},
      {"LoadTest",
       "loadtests.example.org",
       "example.org",
       "loadtests",
       "loadtest",
       {"lt", "ld"}},
      {"SimpleDeployment",
       "simpledeployments.example.org",
       "example.org",
       "simpledeployments",
       "simpledeployment",
       {"simdep", "sd"}},
  };
  for (const Want& w : wants) {
    const rapidjson::Document& d = *ForKind(w.kind).doc;
    EXPECT_EQ(Str(At(d, "/apiVersion")), "\"apiextensions.k8s.io/v1\"");
    EXPECT_EQ(Str(At(d, "/kind")), "\"CustomResourceDefinition\"");
    EXPECT_STREQ(At(d, "/metadata/name").GetString(), w.name);
    EXPECT_STREQ(At(d, "/spec/group").GetString(), w.group);
    EXPECT_STREQ(At(d, "/spec/names/plural").GetString(), w.plural);
    EXPECT_STREQ(At(d, "/spec/names/singular").GetString(), w.singular);
    EXPECT_STREQ(At(d, "/spec/scope").GetString(), "Namespaced");
    std::vector<std::string> short_names;
    for (const auto& s : At(d, "/spec/names/shortNames").GetArray()) {
      short_names.push_back(s.GetString());
    }
    EXPECT_EQ(short_names, w.short_names) << w.kind;
    // The CRD name must be <plural>.<group>, or the API server rejects it.
    EXPECT_EQ(std::string(w.plural) + "." + w.group, w.name);
    const rapidjson::Value& versions = At(d, "/spec/versions");
    ASSERT_EQ(versions.Size(), 1u);
    EXPECT_STREQ(versions[0]["name"].GetString(), "v1");
    EXPECT_TRUE(versions[0]["served"].GetBool());
    EXPECT_TRUE(versions[0]["storage"].GetBool());
    EXPECT_EQ(Str(At(d, "/spec/versions/0/subresources")), R"({"status":{}})")
        << w.kind;
  }
}

std::vector<std::string> Columns(const rapidjson::Document& d) {
  std::vector<std::string> out;
  for (const auto& c :
       At(d, "/spec/versions/0/additionalPrinterColumns").GetArray()) {
    out.push_back(std::string(c["name"].GetString()) + " " +
                  c["type"].GetString() + " " + c["jsonPath"].GetString());
  }
  return out;
}

TEST_F(CrdManifestTest, PrinterColumns) {
  EXPECT_THAT(Columns(*ForKind("Nginx").doc),
              ElementsAre("Replicas integer .spec.replicas",
                          "Ready integer .status.readyReplicas",
                          "Age date .metadata.creationTimestamp"));
  EXPECT_THAT(Columns(*ForKind("CopyratorRule").doc),
              ElementsAre("Type string .ruleType", "Source string .namespace",
                          "Age date .metadata.creationTimestamp"));
  EXPECT_THAT(Columns(*ForKind("LoadTest").doc),
              ElementsAre("State string .status.state",
                          "Children string .status.children",
                          "Age date .metadata.creationTimestamp"));
  // The create handler's result is kept under its id, as kopf keeps it.
  EXPECT_THAT(Columns(*ForKind("SimpleDeployment").doc),
              ElementsAre("Sleepytime string .spec.sleepytime",
                          "Children string .status.create_fn.children",
                          "Age date .metadata.creationTimestamp"));
}

// Structural schema rule: every node states a type, unless it is
// int-or-string or preserves unknown fields.
void ExpectStructural(const rapidjson::Value& s, const std::string& path) {
  bool exempt = (s.HasMember("x-kubernetes-int-or-string") &&
                 s["x-kubernetes-int-or-string"].GetBool()) ||
                (s.HasMember("x-kubernetes-preserve-unknown-fields") &&
                 s["x-kubernetes-preserve-unknown-fields"].GetBool());
  EXPECT_TRUE(exempt || s.HasMember("type")) << path << " has no type";
  if (s.HasMember("properties")) {
    for (const auto& m : s["properties"].GetObject()) {
      ExpectStructural(m.value, path + ".properties." + m.name.GetString());
    }
  }
  if (s.HasMember("items")) ExpectStructural(s["items"], path + ".items");
  if (s.HasMember("additionalProperties") &&
      s["additionalProperties"].IsObject()) {
    ExpectStructural(s["additionalProperties"], path + ".additionalProperties");
  }
}

TEST_F(CrdManifestTest, SchemasAreStructural) {
  for (const auto& [kind, crd] : crds_) {
    ExpectStructural(At(*crd.doc, "/spec/versions/0/schema/openAPIV3Schema"),
                     kind);
  }
}

TEST_F(CrdManifestTest, RestMapperLearnsEachCrd) {
  auto mapper = RESTMapper::NewDefault();
  for (const auto& [kind, crd] : crds_) {
    ASSERT_TRUE(mapper->AddFromCRD(*crd.doc).ok()) << kind;
  }
  EXPECT_EQ(mapper->Resolve("ngx")->resource,
            GroupVersionResource("example.org", "v1", "nginxes"));
  EXPECT_EQ(mapper->Resolve("copyr")->kind,
            GroupVersionKind("flant.com", "v1", "CopyratorRule"));
  EXPECT_EQ(mapper->Resolve("ld")->resource.resource, "loadtests");
  EXPECT_TRUE(mapper->Resolve("lt")->HasSubresource("status"));
  EXPECT_EQ(mapper->Resolve("simdep")->kind,
            GroupVersionKind("example.org", "v1", "SimpleDeployment"));
  EXPECT_EQ(mapper->Resolve("sd")->resource.resource, "simpledeployments");
  EXPECT_TRUE(mapper->Resolve("sd")->HasSubresource("status"));
}

TEST_F(CrdManifestTest, KustomizationListsTheCrds) {
  auto k = LoadYaml("manifests/crds/kustomization.yaml");
  EXPECT_EQ(Str(At(*k, "/resources")),
            R"(["nginx.yaml","copyrator_rule.yaml","loadtest.yaml",)"
            R"("simpledeployment.yaml"])");
}

std::unique_ptr<rapidjson::Document> AdmitSample(const Crd& crd,
                                                 const std::string& file) {
  auto doc = LoadYaml(file);
  EXPECT_THAT(ToStrings(crd.schema->Admit(doc.get(), doc->GetAllocator())),
              IsEmpty())
      << file;
  return doc;
}

TEST_F(CrdManifestTest, SamplesAreAcceptedAndDefaulted) {
  auto nginx = AdmitSample(ForKind("Nginx"), "manifests/samples/nginx.yaml");
  EXPECT_EQ(Str(At(*nginx, "/spec")),
            R"({"replicas":2,"image":"nginx:1.7.9","port":80})");

  auto lt = AdmitSample(ForKind("LoadTest"), "manifests/samples/loadtest.yaml");
  EXPECT_EQ(Str(At(*lt, "/spec/test/servicePort")), R"("http")");

  // The tutorial's CopyratorRule survives pruning and defaulting unchanged.
  auto rule = AdmitSample(ForKind("CopyratorRule"),
                          "manifests/samples/copyrator_rule.yaml");
  EXPECT_EQ(Str(*rule),
            R"({"apiVersion":"flant.com/v1","kind":"CopyratorRule",)"
            R"("metadata":{"name":"main-rule"},"ruleType":"configmap",)"
            R"("selector":{"copyrator":"true"},"namespace":"default"})");
}

TEST_F(CrdManifestTest, SimpleDeploymentTakesSleepytimeAsANumberOrDigits) {
  // The tutorial's sample writes the number as a string; it is kept so.
  auto sd = AdmitSample(ForKind("SimpleDeployment"),
                        "manifests/samples/simpledeployment.yaml");
  EXPECT_EQ(Str(At(*sd, "/spec")), R"({"sleepytime":"120"})");
  EXPECT_EQ(Str(At(*sd, "/metadata/labels")), R"({"app":"simple-app"})");
  EXPECT_EQ(Str(At(*sd, "/metadata/name")), R"("example-01")");
  const Crd& crd = ForKind("SimpleDeployment");
  for (const char* spec : {"{sleepytime: 30}", "{sleepytime: '0'}", "{}"}) {
    auto doc = json::YamlToJson(
        std::string("apiVersion: example.org/v1\nkind: SimpleDeployment\n"
                    "metadata: {name: s}\nspec: ") +
        spec + "\n");
    ASSERT_TRUE(doc.ok());
    EXPECT_THAT(
        ToStrings(crd.schema->Admit(doc->get(), (*doc)->GetAllocator())),
        IsEmpty())
        << spec;
  }
  // Whatever the handlers write under status is kept.
  auto doc = json::YamlToJson(
      "apiVersion: example.org/v1\nkind: SimpleDeployment\n"
      "metadata: {name: s}\nstatus: {create_fn: {children: [u1]}, "
      "other: {x: 1}}\n");
  ASSERT_TRUE(doc.ok());
  EXPECT_THAT(crd.schema->Admit(doc->get(), (*doc)->GetAllocator()), IsEmpty());
  EXPECT_EQ(Str(At(**doc, "/status")),
            R"({"create_fn":{"children":["u1"]},"other":{"x":1}})");
}

TEST_F(CrdManifestTest, MinimalLoadTestGetsTestDefaults) {
  auto doc = json::YamlToJson(
      "apiVersion: example.org/v1\nkind: LoadTest\nmetadata: {name: m}\n"
      "spec: {replicas: 1, test: {serviceName: s}}\n");
  ASSERT_TRUE(doc.ok());
  const Crd& crd = ForKind("LoadTest");
  EXPECT_THAT(crd.schema->Admit(doc->get(), (*doc)->GetAllocator()), IsEmpty());
  EXPECT_EQ(
      Str(At(**doc, "/spec/test")),
      R"({"serviceName":"s","method":"GET","servicePort":80,"path":"/"})");
}

TEST_F(CrdManifestTest, CopyratorAcceptsBothSelectorAndNamespaceForms) {
  auto doc = json::YamlToJson(
      "apiVersion: flant.com/v1\nkind: CopyratorRule\nmetadata: {name: r}\n"
      "ruleType: secret\nselector: 'app in (a,b)'\n"
      "namespace: [default, other]\n");
  ASSERT_TRUE(doc.ok());
  EXPECT_THAT(ForKind("CopyratorRule")
                  .schema->Admit(doc->get(), (*doc)->GetAllocator()),
              IsEmpty());
  EXPECT_EQ(Str(At(**doc, "/namespace")), R"(["default","other"])");
}

TEST_F(CrdManifestTest, InvalidExamplesAreRejected) {
  int checked = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator("manifests/testdata/invalid")) {
    std::string path = entry.path().string();
    if (!absl::EndsWith(path, ".yaml")) continue;
    std::string text = ReadFile(path);
    std::vector<std::string> want;
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      if (absl::ConsumePrefix(&line, "# expect: ")) {
        want.emplace_back(line);
      }
    }
    ASSERT_FALSE(want.empty()) << path << " has no # expect: lines";
    auto doc = json::YamlToJson(text);
    ASSERT_TRUE(doc.ok()) << path << ": " << doc.status();
    std::string kind = At(**doc, "/kind").GetString();
    ASSERT_EQ(crds_.count(kind), 1u) << path;
    auto errors = ToStrings(
        ForKind(kind).schema->Admit(doc->get(), (*doc)->GetAllocator()));
    EXPECT_THAT(errors, ElementsAreArray(want)) << path;
    ++checked;
  }
  EXPECT_GE(checked, 15);
}

// What the C++ types say about a document: FromJson's error, or the
// violations after ApplyDefaults, and the defaulted JSON.
template <typename T>
absl::StatusOr<std::pair<std::vector<std::string>, std::string>> Typed(
    const rapidjson::Value& json) {
  absl::StatusOr<T> t = T::FromJson(json);
  if (!t.ok()) return t.status();
  t->ApplyDefaults();
  return std::make_pair(t->Validate(), Str(t->ToJson()));
}

absl::StatusOr<std::pair<std::vector<std::string>, std::string>> TypedByKind(
    const rapidjson::Value& json) {
  std::string kind = At(json, "/kind").GetString();
  if (kind == "Nginx") return Typed<nginx::Nginx>(json);
  if (kind == "CopyratorRule") return Typed<copyrator::CopyratorRule>(json);
  if (kind == "SimpleDeployment") {
    return Typed<simpledeployment::SimpleDeployment>(json);
  }
  return Typed<loadtest::LoadTest>(json);
}

// The C++ types and the CRD files agree: same defaults on the samples, and
// the same messages on the invalid examples (except where the schema can
// only say "wrong type", which FromJson reports as an error). The types
// validate with the compiled-in copy of these files, so this also checks
// that what kubectl installs is what the controllers were built with.
TEST_F(CrdManifestTest, TypesAgreeWithSchemas) {
  for (const char* name :
       {"nginx", "copyrator_rule", "loadtest", "simpledeployment"}) {
    std::string path = std::string("manifests/samples/") + name + ".yaml";
    auto doc = LoadYaml(path);
    auto typed = TypedByKind(*doc);
    ASSERT_TRUE(typed.ok()) << path << ": " << typed.status();
    EXPECT_THAT(typed->first, IsEmpty()) << path;
    const Crd& crd = ForKind(At(*doc, "/kind").GetString());
    crd.schema->Admit(doc.get(), doc->GetAllocator());
    auto reparsed = json::YamlToJson(typed->second);
    ASSERT_TRUE(reparsed.ok());
    EXPECT_TRUE(json::JsonDeepEqual(**reparsed, *doc))
        << path << ": " << typed->second << " vs " << Str(*doc);
  }
  for (const auto& entry :
       std::filesystem::directory_iterator("manifests/testdata/invalid")) {
    std::string path = entry.path().string();
    std::string text = ReadFile(path);
    std::vector<std::string> want;
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      if (absl::ConsumePrefix(&line, "# expect: ")) want.emplace_back(line);
    }
    auto doc = json::YamlToJson(text);
    ASSERT_TRUE(doc.ok());
    auto typed = TypedByKind(**doc);
    if (!typed.ok()) {
      EXPECT_TRUE(std::any_of(want.begin(), want.end(),
                              [](const std::string& w) {
                                return absl::StrContains(w, "must be of type");
                              }))
          << path << ": " << typed.status();
      continue;
    }
    EXPECT_THAT(typed->first, ElementsAreArray(want)) << path;
  }
}

}  // namespace
}  // namespace api
}  // namespace kcr
