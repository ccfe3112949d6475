// The nginx controller against the in-process local API server, with its
// deployment and replicaset controllers and simulated node: an Nginx gets
// its Deployment and a Ready status; spec changes and hand edits of the
// Deployment are followed and undone; an invalid spec or a Deployment it
// does not own is reported and left alone; a reconcile that changes
// nothing writes nothing.
#include "controllers/nginx/nginx_controller.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "api/crd/crd_manifests.h"
#include "api/errors/errors.h"
#include "api/object.h"
#include "api/object_builder.h"
#include "api/types/deployment.h"
#include "api/types/owner_reference.h"
#include "base/context.h"
#include "gtest/gtest.h"
#include "prometheus/registry.h"
#include "runtime/client/options.h"
#include "runtime/controller/manager.h"
#include "test/controllers/manager_test_fixture.h"
#include "test/integration/process_util.h"

namespace kcr::nginx {
namespace {

using apiserver::WaitFor;

const Context kBg = Context::Background();
constexpr absl::Duration kWait = absl::Seconds(60);
const client::Resource kEvents =
    client::Resource::Namespaced({"", "v1", "events"});

double CounterValue(prometheus::Registry& registry, const std::string& family,
                    const std::map<std::string, std::string>& labels) {
  for (const auto& f : registry.Collect()) {
    if (f.name != family) continue;
    for (const auto& m : f.metric) {
      std::map<std::string, std::string> have;
      for (const auto& l : m.label) have[l.name] = l.value;
      if (have == labels) return m.counter.value;
    }
  }
  return 0;
}

std::string StringAt(const api::ObjectPtr& o, const char* pointer) {
  const rapidjson::Value* v = o == nullptr ? nullptr : o->Find(pointer);
  return v != nullptr && v->IsString() ? v->GetString() : "";
}

int64_t IntAt(const api::ObjectPtr& o, const char* pointer) {
  const rapidjson::Value* v = o == nullptr ? nullptr : o->Find(pointer);
  return v != nullptr && v->IsInt64() ? v->GetInt64() : -1;
}

class NginxControllerTest : public testing::ManagerTestFixture {
 protected:
  void SetUp() override {
    apiserver::ApiServerOptions options;
    options.controllers.node.running_after = absl::Milliseconds(200);
    StartServer(std::move(options));
    if (HasFatalFailure()) return;
    ASSERT_NO_FATAL_FAILURE(InstallCrd(api::crd::kNginxCrdYaml));
    ASSERT_TRUE(WaitFor(
        [&] {
          return client_->List(kBg, NginxResource().InNamespace("default"))
              .ok();
        },
        kWait));
  }

  void StartManager() {
    ManagerTestFixture::StartManager([](controller::Manager& mgr) {
      absl::Status added = AddNginxController(mgr, NginxOptions{});
      if (added.ok()) {
        EXPECT_EQ(AddNginxController(mgr, NginxOptions{}).code(),
                  absl::StatusCode::kAlreadyExists);
      }
      return added;
    });
  }

  void CreateNginx(const std::string& name, const std::string& spec) {
    auto b = api::ObjectBuilder("example.org/v1", "Nginx");
    b.SetNamespace("default").SetName(name);
    ASSERT_TRUE(b.SetJson("/spec", spec).ok());
    auto created = client_->Create(kBg, NginxResource(), **b.Build());
    ASSERT_TRUE(created.ok()) << created.status();
  }

  void PatchNginx(const std::string& name, const std::string& patch) {
    auto patched = client_->Patch(kBg, NginxResource().InNamespace("default"),
                                  name, client::PatchType::kMerge, patch);
    ASSERT_TRUE(patched.ok()) << patched.status();
  }

  api::ObjectPtr Get(const client::Resource& r, const std::string& name) {
    auto got = client_->Get(kBg, r.InNamespace("default"), name);
    return got.ok() ? *got : nullptr;
  }
  api::ObjectPtr Nginx(const std::string& name) {
    return Get(NginxResource(), name);
  }
  api::ObjectPtr Deploy(const std::string& name) {
    return Get(DeploymentResource(), name);
  }

  // The Nginx's Ready condition's status and reason, "status/reason".
  std::string Ready(const std::string& name) {
    api::ObjectPtr n = Nginx(name);
    const rapidjson::Value* list =
        n == nullptr ? nullptr : n->Find("/status/conditions");
    if (list == nullptr || !list->IsArray()) return "";
    for (const rapidjson::Value& c : list->GetArray()) {
      if (std::string(c["type"].GetString()) == "Ready") {
        return absl::StrCat(
            c["status"].GetString(), "/",
            c.HasMember("reason") ? c["reason"].GetString() : "");
      }
    }
    return "";
  }

