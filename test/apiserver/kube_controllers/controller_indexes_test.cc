#include "apiserver/kube_controllers/controller_indexes.h"

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "api/object.h"
#include "api/object_builder.h"
#include "apiserver/storage/storage.h"
#include "gtest/gtest.h"
#include "test/apiserver/controller_test_util.h"

namespace kcr::apiserver {
namespace {

std::vector<std::string> Names(const std::vector<api::ObjectPtr>& objects) {
  std::vector<std::string> out;
  for (const api::ObjectPtr& o : objects) out.emplace_back(o->name());
  std::sort(out.begin(), out.end());
  return out;
}

class ControllerIndexesTest : public ControllerTest {
 protected:
  ControllerIndexesTest() { AddControllerIndexes(&storage_); }

  // Stores `json` in `collection` as it is (no validation).
  void Put(const std::string& collection, const std::string& json) {
    absl::StatusOr<api::ObjectPtr> o = api::Object::Parse(json);
    ASSERT_TRUE(o.ok()) << o.status();
    const std::string ns((*o)->namespace_());
    const std::string name((*o)->name());
    absl::StatusOr<api::ObjectBuilder> b = api::ObjectBuilder::FromJson(json);
    ASSERT_TRUE(b.ok()) << b.status();
    ASSERT_TRUE(storage_
                    .Write(collection, ns, name,
                           [&](const api::ObjectPtr&) {
                             return Storage::Mutation::Put(std::move(*b));
                           })
                    .ok());
  }

  std::string Owner(const char* api_version, const char* kind,
                    const std::string& name, const std::string& selector) {
    return std::string("{\"apiVersion\":\"") + api_version + "\",\"kind\":\"" +
           kind + "\",\"metadata\":{\"name\":\"" + name +
           "\",\"namespace\":\"default\"},\"spec\":{\"selector\":" + selector +
           "}}";
  }

  std::vector<std::string> Candidates(const std::string& collection,
                                      const api::Object& pod) {
    return Names(SelectorCandidates(storage_, collection, pod));
  }
};

// Every owner by selector is found from an orphan's labels: the
// ReplicationController by its map selector, the others by matchLabels,
// and a selector without matchLabels under AnySelectorKey.
TEST_F(ControllerIndexesTest, EveryOwnerKindIsFiledBySelector) {
  const std::string match = "{\"matchLabels\":{\"app\":\"db\"}}";
  for (const auto& [collection, api_version, kind] :
       std::vector<std::tuple<std::string, const char*, const char*>>{
           {"apps/statefulsets", "apps/v1", "StatefulSet"},
           {"apps/daemonsets", "apps/v1", "DaemonSet"},
           {"batch/jobs", "batch/v1", "Job"},
       }) {
    Put(collection, Owner(api_version, kind, "db", match));
    Put(collection,
        Owner(api_version, kind, "any",
              "{\"matchExpressions\":[{\"key\":\"app\",\"operator\":"
              "\"Exists\"}]}"));
    Put(collection,
        Owner(api_version, kind, "web", "{\"matchLabels\":{\"app\":\"web\"}}"));
  }
  Put("/replicationcontrollers",
      Owner("v1", "ReplicationController", "db",
            "{\"app\":\"db\",\"tier\":\"backend-store\"}"));
  Put("/replicationcontrollers",
      Owner("v1", "ReplicationController", "web", "{\"app\":\"web\"}"));

  const api::ObjectPtr pod = *api::Object::Parse(
      "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
      "\"p\",\"namespace\":\"default\",\"labels\":{\"app\":\"db\","
      "\"tier\":\"backend-store\"}}}");
  for (const char* collection :
       {"apps/statefulsets", "apps/daemonsets", "batch/jobs"}) {
    EXPECT_EQ(Candidates(collection, *pod),
              (std::vector<std::string>{"any", "db"}))
        << collection;
  }
  EXPECT_EQ(Candidates("/replicationcontrollers", *pod),
            std::vector<std::string>{"db"});
}

// Orphaned pods, ReplicaSets and ControllerRevisions are filed for
// adoption; orphans of other kinds are not, and owned objects are filed
// under their controller's uid.
TEST_F(ControllerIndexesTest, OrphansOfAdoptableKindsOnly) {
  const auto put = [&](const std::string& collection, const char* api_version,
                       const char* kind, const char* name,
                       const std::string& extra_meta) {
    Put(collection, std::string("{\"apiVersion\":\"") + api_version +
                        "\",\"kind\":\"" + kind +
                        "\",\"metadata\":{\"name\":\"" + name +
                        "\",\"namespace\":\"ns\"" + extra_meta + "}}");
  };
  put("/pods", "v1", "Pod", "pod", "");
  put("apps/replicasets", "apps/v1", "ReplicaSet", "rs", "");
  put("apps/controllerrevisions", "apps/v1", "ControllerRevision", "rev", "");
  put("/configmaps", "v1", "ConfigMap", "cm", "");
  put("apps/controllerrevisions", "apps/v1", "ControllerRevision", "owned",
      ",\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":"
      "\"StatefulSet\",\"name\":\"s\",\"uid\":\"u-1\",\"controller\":true}]");

  EXPECT_EQ(Names(storage_.ByIndex("/pods", kControllerIndex, OrphanKey("ns"))),
            std::vector<std::string>{"pod"});
  EXPECT_EQ(Names(storage_.ByIndex("apps/replicasets", kControllerIndex,
                                   OrphanKey("ns"))),
            std::vector<std::string>{"rs"});
  EXPECT_EQ(Names(storage_.ByIndex("apps/controllerrevisions", kControllerIndex,
                                   OrphanKey("ns"))),
            std::vector<std::string>{"rev"});
  EXPECT_TRUE(storage_.ByIndex("/configmaps", kControllerIndex, OrphanKey("ns"))
                  .empty());
  EXPECT_EQ(Names(storage_.ByIndex("apps/controllerrevisions", kControllerIndex,
                                   "u-1")),
            std::vector<std::string>{"owned"});
}

}  // namespace
}  // namespace kcr::apiserver
