// The built-in kinds' strategies, through the registry as requests reach
// them.
#include "apiserver/registry/core_strategy.h"

#include <string>

#include "absl/strings/match.h"
#include "api/errors/errors.h"
#include "api/object_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/apiserver/registry_fixture.h"

namespace kcr::apiserver {
namespace {

using ::testing::HasSubstr;

class CoreStrategyTest : public RegistryFixture {
 protected:
  CoreStrategyTest() : secrets_(Resource("", "v1", "secrets")) {}

  ResourceInfoPtr secrets_;
};

// SetDefaults_PodSpec and SetDefaults_Container, in place: what is absent
// is added at the end, what is set is kept, the deprecated serviceAccount
// mirrors serviceAccountName, and entries that are not objects are left.
TEST(DefaultPodSpecTest, FillsWhatIsAbsentAndKeepsWhatIsSet) {
  api::ObjectBuilder b = *api::ObjectBuilder::FromJson(
      R"({"spec":{"template":{"spec":{"serviceAccount":"robot",)"
      R"("restartPolicy":"Never","containers":[)"
      R"({"name":"a","image":"nginx","ports":[{"containerPort":80},7]},)"
      R"({"name":"b","image":"nginx:1.7.9","imagePullPolicy":"Never",)"
      R"("resources":{"limits":{"cpu":"1"}},"ports":[{"protocol":"UDP"}]},)"
      R"("junk"],"initContainers":[{"name":"i","image":"busybox:latest"}]}}}})");
  DefaultPodSpec(&b, "/spec/template/spec");
  EXPECT_EQ(
      b.ToJson(),
      R"({"spec":{"template":{"spec":{"serviceAccount":"robot",)"
      R"("restartPolicy":"Never","containers":[)"
      R"({"name":"a","image":"nginx","ports":[{"containerPort":80,"protocol":"TCP"},7],)"
      R"("terminationMessagePath":"/dev/termination-log",)"
      R"("terminationMessagePolicy":"File","imagePullPolicy":"Always","resources":{}},)"
      R"({"name":"b","image":"nginx:1.7.9","imagePullPolicy":"Never",)"
      R"("resources":{"limits":{"cpu":"1"}},"ports":[{"protocol":"UDP"}],)"
      R"("terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"},)"
      R"("junk"],"initContainers":[{"name":"i","image":"busybox:latest",)"
      R"("terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File",)"
      R"("imagePullPolicy":"Always","resources":{}}],)"
      R"("dnsPolicy":"ClusterFirst","schedulerName":"default-scheduler",)"
      R"("serviceAccountName":"robot","terminationGracePeriodSeconds":30,)"
      R"("securityContext":{}}}}})");
  // No spec there, or not an object: nothing happens.
  api::ObjectBuilder none = *api::ObjectBuilder::FromJson(R"({"spec":[]})");
  DefaultPodSpec(&none, "/spec/template/spec");
  EXPECT_EQ(none.ToJson(), R"({"spec":[]})");
}

TEST_F(CoreStrategyTest, SecretStringDataIsFoldedIntoDataOnCreate) {
  absl::StatusOr<WriteResult> created = registry_.Create(
      *secrets_, "default",
      FromJson(R"({"metadata":{"name":"s"},"data":{"a":"b2xk","k":"eA=="},)"
               R"("stringData":{"a":"new","u":"pa$$word"}})"));
  ASSERT_TRUE(created.ok()) << created.status();
  const std::string json = created->object->ToJson();
  // stringData wins over data for the same key, and is never stored.
  EXPECT_THAT(json, HasSubstr(R"("a":"bmV3")"));
  EXPECT_THAT(json, HasSubstr(R"("k":"eA==")"));
  EXPECT_THAT(json, HasSubstr(R"("u":"cGEkJHdvcmQ=")"));
  EXPECT_THAT(json, ::testing::Not(HasSubstr("stringData")));
  EXPECT_THAT(json, HasSubstr(R"("type":"Opaque")"));
}

TEST_F(CoreStrategyTest, SecretStringDataAloneMakesData) {
  absl::StatusOr<WriteResult> created = registry_.Create(
      *secrets_, "default",
      FromJson(R"({"metadata":{"name":"s"},"stringData":{"x":""}})"));
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_THAT(created->object->ToJson(), HasSubstr(R"("data":{"x":""})"));
}

TEST_F(CoreStrategyTest, SecretStringDataOnUpdateAndPatch) {
  ASSERT_TRUE(registry_
                  .Create(*secrets_, "default",
                          FromJson(R"({"metadata":{"name":"s"},)"
                                   R"("data":{"k":"eA=="}})"))
                  .ok());
  absl::StatusOr<WriteResult> updated = registry_.Update(
      *secrets_, "default", "s",
      FromJson(R"({"metadata":{"name":"s"},"data":{"k":"eA=="},)"
               R"("stringData":{"k":"y"}})"));
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_THAT(updated->object->ToJson(), HasSubstr(R"("k":"eQ==")"));
  absl::StatusOr<WriteResult> patched =
      registry_.Patch(*secrets_, "default", "s", api::PatchType::kMerge,
                      R"({"stringData":{"z":"zz"}})");
  ASSERT_TRUE(patched.ok()) << patched.status();
  const std::string json = patched->object->ToJson();
  EXPECT_THAT(json, HasSubstr(R"("z":"eno=")"));
  EXPECT_THAT(json, HasSubstr(R"("k":"eQ==")"));
  EXPECT_THAT(json, ::testing::Not(HasSubstr("stringData")));
}

TEST_F(CoreStrategyTest, SecretStringDataThatIsNotStringsIsRefused) {
  absl::StatusOr<WriteResult> created = registry_.Create(
      *secrets_, "default",
      FromJson(R"({"metadata":{"name":"s"},"stringData":{"n":8080}})"));
  // As kube-apiserver's decoder refuses it, before anything else.
  ASSERT_TRUE(api::IsBadRequest(created.status())) << created.status();
  EXPECT_EQ(std::string(created.status().message()),
            "Secret in version \"v1\" cannot be handled as a Secret: json: "
            "cannot unmarshal number into Go struct field Secret.stringData "
            "of type string");
  EXPECT_FALSE(registry_.Get(*secrets_, "default", "s").ok());
}

}  // namespace
}  // namespace kcr::apiserver
