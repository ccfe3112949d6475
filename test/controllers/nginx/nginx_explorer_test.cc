// The nginx controller explored (runtime/explorer): crashes after each of
// its writes, API errors on each, stale views of Nginxes and Deployments,
// unobserved Nginx states, through create, scale, drift, an invalid spec
// and delete; the state after every step is compared with the reference
// run's. Rerun one point with
//   bazel test //test/controllers/nginx:nginx_explorer_test
//     --test_env=KCR_EXPLORE=nginx:<point>:seed=1
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "api/crd/crd_manifests.h"
#include "api/object.h"
#include "controllers/nginx/nginx_controller.h"
#include "glog/logging.h"
#include "gtest/gtest.h"
#include "runtime/explorer/explorer.h"

namespace kcr::nginx {
namespace {

client::Resource Nginxes() { return NginxResource().InNamespace("default"); }
client::Resource Deployments() {
  return DeploymentResource().InNamespace("default");
}

explorer::Scenario NginxScenario() {
  explorer::Scenario s;
  s.name = "nginx";
  s.crds = {{"nginx-crd.yaml", api::crd::kNginxCrdYaml}};
  s.add_controllers = [](controller::Manager* mgr) {
    return AddNginxController(*mgr, NginxOptions{});
  };
  s.steps = {
      explorer::Step::Create(Nginxes(), R"({"apiVersion":"example.org/v1",
          "kind":"Nginx","metadata":{"name":"web","namespace":"default"},
          "spec":{"replicas":1}})"),
      explorer::Step::Patch(Nginxes(), "web", R"({"spec":{"replicas":2}})"),
      // Someone scales the Deployment by hand: the controller puts it back.
      explorer::Step::Patch(Deployments(), "web-deploy",
                            R"({"spec":{"replicas":5}})"),
      // An image no registry could serve: refused, the Deployment kept.
      explorer::Step::Patch(Nginxes(), "web",
                            R"({"spec":{"image":"Not An Image"}})"),
      explorer::Step::Delete(Nginxes(), "web"),
  };
  s.invariants = {
      {"at most one Deployment per Nginx",
       [](const Context& ctx, client::RestClient& client) -> absl::Status {
         auto list = client.List(ctx, Deployments());
         if (!list.ok()) return list.status();
         std::map<std::string, int> owned;
         for (const api::ObjectPtr& d : list->items) {
           auto owner = d->controller_reference();
           if (!owner.has_value() || owner->kind != "Nginx") continue;
           if (++owned[std::string(owner->name)] > 1) {
             return absl::FailedPreconditionError(
                 absl::StrCat("Nginx ", std::string(owner->name), " controls ",
                              owned[std::string(owner->name)], " Deployments"));
           }
         }
         return absl::OkStatus();
       }},
  };
  s.state = {explorer::Collection(Nginxes()),
             explorer::Collection(Deployments(), "app=underneathall")};
  return s;
}

// What the exploration found and is not fixed yet: with the Deployments'
// events held back from step 3 (a hand scale to 5) until after step 4
// (an invalid image), the controller first sees the drift while the spec
// is invalid, and leaves the Deployment as it is (its rule for invalid
// specs), where the undisturbed run had repaired it: the outcome depends
// on how far the cache lagged.
const char* const kKnownFindings[] = {"stale-view:deployments.apps:step:3"};

TEST(NginxExplorerTest, SurvivesEveryPointButTheKnownOnes) {
  explorer::ExplorerOptions options;
  // The runs mostly wait for quiet: more of them at once than cores.
  options.parallelism = 4;
  auto report = explorer::Explore(NginxScenario(), options);
  ASSERT_TRUE(report.ok()) << report.status();
  if (report->skipped) return;
  EXPECT_GT(report->runs.size(), 1u);
  for (const explorer::Finding& f : report->findings) {
    bool known = false;
    for (const char* k : kKnownFindings) known |= f.point.ToString() == k;
    EXPECT_TRUE(known) << f.ToString();
  }
  LOG(INFO) << report->ToString();
}

}  // namespace
}  // namespace kcr::nginx
