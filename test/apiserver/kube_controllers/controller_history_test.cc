#include "apiserver/kube_controllers/controller_history.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "api/object.h"
#include "api/object_builder.h"
#include "apiserver/kube_controllers/controller_indexes.h"
#include "gtest/gtest.h"
#include "test/apiserver/controller_test_util.h"

namespace kcr::apiserver {
namespace {

class ControllerHistoryTest : public ControllerTest {
 protected:
  ControllerHistoryTest() { AddControllerIndexes(&storage_); }

  const ResourceInfo& StatefulSets() {
    return Resource("apps", "v1", "statefulsets");
  }
  const ResourceInfo& Revisions() {
    return Resource("apps", "v1", "controllerrevisions");
  }

  api::ObjectPtr CreateSet(const std::string& name, const std::string& image) {
    return Create(
        StatefulSets(), "default",
        "{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{"
        "\"name\":\"" +
            name +
            "\",\"annotations\":{\"note\":\"x\"}},\"spec\":{"
            "\"serviceName\":\"" +
            name + "\",\"selector\":{\"matchLabels\":{\"app\":\"" + name +
            "\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"" + name +
            "\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"" +
            image + "\"}]}}}}");
  }

  api::ObjectPtr SetImage(const std::string& name, const std::string& image) {
    api::ObjectBuilder b = Get(StatefulSets(), "default", name)->ToBuilder();
    EXPECT_TRUE(
        b.SetString("/spec/template/spec/containers/0/image", image).ok());
    auto w = registry_.Update(StatefulSets(), "default", name, std::move(b));
    EXPECT_TRUE(w.ok()) << w.status();
    return w.ok() ? w->object : nullptr;
  }

  History Sync(const api::Object& owner,
               const HistoryStyle& style = kStatefulSetHistory) {
    absl::StatusOr<History> h = SyncHistory(&registry_, owner, style);
    EXPECT_TRUE(h.ok()) << h.status();
    return h.ok() ? *std::move(h) : History();
  }

  std::vector<std::string> RevisionNames() {
    std::vector<std::string> out;
    for (const api::ObjectPtr& r :
         storage_.Snapshot("apps/controllerrevisions")) {
      out.emplace_back(r->name());
    }
    return out;
  }
};

TEST_F(ControllerHistoryTest, SnapshotsTheTemplateOnce) {
  api::ObjectPtr set = CreateSet("web", "nginx:1");
  const History h = Sync(*set);
  ASSERT_NE(h.update, nullptr);
  EXPECT_EQ(h.update->name(), "web-" + h.hash);
  EXPECT_EQ(RevisionNumber(*h.update), 1);
  EXPECT_EQ(h.update->Label("app"), "web");
  EXPECT_EQ(h.update->Label("controller.kubernetes.io/hash"), h.hash);
  EXPECT_EQ(h.update->Annotation("note"), "x");
  ASSERT_TRUE(h.update->controller_reference().has_value());
  EXPECT_EQ(h.update->controller_reference()->uid, set->uid());
  EXPECT_EQ(h.update->controller_reference()->kind, "StatefulSet");
  ASSERT_NE(h.update->Find("/data/spec/template/$patch"), nullptr);
  EXPECT_EQ(h.collision_count, 0);

  absl::StatusOr<rapidjson::Document> t = RevisionTemplate(*h.update);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->FindMember("$patch"), t->MemberEnd());
  EXPECT_STREQ((*t)["spec"]["containers"][0]["image"].GetString(), "nginx:1");

