// The SimpleDeployment operator on runtime/handlers, against the
// in-process local API server with its simulated node and garbage
// collector, on the real clock.
#include "controllers/simpledeployment/simpledeployment_handlers.h"

#include <functional>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "api/crd/crd_manifests.h"
#include "api/object.h"
#include "base/context.h"
#include "base/str_cat.h"
#include "controllers/simpledeployment/simpledeployment_pod.h"
#include "gtest/gtest.h"
#include "runtime/handlers/registry.h"
#include "test/controllers/manager_test_fixture.h"

namespace kcr::simpledeployment {
namespace {

bool Eventually(const std::function<bool()>& pred,
                absl::Duration timeout = absl::Seconds(30)) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (pred()) return true;
    absl::SleepFor(absl::Milliseconds(50));
  }
  return pred();
}

std::string Str(const api::Object& o, const char* pointer) {
  const rapidjson::Value* v = o.Find(pointer);
  return v != nullptr && v->IsString() ? v->GetString() : "";
}

class SimpleDeploymentHandlersTest : public testing::ManagerTestFixture {
 protected:
  void SetUp() override {
    apiserver::ApiServerOptions options;
    options.controllers.node.running_after = absl::Milliseconds(100);
    StartServer(std::move(options));
    ASSERT_FALSE(HasFatalFailure());
    ASSERT_NO_FATAL_FAILURE(InstallCrd(api::crd::kSimpleDeploymentCrdYaml));
    SimpleDeploymentOptions o;
    o.backoff = absl::Milliseconds(200);
    RegisterSimpleDeploymentHandlers(registry_, o);
    ASSERT_NO_FATAL_FAILURE(StartManager([this](controller::Manager& m) {
      return handlers::AddToManager(registry_, m);
    }));
  }
  void TearDown() override { StopManager(); }

  client::Resource Sds() const {
    return client::Resource::Namespaced(
        {"example.org", "v1", "simpledeployments"}, "default");
  }
  client::Resource Pods() const {
    return client::Resource::Namespaced({"", "v1", "pods"}, "default");
  }
  api::ObjectPtr Sd(const std::string& name) {
    auto o = client_->Get(Context::Background(), Sds(), name);
    return o.ok() ? *o : nullptr;
  }
  std::vector<api::ObjectPtr> PodsOf(const api::Object& sd) {
    client::ListOptions l;
    l.label_selector = Cat(kOwnerUidLabel, "=", sd.uid());
    auto list = client_->List(Context::Background(), Pods(), l);
    return list.ok() ? list->items : std::vector<api::ObjectPtr>{};
  }
  // status.create_fn.children[0], or "".
  std::string Child(const std::string& name) {
    api::ObjectPtr o = Sd(name);
    return o == nullptr ? "" : Str(*o, "/status/create_fn/children/0");
  }
  api::ObjectPtr PodByUid(const api::Object& sd, const std::string& uid) {
    for (const api::ObjectPtr& p : PodsOf(sd)) {
      if (p->uid() == uid) return p;
    }
    return nullptr;
  }

  handlers::Registry registry_;
};

