// The pod BuildPod makes, run by the local API server's simulated node:
// the script the builder writes is one the node reads the sleep of, so
// that the embedded mode shows the tutorial's lifecycle (Running for
// sleepytime seconds, then Succeeded).
#include <string>

#include "absl/time/time.h"
#include "api/object.h"
#include "api/object_builder.h"
#include "apiserver/kube_controllers/node_simulator.h"
#include "controllers/simpledeployment/simpledeployment_pod.h"
#include "gtest/gtest.h"
#include "test/apiserver/controller_test_util.h"

namespace kcr::simpledeployment {
namespace {

class SimpleDeploymentPodLifecycleTest : public apiserver::ControllerTest {
 protected:
  // Creates the pod of a SimpleDeployment sleeping `sleepytime`; returns
  // its generated name.
  std::string CreatePod(int64_t sleepytime) {
    absl::StatusOr<api::ObjectPtr> owner = api::Object::Parse(
        R"({"apiVersion":"example.org/v1","kind":"SimpleDeployment",
            "metadata":{"name":"example-01","namespace":"default",
                        "uid":"6f1c2a3e-0000-4000-8000-000000000001",
                        "labels":{"app":"simple-app"}}})");
    EXPECT_TRUE(owner.ok());
    absl::StatusOr<api::ObjectPtr> pod = BuildPod(**owner, sleepytime);
    EXPECT_TRUE(pod.ok()) << pod.status();
    absl::StatusOr<apiserver::WriteResult> made =
        registry_.Create(Pods(), "default", api::ObjectBuilder(**pod));
    EXPECT_TRUE(made.ok()) << made.status();
    return made.ok() ? std::string(made->object->name()) : "";
  }
  std::string Phase(const std::string& name) {
    api::ObjectPtr p = Get(Pods(), "default", name);
    const rapidjson::Value* v =
        p == nullptr ? nullptr : p->Find("/status/phase");
    return v != nullptr && v->IsString() ? v->GetString() : "<none>";
  }
  void Pass() {
    for (int i = 0; i < 5; ++i) sim_.Sync();
  }

  apiserver::NodeSimulator sim_{&registry_, &clock_};
};

TEST_F(SimpleDeploymentPodLifecycleTest, RunsForSleepytimeThenSucceeds) {
  const std::string name = CreatePod(120);
  ASSERT_EQ(name.rfind("example-01-", 0), 0u) << name;
  Pass();
  clock_.Advance(absl::Seconds(1));
  Pass();
  EXPECT_EQ(Phase(name), "Running");
  clock_.Advance(absl::Seconds(119));
  Pass();
  EXPECT_EQ(Phase(name), "Running");
  clock_.Advance(absl::Seconds(1));
  Pass();
  EXPECT_EQ(Phase(name), "Succeeded");
}

TEST_F(SimpleDeploymentPodLifecycleTest, NoSleepytimeEndsAtOnce) {
  const std::string name = CreatePod(0);
  Pass();
  clock_.Advance(absl::Seconds(1));
  Pass();
  EXPECT_EQ(Phase(name), "Succeeded");
}

}  // namespace
}  // namespace kcr::simpledeployment
