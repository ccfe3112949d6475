#include "apiserver/kube_controllers/endpoints_controller.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "api/object_builder.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "test/apiserver/controller_test_util.h"

namespace kcr::apiserver {
namespace {

class EndpointsControllerTest : public ControllerTest {
 protected:
  const ResourceInfo& Services() { return Resource("", "v1", "services"); }
  const ResourceInfo& Endpoints() { return Resource("", "v1", "endpoints"); }
  const ResourceInfo& Slices() {
    return Resource("discovery.k8s.io", "v1", "endpointslices");
  }

  // A Service `name` selecting `selector` (a JSON object), port 80 to 8080.
  void CreateService(const std::string& name, const std::string& selector) {
    Create(Services(), "default",
           R"({"metadata":{"name":")" + name + R"("},"spec":{"selector":)" +
               selector + R"(,"ports":[{"port":80,"targetPort":8080}]}})");
  }

  // A pod labelled `labels` (a JSON object), running at `ip`.
  void CreatePod(const std::string& name, const std::string& labels,
                 const std::string& ip, bool ready = true) {
    Create(Pods(), "default",
           R"({"metadata":{"name":")" + name + R"(","labels":)" + labels +
               R"(},"spec":{"nodeName":"n","containers":[{"name":"c",)"
               R"("image":"nginx"}]}})");
    SetStatus(name, ip, ready);
  }

  void SetStatus(const std::string& pod, const std::string& ip, bool ready) {
    api::ObjectBuilder b = Get(Pods(), "default", pod)->ToBuilder();
    ASSERT_TRUE(b.SetJson("/status",
                          R"({"phase":"Running","podIP":")" + ip +
                              R"(","conditions":[{"type":"Ready","status":")" +
                              (ready ? "True" : "False") + R"("}]})")
                    .ok());
    WriteOptions w;
    w.subresource = "status";
    ASSERT_TRUE(registry_.Update(Pods(), "default", pod, std::move(b), w).ok());
  }

  void Relabel(const std::string& pod, const std::string& labels) {
    api::ObjectBuilder b = Get(Pods(), "default", pod)->ToBuilder();
    ASSERT_TRUE(b.SetJson("/metadata/labels", labels).ok());
    ASSERT_TRUE(registry_.Update(Pods(), "default", pod, std::move(b)).ok());
  }

  // The ready IPs of Endpoints `name`, in order ("" when it has none,
  // "<absent>" when there is no such Endpoints).
  std::string ReadyIps(const std::string& name) {
    api::ObjectPtr ep = Get(Endpoints(), "default", name);
    if (ep == nullptr) return "<absent>";
    std::string out;
    const rapidjson::Value* subsets = ep->Find("/subsets");
    if (subsets == nullptr) return out;
    for (const auto& subset : subsets->GetArray()) {
      if (!subset.HasMember("addresses")) continue;
      for (const auto& a : subset["addresses"].GetArray()) {
        if (!out.empty()) out += ",";
        out += a["ip"].GetString();
      }
    }
    return out;
  }

  // The addresses of the slice of Service `name`, in order.
  std::string SliceIps(const std::string& name) {
    std::string out;
    int found = 0;
    for (const api::ObjectPtr& s :
         storage_.Snapshot(Slices().StorageKey(), "default")) {
      if (s->Label("kubernetes.io/service-name") != name) continue;
      ++found;
      for (const auto& e : s->Find("/endpoints")->GetArray()) {
        if (!out.empty()) out += ",";
        out += e["addresses"][0].GetString();
      }
    }
    return found == 1 ? out : "<" + std::to_string(found) + " slices>";
  }

  // Syncs until a pass has nothing to do.
  void Settle() {
    for (int i = 0; i < 10; ++i) {
      const uint64_t before = ec_.keys_synced();
      ec_.Sync();
      if (ec_.keys_synced() == before) return;
    }
    FAIL() << "the endpoints controller does not settle";
  }

  // A pass syncs every key due, however long it takes on a loaded machine,
  // so that what one pass does is deterministic.
  static IncrementalControllerOptions Unhurried() {
    IncrementalControllerOptions o;
    o.pass_budget = absl::InfiniteDuration();
    return o;
  }

  EndpointsController ec_{&registry_, &clock_, Unhurried()};
};

TEST_F(EndpointsControllerTest, EndpointsAndSliceOfTheSelectedPods) {
  CreateService("web", R"({"app":"web"})");
  CreatePod("w1", R"({"app":"web"})", "10.244.0.2");
  CreatePod("w2", R"({"app":"web"})", "10.244.0.1");
  CreatePod("other", R"({"app":"db"})", "10.244.0.3");
  Settle();
  EXPECT_EQ(ReadyIps("web"), "10.244.0.1,10.244.0.2");
  EXPECT_EQ(SliceIps("web"), "10.244.0.1,10.244.0.2");
  api::ObjectPtr ep = Get(Endpoints(), "default", "web");
  EXPECT_EQ(ep->Find("/subsets/0/ports/0/port")->GetInt(), 8080);
}