  // Events about Nginx `name` with `reason`: their messages.
  std::vector<std::string> Events(const std::string& name,
                                  const std::string& reason) {
    std::vector<std::string> out;
    auto list = client_->List(kBg, kEvents.InNamespace("default"));
    if (!list.ok()) return out;
    for (const api::ObjectPtr& e : list->items) {
      if (StringAt(e, "/involvedObject/kind") == "Nginx" &&
          StringAt(e, "/involvedObject/name") == name &&
          StringAt(e, "/reason") == reason) {
        out.push_back(StringAt(e, "/message"));
      }
    }
    return out;
  }
};

TEST_F(NginxControllerTest, CreatesTheDeploymentAndReportsReady) {
  ASSERT_NO_FATAL_FAILURE(StartManager());
  ASSERT_NO_FATAL_FAILURE(CreateNginx("web", R"({"replicas":2})"));
  ASSERT_TRUE(WaitFor([&] { return Deploy("web-deploy") != nullptr; }, kWait));
  api::ObjectPtr d = Deploy("web-deploy");
  EXPECT_EQ(d->Label("underneathall-app"), "nginx-web");
  EXPECT_EQ(d->Label("app"), "underneathall");
  EXPECT_EQ(StringAt(d, "/spec/selector/matchLabels/underneathall-app"),
            "nginx-web");
  EXPECT_EQ(StringAt(d, "/spec/template/spec/containers/0/image"),
            "nginx:1.7.9");
  EXPECT_EQ(IntAt(d, "/spec/template/spec/containers/0/ports/0/containerPort"),
            80);
  EXPECT_EQ(IntAt(d, "/spec/replicas"), 2);
  EXPECT_TRUE(api::IsControlledBy(*d, *Nginx("web")));

  EXPECT_TRUE(
      WaitFor([&] { return Ready("web") == "True/DeploymentReady"; }, kWait))
      << Ready("web");
  api::ObjectPtr n = Nginx("web");
  EXPECT_EQ(IntAt(n, "/status/readyReplicas"), 2);
  EXPECT_EQ(IntAt(n, "/status/observedGeneration"), n->generation());
  EXPECT_TRUE(
      WaitFor([&] { return Events("web", "Created").size() == 1; }, kWait));
}

TEST_F(NginxControllerTest, FollowsTheSpecAndUndoesHandEdits) {
  ASSERT_NO_FATAL_FAILURE(StartManager());
  ASSERT_NO_FATAL_FAILURE(CreateNginx("web", R"({"replicas":1})"));
  ASSERT_TRUE(
      WaitFor([&] { return Ready("web") == "True/DeploymentReady"; }, kWait));

  PatchNginx("web", R"({"spec":{"replicas":3,"image":"nginx:1.25"}})");
  EXPECT_TRUE(WaitFor(
      [&] {
        api::ObjectPtr d = Deploy("web-deploy");
        return IntAt(d, "/spec/replicas") == 3 &&
               StringAt(d, "/spec/template/spec/containers/0/image") ==
                   "nginx:1.25";
      },
      kWait));
  EXPECT_TRUE(
      WaitFor([&] { return IntAt(Nginx("web"), "/status/readyReplicas") == 3; },
              kWait));
  EXPECT_TRUE(
      WaitFor([&] { return !Events("web", "Updated").empty(); }, kWait));

  // Scaled by hand: put back.
  auto scaled = client_->Patch(kBg, DeploymentResource().InNamespace("default"),
                               "web-deploy", client::PatchType::kMerge,
                               R"({"spec":{"replicas":5}})");
  ASSERT_TRUE(scaled.ok()) << scaled.status();
  EXPECT_TRUE(WaitFor(
      [&] { return IntAt(Deploy("web-deploy"), "/spec/replicas") == 3; },
      kWait));
  EXPECT_TRUE(WaitFor(
      [&] {
        for (const std::string& m : Events("web", "DriftRepaired")) {
          if (absl::StrContains(m, "replicas 5->3")) return true;
        }
        return false;
      },
      kWait));
  // A label of someone else's stays.
  auto labelled =
      client_->Patch(kBg, DeploymentResource().InNamespace("default"),
                     "web-deploy", client::PatchType::kMerge,
                     R"({"metadata":{"labels":{"team":"a"}},"spec":{"template":
                        {"spec":{"containers":[{"name":"nginx",
                                                "image":"httpd"}]}}}})");
  ASSERT_TRUE(labelled.ok()) << labelled.status();
  EXPECT_TRUE(WaitFor(
      [&] {
        api::ObjectPtr d = Deploy("web-deploy");
        return StringAt(d, "/spec/template/spec/containers/0/image") ==
                   "nginx:1.25" &&
               IntAt(d,
                     "/spec/template/spec/containers/0/ports/0/"
                     "containerPort") == 80;
      },
      kWait));
  EXPECT_EQ(Deploy("web-deploy")->Label("team"), "a");
}

