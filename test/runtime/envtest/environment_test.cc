#include "runtime/envtest/environment.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "api/errors/errors.h"
#include "api/meta/group_version.h"
#include "api/meta/rest_mapper.h"
#include "base/context.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/client/rest_client.h"

namespace kcr::envtest {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kWidgetCrd[] = R"(apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, listKind: WidgetList, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, minimum: 1}
)";

constexpr char kWidget[] = R"(apiVersion: example.com/v1
kind: Widget
metadata: {name: small, namespace: default}
spec: {size: 2}
)";

const client::Resource kWidgets =
    client::Resource::Namespaced({"example.com", "v1", "widgets"}, "default");

std::string WriteFile(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(
      std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
  return path;
}

std::string TestDir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(ReadManifestsTest, ReadsFilesAndDirectoriesInNameOrder) {
  const std::string dir = TestDir("read");
  WriteFile(dir + "/crd/b.yaml", "b");
  WriteFile(dir + "/crd/a.json", "a");
  WriteFile(dir + "/crd/c.yml", "c");
  WriteFile(dir + "/crd/notes.txt", "skipped");
  WriteFile(dir + "/crd/nested/d.yaml", "not recursive");
  WriteFile(dir + "/one.yaml", "one");

  auto manifests = ReadManifests({dir + "/one.yaml", dir + "/crd"});
  ASSERT_TRUE(manifests.ok()) << manifests.status();
  EXPECT_THAT(
      *manifests,
      ElementsAre(Field(&Manifest::text, "one"), Field(&Manifest::text, "a"),
                  Field(&Manifest::text, "b"), Field(&Manifest::text, "c")));
  EXPECT_EQ((*manifests)[1].path, dir + "/crd/a.json");
}

TEST(ReadManifestsTest, AMissingPathIsAnErrorNamingIt) {
  auto manifests = ReadManifests({"/no/such/config/crd"});
  EXPECT_TRUE(absl::IsNotFound(manifests.status()));
  EXPECT_THAT(manifests.status().message(),
              HasSubstr("/no/such/config/crd: no such file or directory"));
}

TEST(EnvironmentTest, InstallsCrdsThenObjectsAndServesThem) {
  auto env = Environment::Start(
      {.crds = {{"config/crd/widgets.yaml", kWidgetCrd}},
       .objects = {{"config/samples/widget.yaml", kWidget}}});
  ASSERT_TRUE(env.ok()) << env.status();

  // The object was created, through the CRD's schema.
  auto widget = (*env)->client().Get(Context::Background(), kWidgets, "small");
  ASSERT_TRUE(widget.ok()) << widget.status();
  EXPECT_EQ((*widget)->Find("/spec/size")->GetInt(), 2);

  // The kubeconfig and the client configuration point at the server.
  EXPECT_TRUE(std::filesystem::exists((*env)->kubeconfig()));
  EXPECT_EQ((*env)->rest_config().host, (*env)->url());
  auto config = client::BuildConfig({.explicit_path = (*env)->kubeconfig()});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->host, (*env)->url());

  // Another mapper (a Manager's) learns the CRD's kind.
  const api::GroupVersionKind kind{"example.com", "v1", "Widget"};
  EXPECT_TRUE((*env)->mapper().MappingFor(kind).ok());
  auto mapper = api::RESTMapper::NewDefault();
  EXPECT_FALSE(mapper->MappingFor(kind).ok());
  ASSERT_TRUE((*env)->MapCrds(*mapper).ok());
  auto mapping = mapper->MappingFor(kind);
  ASSERT_TRUE(mapping.ok()) << mapping.status();
  EXPECT_EQ(mapping->resource.resource, "widgets");

  // Creating what exists already leaves it as it is.
  EXPECT_TRUE((*env)
                  ->CreateObjects({{"again.yaml", R"(apiVersion: example.com/v1
kind: Widget
metadata: {name: small, namespace: default}
spec: {size: 9}
)"}}).ok());
  widget = (*env)->client().Get(Context::Background(), kWidgets, "small");
  ASSERT_TRUE(widget.ok()) << widget.status();
  EXPECT_EQ((*widget)->Find("/spec/size")->GetInt(), 2);

  const std::string kubeconfig = (*env)->kubeconfig();
  (*env)->Stop();
  (*env)->Stop();  // idempotent
  EXPECT_FALSE(std::filesystem::exists(kubeconfig));
}

// With RBAC: HTTPS and an admin token for the kubeconfig and the test's
// client; a ServiceAccount's configuration may do what its Role allows
// and is refused the rest with kube's 403.
TEST(EnvironmentTest, RbacGivesAdminAndServiceAccountConfigs) {
  auto env = Environment::Start({.objects = {{"rbac.yaml", R"(apiVersion: v1
kind: ServiceAccount
metadata: {name: robot, namespace: default}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: cm-reader, namespace: default}
rules:
- apiGroups: [""]
  resources: ["configmaps"]
  verbs: ["list"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: robot-reads, namespace: default}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: cm-reader}
subjects:
- {kind: ServiceAccount, name: robot, namespace: default}
)"}},
                                 .authorization_mode = "RBAC"});
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_THAT((*env)->url(), StartsWith("https://"));
  EXPECT_FALSE((*env)->rest_config().bearer_token.empty());
  auto from_file = client::BuildConfig({.explicit_path = (*env)->kubeconfig()});
  ASSERT_TRUE(from_file.ok()) << from_file.status();
  EXPECT_EQ(from_file->bearer_token, (*env)->rest_config().bearer_token);

  const client::Resource configmaps =
      client::Resource::Namespaced({"", "v1", "configmaps"}, "default");
  const client::Resource secrets =
      client::Resource::Namespaced({"", "v1", "secrets"}, "default");
  EXPECT_TRUE((*env)->client().List(Context::Background(), secrets, {}).ok());

  auto robot = (*env)->ServiceAccountConfig("default", "robot");
  ASSERT_TRUE(robot.ok()) << robot.status();
  EXPECT_EQ(robot->namespace_, "default");
  auto client = client::NewRestClient(*robot);
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_TRUE((*client)->List(Context::Background(), configmaps, {}).ok());
  auto refused = (*client)->List(Context::Background(), secrets, {});
  EXPECT_TRUE(api::IsForbidden(refused.status())) << refused.status();
  EXPECT_THAT(refused.status().message(),
              HasSubstr("User \"system:serviceaccount:default:robot\" "
                        "cannot list resource \"secrets\""));

  EXPECT_FALSE((*env)->ServiceAccountConfig("default", "nobody").ok());
  EXPECT_FALSE(Environment::Start({.authorization_mode = "Webhook"}).ok());
}

TEST(EnvironmentTest, AnInvalidObjectIsAnErrorNamingItsFile) {
  auto env = Environment::Start(
      {.crds = {{"config/crd/widgets.yaml", kWidgetCrd}},
       .objects = {{"config/samples/bad.yaml", R"(apiVersion: example.com/v1
kind: Widget
metadata: {name: tiny, namespace: default}
spec: {size: 0}
)"}}});
  ASSERT_FALSE(env.ok());
  EXPECT_THAT(env.status().message(),
              HasSubstr("creating config/samples/bad.yaml: Widget tiny: "));
  EXPECT_THAT(env.status().message(), HasSubstr("spec.size"));
}

TEST(EnvironmentTest, BadManifestsAreErrorsNamingTheFile) {
  auto env = Environment::Start({});
  ASSERT_TRUE(env.ok()) << env.status();

  absl::Status s = (*env)->InstallCrds({{"broken.yaml", "kind: [unclosed"}});
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("broken.yaml: "));

  s = (*env)->InstallCrds({{"not-a-crd.yaml", kWidget}});
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("not-a-crd.yaml: Widget small: not a "
                                     "CustomResourceDefinition"));

  // A kind nothing serves (its CRD was never installed).
  s = (*env)->CreateObjects({{"widget.yaml", kWidget}});
  EXPECT_TRUE(absl::IsNotFound(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("widget.yaml: Widget small: no resource "
                                     "serves example.com/v1, Kind=Widget"));

  // After its CRD, the same object is created.
  ASSERT_TRUE((*env)->InstallCrds({{"widgets.yaml", kWidgetCrd}}).ok());
  ASSERT_TRUE((*env)->CreateObjects({{"widget.yaml", kWidget}}).ok());
  EXPECT_TRUE(
      (*env)->client().Get(Context::Background(), kWidgets, "small").ok());
}

}  // namespace
}  // namespace kcr::envtest
