// A small controller with planted bugs, one per class the explorer looks
// for, each switchable, to show the explorer finds them.
//
// A parent is a ConfigMap labelled explorer.kcr.dev/role=parent with
//   data.members: "a,c"   members the controller makes a child for;
//   data.adopted: "b"     members whose child the user brings.
// A child is a Secret labelled explorer.kcr.dev/role=child,
// explorer.kcr.dev/parent=<parent>, explorer.kcr.dev/member=<member>,
// controlled by its parent; the controller names its children
// "<parent>-<member>". It deletes children of members in neither list and
// sets the parent's annotation explorer.kcr.dev/ready to the members (both
// lists, sorted) that have a child.
//
// The bugs:
//   forget_created_child   (stale view) children get generated names, and
//                          a member without a child in the cache gets one
//                          more, without remembering the one just made;
//   delete_from_stale_list (stale view, unobserved state) a child whose
//                          member is missing from the cached parent is
//                          deleted without reading the parent afresh;
//   progress_in_memory     (crash) which children were made is kept in
//                          memory only, and a member not remembered gets a
//                          child (generated name) whatever exists;
//   conflict_is_fatal      (API error) a 409 Conflict makes it give the
//                          parent up for good.
#ifndef KCR_TEST_RUNTIME_EXPLORER_PLANTED_CONTROLLER_H_
#define KCR_TEST_RUNTIME_EXPLORER_PLANTED_CONTROLLER_H_

#include <string>

#include "absl/status/status.h"
#include "runtime/controller/manager.h"
#include "runtime/explorer/scenario.h"

namespace kcr::explorer::testing {

struct PlantedBugs {
  bool forget_created_child = false;
  bool delete_from_stale_list = false;
  bool progress_in_memory = false;
  bool conflict_is_fatal = false;
};

absl::Status AddPlantedController(controller::Manager& mgr, PlantedBugs bugs);

// The scenario: create a parent with member a; adopt b; the user brings
// b's child; members become a,c. Invariant: at most one child per member.
// The end state: the namespace's ConfigMaps and Secrets.
Scenario PlantedScenario(const std::string& name, PlantedBugs bugs);

}  // namespace kcr::explorer::testing

#endif  // KCR_TEST_RUNTIME_EXPLORER_PLANTED_CONTROLLER_H_