TEST_F(NginxControllerTest, CachesTrimmedDeploymentsAndRepairsWithoutLoss) {
  ASSERT_NO_FATAL_FAILURE(StartManager());
  ASSERT_NO_FATAL_FAILURE(CreateNginx("web", R"({"replicas":1})"));
  ASSERT_TRUE(
      WaitFor([&] { return Ready("web") == "True/DeploymentReady"; }, kWait));
  // The Manager's cache holds what the controller reads, not the server's
  // defaults.
  auto cached =
      mgr_->ListerFor<api::DeploymentView>().Get("default", "web-deploy");
  ASSERT_TRUE(cached.ok()) << cached.status();
  EXPECT_EQ(cached->object().Find("/spec/strategy"), nullptr);
  EXPECT_EQ(cached->replicas(), 1);
  EXPECT_NE(Deploy("web-deploy")->Find("/spec/strategy"), nullptr);

  // Scaled by hand, with fields the cache leaves out changed too: the
  // repair puts replicas back and keeps those.
  auto edited = client_->Patch(kBg, DeploymentResource().InNamespace("default"),
                               "web-deploy", client::PatchType::kMerge,
                               R"({"metadata":{"annotations":{"note":"mine"}},
          "spec":{"replicas":4,"revisionHistoryLimit":3,
                  "template":{"spec":{"terminationGracePeriodSeconds":5}}}})");
  ASSERT_TRUE(edited.ok()) << edited.status();
  EXPECT_TRUE(WaitFor(
      [&] { return IntAt(Deploy("web-deploy"), "/spec/replicas") == 1; },
      kWait));
  api::ObjectPtr d = Deploy("web-deploy");
  EXPECT_EQ(StringAt(d, "/metadata/annotations/note"), "mine");
  EXPECT_EQ(IntAt(d, "/spec/revisionHistoryLimit"), 3);
  EXPECT_EQ(IntAt(d, "/spec/template/spec/terminationGracePeriodSeconds"), 5);
  EXPECT_EQ(StringAt(d, "/spec/template/spec/containers/0/imagePullPolicy"),
            "IfNotPresent");
}

TEST_F(NginxControllerTest, AnInvalidSpecIsReportedAndChangesNothing) {
  ASSERT_NO_FATAL_FAILURE(StartManager());
  ASSERT_NO_FATAL_FAILURE(CreateNginx("web", R"({"replicas":1})"));
  ASSERT_TRUE(
      WaitFor([&] { return Ready("web") == "True/DeploymentReady"; }, kWait));
  const int64_t generation = Deploy("web-deploy")->generation();

  // The schema allows it; a container runtime would not.
  PatchNginx("web", R"({"spec":{"replicas":4,"image":"NGINX latest"}})");
  EXPECT_TRUE(
      WaitFor([&] { return Ready("web") == "False/InvalidSpec"; }, kWait))
      << Ready("web");
  EXPECT_TRUE(WaitFor(
      [&] {
        std::vector<std::string> e = Events("web", "InvalidSpec");
        return e.size() == 1 &&
               absl::StrContains(e[0], "must be a container image reference");
      },
      kWait));
  api::ObjectPtr d = Deploy("web-deploy");
  EXPECT_EQ(d->generation(), generation);
  EXPECT_EQ(IntAt(d, "/spec/replicas"), 1);
  EXPECT_EQ(StringAt(d, "/spec/template/spec/containers/0/image"),
            "nginx:1.7.9");
  api::ObjectPtr n = Nginx("web");
  EXPECT_EQ(IntAt(n, "/status/observedGeneration"), n->generation());

  // Fixed: followed again.
  PatchNginx("web", R"({"spec":{"image":"nginx:1.25"}})");
  EXPECT_TRUE(WaitFor(
      [&] { return IntAt(Deploy("web-deploy"), "/spec/replicas") == 4; },
      kWait));

  // Invalid from the start: no Deployment at all.
  ASSERT_NO_FATAL_FAILURE(CreateNginx("big", R"({"replicas":2147483648})"));
  EXPECT_TRUE(
      WaitFor([&] { return Ready("big") == "False/InvalidSpec"; }, kWait));
  EXPECT_EQ(Deploy("big-deploy"), nullptr);
}