TEST_F(EndpointsControllerTest, APodWriteSyncsOnlyTheServicesThatSelectIt) {
  for (int i = 0; i < 50; ++i) {
    const std::string n = std::to_string(i);
    CreateService("s" + n, R"({"app":"s)" + n + R"("})");
    CreatePod("p" + n, R"({"app":"s)" + n + R"(","tier":"web"})",
              "10.244.1." + std::to_string(i + 1));
  }
  Settle();
  const uint64_t before = ec_.keys_synced();
  EXPECT_GE(before, 50u);
  EXPECT_EQ(ReadyIps("s7"), "10.244.1.8");
  // p7 turns not ready: s7 alone is synced, and its own writes do not
  // queue it again.
  SetStatus("p7", "10.244.1.8", false);
  Settle();
  EXPECT_EQ(ec_.keys_synced(), before + 1);
  EXPECT_EQ(ReadyIps("s7"), "");
  // A write that changes no endpoint (an annotation) queues nothing.
  api::ObjectBuilder b = Get(Pods(), "default", "p9")->ToBuilder();
  b.SetAnnotation("touched", "yes");
  ASSERT_TRUE(registry_.Update(Pods(), "default", "p9", std::move(b)).ok());
  Settle();
  EXPECT_EQ(ec_.keys_synced(), before + 1);
}

TEST_F(EndpointsControllerTest, ALabelChangeMovesThePodBetweenServices) {
  CreateService("a", R"({"app":"a"})");
  CreateService("b", R"({"app":"b"})");
  CreateService("c", R"({"app":"c"})");
  CreatePod("p", R"({"app":"a"})", "10.244.0.1");
  Settle();
  EXPECT_EQ(ReadyIps("a"), "10.244.0.1");
  EXPECT_EQ(ReadyIps("b"), "");
  const uint64_t before = ec_.keys_synced();
  Relabel("p", R"({"app":"b"})");
  Settle();
  EXPECT_EQ(ec_.keys_synced(), before + 2) << "a and b, not c";
  EXPECT_EQ(ReadyIps("a"), "");
  EXPECT_EQ(ReadyIps("b"), "10.244.0.1");
  EXPECT_EQ(SliceIps("a"), "");
  EXPECT_EQ(SliceIps("b"), "10.244.0.1");
}

TEST_F(EndpointsControllerTest, EverySelectorEntryMustMatch) {
  CreateService("web", R"({"app":"web","tier":"front"})");
  for (int i = 0; i < 5; ++i) {
    CreatePod("w" + std::to_string(i), R"({"app":"web"})",
              "10.244.0." + std::to_string(i + 1));
  }
  CreatePod("f", R"({"app":"web","tier":"front"})", "10.244.0.9");
  CreatePod("g", R"({"tier":"front"})", "10.244.0.8");
  Settle();
  EXPECT_EQ(ReadyIps("web"), "10.244.0.9");
  // A pod gaining the missing label joins.
  Relabel("w2", R"({"app":"web","tier":"front"})");
  Settle();
  EXPECT_EQ(ReadyIps("web"), "10.244.0.3,10.244.0.9");
}

TEST_F(EndpointsControllerTest, AForeignEndpointsWriteIsUndone) {
  CreateService("web", R"({"app":"web"})");
  CreateService("db", R"({"app":"db"})");
  CreatePod("w", R"({"app":"web"})", "10.244.0.1");
  Settle();
  const uint64_t before = ec_.keys_synced();
  api::ObjectBuilder b = Get(Endpoints(), "default", "web")->ToBuilder();
  b.Remove("/subsets");
  ASSERT_TRUE(
      registry_.Update(Endpoints(), "default", "web", std::move(b)).ok());
  Settle();
  EXPECT_EQ(ReadyIps("web"), "10.244.0.1");
  EXPECT_EQ(ec_.keys_synced(), before + 1) << "web alone";
  // The slice deleted: made again.
  for (const api::ObjectPtr& s :
       storage_.Snapshot(Slices().StorageKey(), "default")) {
    if (s->Label("kubernetes.io/service-name") == "web") {
      ASSERT_TRUE(registry_.Delete(Slices(), "default", s->name()).ok());
    }
  }
  Settle();
  EXPECT_EQ(SliceIps("web"), "10.244.0.1");
  EXPECT_EQ(ec_.keys_synced(), before + 2);
}

TEST_F(EndpointsControllerTest, AServiceGoneTakesItsEndpoints) {
  CreateService("web", R"({"app":"web"})");
  CreatePod("w", R"({"app":"web"})", "10.244.0.1");
  Settle();
  ASSERT_NE(Get(Endpoints(), "default", "web"), nullptr);
  ASSERT_TRUE(registry_.Delete(Services(), "default", "web").ok());
  Settle();
  EXPECT_EQ(Get(Endpoints(), "default", "web"), nullptr);
  // Endpoints nobody here wrote (a Service without a selector) stay when
  // their Service goes.
  Create(Services(), "default",
         R"({"metadata":{"name":"manual"},"spec":{"ports":[{"port":80}]}})");
  Create(Endpoints(), "default", R"({"metadata":{"name":"manual"}})");
  Settle();
  ASSERT_TRUE(registry_.Delete(Services(), "default", "manual").ok());
  Settle();
  EXPECT_NE(Get(Endpoints(), "default", "manual"), nullptr);
}

TEST_F(EndpointsControllerTest, PodsThatStopServingLeave) {
  CreateService("web", R"({"app":"web"})");
  CreatePod("w1", R"({"app":"web"})", "10.244.0.1");
  CreatePod("w2", R"({"app":"web"})", "10.244.0.2");
  Settle();
  ASSERT_TRUE(registry_.Delete(Pods(), "default", "w1").ok());
  Settle();
  EXPECT_EQ(ReadyIps("web"), "10.244.0.2");
  EXPECT_EQ(SliceIps("web"), "10.244.0.2");
}

}  // namespace
}  // namespace kcr::apiserver