  // The same template again: the same revision, nothing written.
  const int64_t rv = storage_.CurrentResourceVersion();
  const History again = Sync(*set);
  EXPECT_EQ(again.update->name(), h.update->name());
  EXPECT_EQ(again.revisions.size(), 1u);
  EXPECT_EQ(storage_.CurrentResourceVersion(), rv);
}

TEST_F(ControllerHistoryTest, NewTemplateNewRevisionRollbackRenumbers) {
  api::ObjectPtr set = CreateSet("web", "nginx:1");
  const History first = Sync(*set);
  set = SetImage("web", "nginx:2");
  const History second = Sync(*set);
  EXPECT_NE(second.update->name(), first.update->name());
  EXPECT_EQ(RevisionNumber(*second.update), 2);
  ASSERT_EQ(second.revisions.size(), 2u);
  EXPECT_EQ(second.revisions[0]->name(), first.update->name());

  // Back to nginx:1: the first revision is reused as number 3.
  set = SetImage("web", "nginx:1");
  const History third = Sync(*set);
  EXPECT_EQ(third.update->name(), first.update->name());
  EXPECT_EQ(RevisionNumber(*third.update), 3);
  EXPECT_EQ(third.revisions.back()->name(), first.update->name());
  EXPECT_EQ(FindRevision(third, second.update->name())->name(),
            second.update->name());
  EXPECT_EQ(RevisionNames().size(), 2u);
}

TEST_F(ControllerHistoryTest, TruncateKeepsLiveAndUpdate) {
  api::ObjectPtr set = CreateSet("web", "v0");
  Sync(*set);
  std::vector<std::string> names;
  for (int i = 1; i <= 5; ++i) {
    set = SetImage("web", "v" + std::to_string(i));
    names.emplace_back(Sync(*set).update->name());
  }
  History h = Sync(*set);
  ASSERT_EQ(h.revisions.size(), 6u);
  // v1 is live (a pod runs it); keep one more non-live: v4.
  ASSERT_TRUE(TruncateHistory(&registry_, h, {names[0]}, 1).ok());
  std::vector<std::string> left = RevisionNames();
  std::sort(left.begin(), left.end());
  std::vector<std::string> want = {names[0], names[3], names[4]};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(left, want);
}

TEST_F(ControllerHistoryTest, AdoptsMatchingOrphansAndReleasesOthers) {
  api::ObjectPtr set = CreateSet("web", "nginx:1");
  Create(Revisions(), "default",
         "{\"apiVersion\":\"apps/v1\",\"kind\":\"ControllerRevision\","
         "\"metadata\":{\"name\":\"old\",\"labels\":{\"app\":\"web\"}},"
         "\"data\":{\"spec\":{\"template\":{\"$patch\":\"replace\"}}},"
         "\"revision\":7}");
  Create(Revisions(), "default",
         "{\"apiVersion\":\"apps/v1\",\"kind\":\"ControllerRevision\","
         "\"metadata\":{\"name\":\"other\",\"labels\":{\"app\":\"db\"}},"
         "\"revision\":1}");
  const History h = Sync(*set);
  ASSERT_EQ(h.revisions.size(), 2u);
  EXPECT_EQ(h.revisions[0]->name(), "old");
  EXPECT_EQ(RevisionNumber(*h.update), 8);
  api::ObjectPtr old = Get(Revisions(), "default", "old");
  ASSERT_TRUE(old->controller_reference().has_value());
  EXPECT_EQ(old->controller_reference()->uid, set->uid());
  EXPECT_FALSE(
      Get(Revisions(), "default", "other")->controller_reference().has_value());

  // Relabelled out of the selector: released.
  api::ObjectBuilder b = old->ToBuilder();
  b.SetLabel("app", "elsewhere");
  ASSERT_TRUE(
      registry_.Update(Revisions(), "default", "old", std::move(b)).ok());
  EXPECT_EQ(Sync(*set).revisions.size(), 1u);
  EXPECT_FALSE(
      Get(Revisions(), "default", "old")->controller_reference().has_value());
}

TEST_F(ControllerHistoryTest, NameCollisionRaisesTheCount) {
  api::ObjectPtr set = CreateSet("web", "nginx:1");
  const std::string hash = Sync(*set).hash;
  // Someone else's revision under the name nginx:2 would get.
  set = SetImage("web", "nginx:2");
  const std::string name2 = [&] {
    History h = Sync(*set);
    std::string n(h.update->name());
    EXPECT_TRUE(registry_.Delete(Revisions(), "default", n, {}).ok());
    return n;
  }();
  Create(Revisions(), "default",
         "{\"apiVersion\":\"apps/v1\",\"kind\":\"ControllerRevision\","
         "\"metadata\":{\"name\":\"" +
             name2 +
             "\",\"labels\":{\"app\":\"db\"}},\"data\":{\"x\":1},"
             "\"revision\":1}");
  const History h = Sync(*set);
  EXPECT_EQ(h.collision_count, 1);
  EXPECT_NE(h.update->name(), name2);
  EXPECT_NE(h.hash, hash);
}

}  // namespace
}  // namespace kcr::apiserver