TEST_F(NginxControllerTest, LeavesADeploymentItDoesNotOwnAlone) {
  api::ObjectBuilder foreign("apps/v1", "Deployment");
  foreign.SetNamespace("default").SetName("web-deploy");
  ASSERT_TRUE(foreign
                  .SetJson("/spec", R"({"replicas":1,
      "selector":{"matchLabels":{"app":"mine"}},
      "template":{"metadata":{"labels":{"app":"mine"}},
        "spec":{"containers":[{"name":"c","image":"httpd"}]}}})")
                  .ok());
  ASSERT_TRUE(
      client_->Create(kBg, DeploymentResource(), **foreign.Build()).ok());
  ASSERT_NO_FATAL_FAILURE(StartManager());
  ASSERT_NO_FATAL_FAILURE(CreateNginx("web", "{}"));
  EXPECT_TRUE(WaitFor(
      [&] { return Ready("web") == "False/DeploymentNotOwned"; }, kWait));
  EXPECT_TRUE(WaitFor([&] { return !Events("web", "Failed").empty(); }, kWait));
  api::ObjectPtr d = Deploy("web-deploy");
  EXPECT_EQ(StringAt(d, "/spec/template/spec/containers/0/image"), "httpd");
  EXPECT_TRUE(d->owner_references().empty());
}

TEST_F(NginxControllerTest, AReconcileThatChangesNothingWritesNothing) {
  ASSERT_NO_FATAL_FAILURE(StartManager());
  ASSERT_NO_FATAL_FAILURE(CreateNginx("web", R"({"replicas":1})"));
  ASSERT_TRUE(
      WaitFor([&] { return Ready("web") == "True/DeploymentReady"; }, kWait));
  prometheus::Registry& registry = mgr_->GetMetricsRegistry();
  const std::map<std::string, std::string> success = {{"controller", "nginx"},
                                                      {"result", "success"}};
  const double before =
      CounterValue(registry, "controller_runtime_reconcile_total", success);
  // An annotation wakes the controller; nothing it owns changed.
  PatchNginx("web", R"({"metadata":{"annotations":{"note":"hello"}}})");
  const std::string rv(Nginx("web")->resource_version());
  const int64_t deploy_generation = Deploy("web-deploy")->generation();
  ASSERT_TRUE(WaitFor(
      [&] {
        return CounterValue(registry, "controller_runtime_reconcile_total",
                            success) > before;
      },
      kWait));
  EXPECT_EQ(Nginx("web")->resource_version(), rv);
  EXPECT_EQ(Deploy("web-deploy")->generation(), deploy_generation);
}

// A status edited by hand is put back: the controller's check that the
// status already reads as it should compares every field it writes.
TEST_F(NginxControllerTest, PutsBackAStatusEditedByHand) {
  ASSERT_NO_FATAL_FAILURE(StartManager());
  ASSERT_NO_FATAL_FAILURE(CreateNginx("web", R"({"replicas":1})"));
  ASSERT_TRUE(
      WaitFor([&] { return Ready("web") == "True/DeploymentReady"; }, kWait));
  const std::string message =
      StringAt(Nginx("web"), "/status/conditions/0/message");
  ASSERT_FALSE(message.empty());
  struct Edit {
    const char* pointer;
    const char* json;
  };
  for (const Edit& edit : {Edit{"/status/conditions/0/message", R"("edited")"},
                           Edit{"/status/conditions/0/reason", R"("Edited")"},
                           Edit{"/status/conditions/0/observedGeneration", "7"},
                           Edit{"/status/readyReplicas", "3"},
                           Edit{"/status/observedGeneration", "9"}}) {
    SCOPED_TRACE(edit.pointer);
    api::ObjectBuilder b(*Nginx("web"));
    ASSERT_TRUE(b.SetJson(edit.pointer, edit.json).ok());
    auto edited = client_->UpdateStatus(
        kBg, NginxResource().InNamespace("default"), **b.Build());
    ASSERT_TRUE(edited.ok()) << edited.status();
    EXPECT_TRUE(WaitFor(
        [&] {
          api::ObjectPtr n = Nginx("web");
          return StringAt(n, "/status/conditions/0/message") == message &&
                 Ready("web") == "True/DeploymentReady" &&
                 IntAt(n, "/status/conditions/0/observedGeneration") ==
                     n->generation() &&
                 IntAt(n, "/status/readyReplicas") == 1 &&
                 IntAt(n, "/status/observedGeneration") == n->generation();
        },
        kWait));
  }
}

}  // namespace
}  // namespace kcr::nginx
