#include "runtime/cache/lister.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "api/errors/errors.h"
#include "api/object.h"
#include "api/object_builder.h"
#include "api/selector/label_selector.h"
#include "api/types/deployment.h"
#include "api/types/pod.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/cache/index.h"
#include "runtime/cache/thread_safe_store.h"
#include "runtime/cache/typed_lister.h"

namespace kcr::cache {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

api::ObjectPtr Make(std::string_view kind, std::string_view ns,
                    std::string_view name,
                    std::map<std::string, std::string> labels = {}) {
  api::ObjectBuilder b(kind == "Deployment" ? "apps/v1" : "v1", kind);
  b.SetName(name).SetLabels(labels);
  if (!ns.empty()) b.SetNamespace(ns);
  absl::StatusOr<api::ObjectPtr> object = b.Build();
  EXPECT_TRUE(object.ok()) << object.status();
  return *object;
}

api::LabelSelector Selector(std::string_view text) {
  absl::StatusOr<api::LabelSelector> s = api::LabelSelector::Parse(text);
  EXPECT_TRUE(s.ok()) << s.status();
  return *s;
}

std::vector<std::string> Keys(const std::vector<api::ObjectPtr>& objects) {
  std::vector<std::string> keys;
  for (const auto& o : objects) keys.push_back(o->Key());
  std::sort(keys.begin(), keys.end());
  return keys;
}

Indexers NamespaceIndexers() {
  Indexers indexers;
  indexers.emplace(std::string(kNamespaceIndex), MetaNamespaceIndexFunc());
  return indexers;
}

void Fill(ThreadSafeStore& store) {
  store.Upsert(Make("Pod", "a", "web-0", {{"app", "web"}}));
  store.Upsert(Make("Pod", "a", "web-1", {{"app", "web"}, {"canary", "1"}}));
  store.Upsert(Make("Pod", "a", "db-0", {{"app", "db"}}));
  store.Upsert(Make("Pod", "b", "web-0", {{"app", "web"}}));
  store.Upsert(Make("Pod", "b", "bare"));
}

TEST(ListerTest, ListFiltersBySelector) {
  ThreadSafeStore store(NamespaceIndexers());
  Fill(store);
  Lister lister(&store, {"", "pods"});
  EXPECT_EQ(lister.List(api::LabelSelector::Everything()).size(), 5u);
  EXPECT_THAT(Keys(lister.List(Selector("app=web"))),
              ElementsAre("a/web-0", "a/web-1", "b/web-0"));
  EXPECT_THAT(Keys(lister.List(Selector("app=web,!canary"))),
              ElementsAre("a/web-0", "b/web-0"));
  EXPECT_THAT(Keys(lister.List(Selector("!app"))), ElementsAre("b/bare"));
  EXPECT_THAT(lister.List(api::LabelSelector::Nothing()), IsEmpty());
}

TEST(ListerTest, GetAndNotFound) {
  ThreadSafeStore store(NamespaceIndexers());
  Fill(store);
  store.Upsert(Make("Namespace", "", "a"));
  Lister pods(&store, {"", "pods"});
  absl::StatusOr<api::ObjectPtr> pod = pods.Get("a", "db-0");
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ((*pod)->Key(), "a/db-0");
  ASSERT_TRUE(pods.Get("", "a").ok());  // cluster-scoped key

  absl::StatusOr<api::ObjectPtr> missing = pods.Get("b", "db-0");
  EXPECT_TRUE(api::IsNotFound(missing.status())) << missing.status();
  EXPECT_EQ(missing.status().message(), "pods \"db-0\" not found");

  Lister deployments(&store, {"apps", "deployments"});
  EXPECT_EQ(deployments.Namespace("a").Get("x").status().message(),
            "deployments.apps \"x\" not found");
  EXPECT_EQ(deployments.resource().ToString(), "deployments.apps");
}

TEST(ListerTest, NamespaceListerUsesTheIndex) {
  ThreadSafeStore store(NamespaceIndexers());
  Fill(store);
  Lister lister(&store, {"", "pods"});
  NamespaceLister in_a = lister.Namespace("a");
  EXPECT_EQ(in_a.namespace_(), "a");
  EXPECT_THAT(Keys(in_a.List(api::LabelSelector::Everything())),
              ElementsAre("a/db-0", "a/web-0", "a/web-1"));
  EXPECT_THAT(Keys(in_a.List(Selector("app in (web)"))),
              ElementsAre("a/web-0", "a/web-1"));
  EXPECT_THAT(lister.Namespace("c").List(api::LabelSelector::Everything()),
              IsEmpty());
  ASSERT_TRUE(in_a.Get("web-1").ok());
  EXPECT_TRUE(api::IsNotFound(in_a.Get("bare").status()));
  // "" is every namespace, as client-go's NamespaceAll.
  EXPECT_EQ(lister.Namespace("").List(api::LabelSelector::Everything()).size(),
            5u);
}

TEST(ListerTest, NamespaceListWithoutIndexScans) {
  ThreadSafeStore store;  // no namespace index
  Fill(store);
  Lister lister(&store, {"", "pods"});
  EXPECT_THAT(
      Keys(lister.Namespace("b").List(api::LabelSelector::Everything())),
      ElementsAre("b/bare", "b/web-0"));
  EXPECT_THAT(Keys(lister.Namespace("a").List(Selector("app=db"))),
              ElementsAre("a/db-0"));
  EXPECT_THAT(ListAllByNamespace(store, "a", api::LabelSelector::Nothing()),
              IsEmpty());
}

TEST(ListerTest, ListerSeesCacheChanges) {
  ThreadSafeStore store(NamespaceIndexers());
  Lister lister(&store, {"", "pods"});
  EXPECT_THAT(lister.List(api::LabelSelector::Everything()), IsEmpty());
  store.Upsert(Make("Pod", "a", "p", {{"app", "web"}}));
  EXPECT_EQ(lister.List(Selector("app=web")).size(), 1u);
  store.Upsert(Make("Pod", "a", "p", {{"app", "db"}}));
  EXPECT_THAT(lister.Namespace("a").List(Selector("app=web")), IsEmpty());
  store.Remove("a/p");
  EXPECT_TRUE(api::IsNotFound(lister.Get("a", "p").status()));
}

TEST(TypedListerTest, PodListerReturnsViews) {
  ThreadSafeStore store(NamespaceIndexers());
  Fill(store);
  PodLister pods(&store);
  std::vector<api::PodView> web = pods.List(Selector("app=web"));
  ASSERT_EQ(web.size(), 3u);
  for (const api::PodView& pod : web) EXPECT_EQ(pod.object().kind(), "Pod");
  absl::StatusOr<api::PodView> db = pods.Namespace("a").Get("db-0");
  ASSERT_TRUE(db.ok()) << db.status();
  EXPECT_EQ(db->object().name(), "db-0");
  ASSERT_TRUE(pods.Get("b", "bare").ok());
  absl::StatusOr<api::PodView> missing = pods.Get("b", "nope");
  EXPECT_TRUE(api::IsNotFound(missing.status()));
  EXPECT_EQ(missing.status().message(), "pods \"nope\" not found");
  EXPECT_EQ(pods.Namespace("b").List(api::LabelSelector::Everything()).size(),
            2u);
}

TEST(TypedListerTest, ObjectsOfAnotherKindAreLeftOut) {
  ThreadSafeStore store(NamespaceIndexers());
  store.Upsert(Make("Deployment", "a", "d"));
  store.Upsert(Make("Pod", "a", "p"));
  DeploymentLister deployments(&store);
  std::vector<api::DeploymentView> all =
      deployments.List(api::LabelSelector::Everything());
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].object().name(), "d");
  EXPECT_TRUE(deployments.Namespace("a").Get("d").ok());
  absl::StatusOr<api::DeploymentView> wrong = deployments.Get("a", "p");
  EXPECT_FALSE(wrong.ok());
  EXPECT_FALSE(api::IsNotFound(wrong.status()));
  EXPECT_EQ(deployments.Get("a", "zz").status().message(),
            "deployments.apps \"zz\" not found");
}

}  // namespace
}  // namespace kcr::cache
