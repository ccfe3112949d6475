#include "apiserver/kube_controllers/clusterrole_aggregation_controller.h"

#include <string>

#include "api/json/json_util.h"
#include "gtest/gtest.h"
#include "test/apiserver/controller_test_util.h"

namespace kcr::apiserver {
namespace {

class ClusterRoleAggregationControllerTest : public ControllerTest {
 protected:
  const ResourceInfo& ClusterRoles() {
    return Resource("rbac.authorization.k8s.io", "v1", "clusterroles");
  }

  void Role(const std::string& name, const std::string& labels,
            const std::string& rules) {
    Create(
        ClusterRoles(), "",
        R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole",)"
        R"("metadata":{"name":")" +
            name + R"(","labels":)" + labels + R"(},"rules":)" + rules + "}");
  }

  // The rules of ClusterRole `name`, compact JSON.
  std::string Rules(const std::string& name) {
    api::ObjectPtr o = Get(ClusterRoles(), "", name);
    if (o == nullptr) return "<absent>";
    auto it = o->json().FindMember("rules");
    if (it == o->json().MemberEnd()) return "<none>";
    return *json::JsonToString(it->value);
  }

  ClusterRoleAggregationController controller_{&registry_, &clock_};
};

TEST_F(ClusterRoleAggregationControllerTest, UnionOfSelectedRolesInNameOrder) {
  Create(
      ClusterRoles(), "",
      R"({"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole",)"
      R"("metadata":{"name":"monitoring"},"aggregationRule":)"
      R"({"clusterRoleSelectors":[{"matchLabels":{"agg":"mon"}},)"
      R"({"matchExpressions":[{"key":"extra","operator":"Exists"}]}]},"rules":[]})");
  const std::string pods =
      R"({"apiGroups":[""],"resources":["pods"],"verbs":["get"]})";
  const std::string svcs =
      R"({"apiGroups":[""],"resources":["services"],"verbs":["list"]})";
  Role("b-role", R"({"agg":"mon"})", "[" + svcs + "," + pods + "]");
  Role("a-role", R"({"extra":""})", "[" + pods + "]");
  Role("other", R"({"agg":"no"})",
       R"([{"apiGroups":[""],"resources":["secrets"],"verbs":["get"]}])");
  controller_.Sync();
  EXPECT_EQ(Rules("monitoring"), "[" + pods + "," + svcs + "]");
  const uint64_t synced = controller_.keys_synced();

  // A new labelled role adds its rules; a write to an unselected one only
  // queues the aggregated role, which stays as it is.
  Role("c-role", R"({"agg":"mon"})",
       R"([{"apiGroups":["apps"],"resources":["deployments"],"verbs":["*"]}])");
  controller_.Sync();
  EXPECT_EQ(
      Rules("monitoring"),
      "[" + pods + "," + svcs +
          R"(,{"apiGroups":["apps"],"resources":["deployments"],"verbs":["*"]}])");
  EXPECT_EQ(controller_.keys_synced(), synced + 1);

  // Deleting a selected role takes its rules away.
  ASSERT_TRUE(registry_.Delete(ClusterRoles(), "", "c-role", {}).ok());
  ASSERT_TRUE(registry_.Delete(ClusterRoles(), "", "a-role", {}).ok());
  controller_.Sync();
  EXPECT_EQ(Rules("monitoring"), "[" + svcs + "," + pods + "]");
  EXPECT_EQ(Rules("other"),
            R"([{"apiGroups":[""],"resources":["secrets"],"verbs":["get"]}])");
}

}  // namespace
}  // namespace kcr::apiserver
