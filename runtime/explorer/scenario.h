// Scenario: what the controller explorer runs — the controllers under
// test, what a user does to them step by step, what must always hold, and
// which objects make up the state they converge to.
//
//   explorer::Scenario s;
//   s.name = "nginx";
//   s.crds = *envtest::ReadManifests({"manifests/crds/nginx.yaml"});
//   s.add_controllers = [](controller::Manager* m) {
//     return nginx::AddNginxController(*m, {});
//   };
//   s.steps = {explorer::Step::Create(nginxes, kWebYaml),
//              explorer::Step::Patch(nginxes, "web",
//              R"({"spec":{"replicas":3}})"), explorer::Step::Delete(nginxes,
//              "web")};
//   s.invariants = {{"one Deployment per Nginx", OneDeploymentEach}};
//   s.state = {nginxes, deployments};
//
// The explorer runs the steps in order through a client of the user's own
// (its own User-Agent), waits after each one until the controllers
// converged, then checks every invariant.
#ifndef KCR_RUNTIME_EXPLORER_SCENARIO_H_
#define KCR_RUNTIME_EXPLORER_SCENARIO_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "base/context.h"
#include "runtime/client/options.h"
#include "runtime/client/rest_client.h"
#include "runtime/controller/manager.h"
#include "runtime/envtest/environment.h"

namespace kcr::explorer {

// One user action. `run` makes its writes through `client` (the user's)
// and returns once they are answered; an error ends the run as a failure
// of the scenario itself.
struct Step {
  std::string description;
  std::function<absl::Status(const Context& ctx, client::RestClient& client)>
      run;

  // Creates the object in `yaml_or_json` (the namespace: the resource's,
  // else the object's).
  static Step Create(client::Resource resource, std::string yaml_or_json);
  // A JSON merge patch of `name`.
  static Step Patch(client::Resource resource, std::string name,
                    std::string merge_patch);
  static Step Delete(client::Resource resource, std::string name);
};

// Something that must hold whenever the controllers converged: `check`
// reads the server through `client` and returns an error saying what is
// wrong.
struct Invariant {
  std::string name;
  std::function<absl::Status(const Context& ctx, client::RestClient& client)>
      check;
  // Whether it compares what the controllers saw (a metric, a count of
  // what their cache holds) with the server, rather than what they wrote:
  // then it cannot hold while their view is held back on purpose (a stale
  // view lasting into the next step), and is checked only when no view is.
  bool needs_current_view = false;
};

// A collection of objects, optionally narrowed by a label selector.
struct Collection {
  Collection(client::Resource resource, std::string label_selector = "")
      : resource(std::move(resource)),
        label_selector(std::move(label_selector)) {}
  client::Resource resource;
  std::string label_selector;  // "app=web"; "" for all
};

struct Scenario {
  // A short word: it appears in reproductions and User-Agents ([a-z0-9-]).
  std::string name;
  // Installed before the Manager starts; the CRDs' kinds are mapped in
  // every Manager's RESTMapper.
  std::vector<envtest::Manifest> crds;
  std::vector<envtest::Manifest> objects;
  // Adds the controllers under test to a Manager; called once per Manager
  // (a crashed one is replaced by a new one).
  std::function<absl::Status(controller::Manager*)> add_controllers;
  std::vector<Step> steps;
  std::vector<Invariant> invariants;
  // The collections whose objects make up the compared end state, read
  // through the user's client (a namespaced resource without a namespace:
  // every namespace). Leave out what the server makes differently on each
  // start (its kube-root-ca.crt ConfigMaps) with a label selector.
  std::vector<Collection> state;
  // Members of the end state's objects not compared (JSON pointers, as
  // "/status/readyReplicas"), beyond what end_state.h drops anyway.
  std::vector<std::string> ignored_fields;
};

}  // namespace kcr::explorer

#endif  // KCR_RUNTIME_EXPLORER_SCENARIO_H_