TEST_F(SimpleDeploymentHandlersTest, CreateUpdateAndDeleteAsTheTutorial) {
  auto sample = api::Object::Parse(
      R"({"apiVersion":"example.org/v1","kind":"SimpleDeployment",
          "metadata":{"name":"example-01","namespace":"default",
                      "labels":{"app":"simple-app"}},
          "spec":{"sleepytime":"2"}})");
  ASSERT_TRUE(sample.ok());
  ASSERT_TRUE(client_->Create(Context::Background(), Sds(), **sample).ok());

  // create_fn: one adopted pod, its uid the children.
  ASSERT_TRUE(Eventually([&] { return !Child("example-01").empty(); }));
  api::ObjectPtr sd = Sd("example-01");
  const std::string first = Child("example-01");
  ASSERT_EQ(PodsOf(*sd).size(), 1u);
  api::ObjectPtr pod = PodByUid(*sd, first);
  ASSERT_NE(pod, nullptr);
  EXPECT_EQ(pod->name().rfind("example-01-", 0), 0u);
  EXPECT_EQ(pod->labels().Get("app"), "simple-app");
  EXPECT_TRUE(sd->HasFinalizer("kcr.dev/handlers")) << "delete_fn holds it";
  // The simulated node runs it 2 s, then it succeeds.
  EXPECT_TRUE(Eventually([&] {
    api::ObjectPtr p = PodByUid(*sd, first);
    return p != nullptr && Str(*p, "/status/phase") == "Running";
  }));
  EXPECT_TRUE(Eventually([&] {
    api::ObjectPtr p = PodByUid(*sd, first);
    return p != nullptr && Str(*p, "/status/phase") == "Succeeded";
  }));
  // The sleepytime handler did not run on create: still the one pod.
  EXPECT_EQ(PodsOf(*sd).size(), 1u);
  EXPECT_EQ(Child("example-01"), first);

  // sleepytime_fn: the old pod goes, a new one comes, the column follows.
  ASSERT_TRUE(client_
                  ->Patch(Context::Background(), Sds(), "example-01",
                          api::PatchType::kMerge,
                          R"({"spec":{"sleepytime":30}})")
                  .ok());
  ASSERT_TRUE(Eventually([&] {
    const std::string c = Child("example-01");
    return !c.empty() && c != first;
  }));
  const std::string second = Child("example-01");
  sd = Sd("example-01");
  EXPECT_EQ(Str(*sd, "/status/sleepytime_fn/children/0"), second);
  EXPECT_TRUE(Eventually([&] {
    std::vector<api::ObjectPtr> pods = PodsOf(*sd);
    return pods.size() == 1 && pods[0]->uid() == second;
  })) << "the old pod is deleted";
  api::ObjectPtr replaced = PodByUid(*sd, second);
  ASSERT_NE(replaced, nullptr);
  EXPECT_EQ(Str(*replaced, "/spec/containers/0/args/0"), PodScript(30));

  // "30" is 30: nothing to replace.
  ASSERT_TRUE(client_
                  ->Patch(Context::Background(), Sds(), "example-01",
                          api::PatchType::kMerge,
                          R"({"spec":{"sleepytime":"30"}})")
                  .ok());
  ASSERT_TRUE(Eventually([&] {
    api::ObjectPtr o = Sd("example-01");
    auto last = o->Annotation("kcr.dev/last-handled-configuration");
    return last && last->find(R"("sleepytime":"30")") != std::string_view::npos;
  }));
  EXPECT_EQ(Child("example-01"), second);
  EXPECT_EQ(PodsOf(*sd).size(), 1u);

  // delete_fn runs, the finalizer goes, the pod goes with its owner.
  ASSERT_TRUE(client_->Delete(Context::Background(), Sds(), "example-01").ok());
  EXPECT_TRUE(Eventually([&] { return Sd("example-01") == nullptr; }));
  EXPECT_TRUE(Eventually([&] { return PodsOf(*sd).empty(); }));
}

TEST_F(SimpleDeploymentHandlersTest, NoSleepytimeSleepsZero) {
  auto o = api::Object::Parse(
      R"({"apiVersion":"example.org/v1","kind":"SimpleDeployment",
          "metadata":{"name":"nap","namespace":"default"}})");
  ASSERT_TRUE(o.ok());
  ASSERT_TRUE(client_->Create(Context::Background(), Sds(), **o).ok());
  ASSERT_TRUE(Eventually([&] { return !Child("nap").empty(); }));
  api::ObjectPtr sd = Sd("nap");
  api::ObjectPtr pod = PodByUid(*sd, Child("nap"));
  ASSERT_NE(pod, nullptr);
  EXPECT_EQ(Str(*pod, "/spec/containers/0/args/0"), PodScript(0));
  EXPECT_TRUE(Eventually([&] {
    api::ObjectPtr p = PodByUid(*sd, Child("nap"));
    return p != nullptr && Str(*p, "/status/phase") == "Succeeded";
  }));
}

}  // namespace
}  // namespace kcr::simpledeployment
