#include "runtime/cache/thread_safe_store.h"

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/object.h"
#include "api/object_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/cache/index.h"

namespace kcr::cache {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;
using ::testing::UnorderedElementsAreArray;

api::ObjectPtr Pod(std::string_view ns, std::string_view name,
                   std::map<std::string, std::string> labels = {},
                   std::string_view rv = "1") {
  api::ObjectBuilder b("v1", "Pod");
  b.SetName(name).SetResourceVersion(rv).SetLabels(labels);
  if (!ns.empty()) b.SetNamespace(ns);
  absl::StatusOr<api::ObjectPtr> pod = b.Build();
  EXPECT_TRUE(pod.ok()) << pod.status();
  return *pod;
}

api::ObjectPtr Nameless() {
  absl::StatusOr<api::ObjectPtr> obj =
      api::Object::Parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{}})");
  EXPECT_TRUE(obj.ok()) << obj.status();
  return *obj;
}

std::vector<std::string> Keys(const std::vector<api::ObjectPtr>& objects) {
  std::vector<std::string> keys;
  for (const auto& o : objects) keys.push_back(o->Key());
  std::sort(keys.begin(), keys.end());
  return keys;
}

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// Indexed under the value of label "tier" and, when it has one, label
// "extra" as well: a multi-valued index.
std::vector<std::string> Tiers(const api::Object& o) {
  std::vector<std::string> values;
  if (auto t = o.Label("tier")) values.emplace_back(*t);
  if (auto e = o.Label("extra")) values.emplace_back(*e);
  return values;
}

Indexers DefaultIndexers() {
  Indexers indexers;
  indexers.emplace(std::string(kNamespaceIndex), MetaNamespaceIndexFunc());
  indexers.emplace("tier", Tiers);
  return indexers;
}

TEST(ThreadSafeStoreTest, AddGetUpdateDelete) {
  ThreadSafeStore store(DefaultIndexers());
  EXPECT_EQ(store.size(), 0u);
  ASSERT_TRUE(store.Add(Pod("ns", "a")).ok());
  ASSERT_TRUE(store.Add(Pod("", "cluster")).ok());
  EXPECT_EQ(store.size(), 2u);
  ASSERT_NE(store.GetByKey("ns/a"), nullptr);
  EXPECT_EQ(store.GetByKey("ns/a")->name(), "a");
  EXPECT_NE(store.GetByKey("cluster"), nullptr);
  EXPECT_EQ(store.GetByKey("ns/missing"), nullptr);
  EXPECT_NE(store.Get(*Pod("ns", "a")), nullptr);

  ASSERT_TRUE(store.Update(Pod("ns", "a", {}, "2")).ok());
  EXPECT_EQ(store.GetByKey("ns/a")->resource_version(), "2");
  EXPECT_EQ(store.size(), 2u);

  ASSERT_TRUE(store.Delete(Pod("ns", "a")).ok());
  EXPECT_EQ(store.GetByKey("ns/a"), nullptr);
  EXPECT_EQ(store.size(), 1u);
  // Deleting what is not there is fine.
  EXPECT_TRUE(store.Delete(Pod("ns", "a")).ok());
  EXPECT_TRUE(store.Resync().ok());
}

TEST(ThreadSafeStoreTest, ObjectsWithoutNameAreRejected) {
  ThreadSafeStore store;
  EXPECT_EQ(store.Add(Nameless()).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store.Update(Nameless()).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store.Delete(Nameless()).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store.Upsert(Nameless()), nullptr);
  EXPECT_EQ(store.size(), 0u);
}

TEST(ThreadSafeStoreTest, UpsertAndRemoveReturnPrevious) {
  ThreadSafeStore store;
  api::ObjectPtr v1 = Pod("ns", "a", {}, "1");
  api::ObjectPtr v2 = Pod("ns", "a", {}, "2");
  EXPECT_EQ(store.Upsert(v1), nullptr);
  EXPECT_EQ(store.Upsert(v2), v1);
  EXPECT_EQ(store.Remove("ns/a"), v2);
  EXPECT_EQ(store.Remove("ns/a"), nullptr);
  EXPECT_EQ(store.size(), 0u);
}

// Keys are read from the stored object: after an update the key must come
// from the new object, as the old one may be gone.
TEST(ThreadSafeStoreTest, KeyOutlivesTheObjectAnUpdateReplaced) {
  ThreadSafeStore store({{"namespace", MetaNamespaceIndexFunc()}});
  ASSERT_EQ(store.Upsert(Pod("ns", "a", {}, "1")), nullptr);
  {
    api::ObjectPtr old = store.Upsert(Pod("ns", "a", {}, "2"));
    ASSERT_NE(old, nullptr);
    EXPECT_EQ(old->resource_version(), "1");
  }  // the first version is freed here
  ASSERT_EQ(store.Upsert(Pod("ns", "b")), nullptr);
  api::ObjectPtr got = store.GetByKey("ns/a");
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(got->resource_version(), "2");
  EXPECT_THAT(*store.IndexKeys("namespace", "ns"),
              UnorderedElementsAre("ns/a", "ns/b"));
  EXPECT_EQ(store.ReplaceAll({}).count("ns/a"), 1u);
}

// client-go keys by the "namespace/name" string: a cluster-scoped object
// named "a/b" has the key of object "b" in namespace "a".
TEST(ThreadSafeStoreTest, KeysCompareAsStrings) {
  ThreadSafeStore store;
  api::ObjectPtr namespaced = Pod("a", "b");
  api::ObjectPtr cluster = Pod("", "a/b");
  EXPECT_EQ(store.Upsert(namespaced), nullptr);
  EXPECT_EQ(store.Upsert(cluster), namespaced);
  EXPECT_EQ(store.size(), 1u);
  EXPECT_EQ(store.GetByKey("a/b"), cluster);
  EXPECT_EQ(store.GetByKey("a"), nullptr);
  EXPECT_EQ(store.GetByKey("b"), nullptr);
  EXPECT_EQ(store.GetByKey("a/"), nullptr);
  EXPECT_EQ(store.GetByKey("/b"), nullptr);
  EXPECT_EQ(store.Remove("a/b"), cluster);
  EXPECT_EQ(store.size(), 0u);
}

TEST(ThreadSafeStoreTest, ListAndListKeys) {
  ThreadSafeStore store;
  EXPECT_THAT(store.List(), IsEmpty());
  for (int i = 0; i < 600; ++i) {
    ASSERT_TRUE(store.Add(Pod("ns", absl::StrCat("p", i))).ok());
  }
  for (int i = 0; i < 600; i += 3) store.Remove(absl::StrCat("ns/p", i));
  std::vector<std::string> expected;
  for (int i = 0; i < 600; ++i) {
    if (i % 3 != 0) expected.push_back(absl::StrCat("ns/p", i));
  }
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(Keys(store.List()), expected);
  EXPECT_EQ(Sorted(store.ListKeys()), expected);
  EXPECT_EQ(store.size(), expected.size());
}

TEST(ThreadSafeStoreTest, ListSnapshotIsUnchangedByLaterWrites) {
  ThreadSafeStore store;
  for (int i = 0; i < 300; ++i) store.Upsert(Pod("ns", absl::StrCat("p", i)));
  std::vector<api::ObjectPtr> before = store.List();
  std::vector<api::ObjectPtr> again = store.List();
  // Writes after the snapshot: updates, removals (which move the last
  // object into the hole) and inserts into the last chunk.
  for (int i = 0; i < 300; i += 2) {
    store.Upsert(Pod("ns", absl::StrCat("p", i), {}, "2"));
  }
  for (int i = 1; i < 300; i += 4) store.Remove(absl::StrCat("ns/p", i));
  store.Upsert(Pod("ns", "new"));
  EXPECT_EQ(before, again);
  ASSERT_EQ(before.size(), 300u);
  for (const auto& o : before) EXPECT_EQ(o->resource_version(), "1");
  std::vector<api::ObjectPtr> after = store.List();
  EXPECT_EQ(after.size(), 300u - 75u + 1u);
  for (const auto& o : after) {
    EXPECT_EQ(store.GetByKey(o->Key()), o);
  }
}

TEST(ThreadSafeStoreTest, ByIndexAndIndexKeys) {
  ThreadSafeStore store(DefaultIndexers());
  store.Upsert(Pod("a", "web1", {{"tier", "web"}}));
  store.Upsert(Pod("a", "db1", {{"tier", "db"}}));
  store.Upsert(Pod("b", "web2", {{"tier", "web"}}));
  store.Upsert(Pod("b", "plain"));

  auto in_a = store.ByIndex(kNamespaceIndex, "a");
  ASSERT_TRUE(in_a.ok());
  EXPECT_THAT(Keys(*in_a), ElementsAre("a/db1", "a/web1"));
  auto web = store.IndexKeys("tier", "web");
  ASSERT_TRUE(web.ok());
  EXPECT_THAT(*web, UnorderedElementsAre("a/web1", "b/web2"));
  auto none = store.ByIndex("tier", "cache");
  ASSERT_TRUE(none.ok());
  EXPECT_THAT(*none, IsEmpty());

  EXPECT_EQ(store.ByIndex("nope", "a").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store.IndexKeys("nope", "a").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store.Index("nope", *Pod("a", "x")).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_THAT(store.ListIndexFuncValues("nope"), IsEmpty());
  EXPECT_THAT(store.ListIndexFuncValues("tier"),
              UnorderedElementsAre("web", "db"));
  EXPECT_THAT(store.ListIndexFuncValues(kNamespaceIndex),
              UnorderedElementsAre("a", "b"));
  EXPECT_THAT(store.IndexNames(), ElementsAre("namespace", "tier"));
}

TEST(ThreadSafeStoreTest, IndexUnionsEveryValueOfTheObject) {
  ThreadSafeStore store(DefaultIndexers());
  store.Upsert(Pod("a", "web", {{"tier", "web"}}));
  store.Upsert(Pod("a", "db", {{"tier", "db"}}));
  store.Upsert(Pod("a", "both", {{"tier", "web"}, {"extra", "db"}}));
  store.Upsert(Pod("a", "other", {{"tier", "cache"}}));
  auto one = store.Index("tier", *Pod("x", "probe", {{"tier", "web"}}));
  ASSERT_TRUE(one.ok());
  EXPECT_THAT(Keys(*one), ElementsAre("a/both", "a/web"));
  auto two = store.Index(
      "tier", *Pod("x", "probe", {{"tier", "web"}, {"extra", "db"}}));
  ASSERT_TRUE(two.ok());
  EXPECT_THAT(Keys(*two), ElementsAre("a/both", "a/db", "a/web"));
  auto zero = store.Index("tier", *Pod("x", "probe"));
  ASSERT_TRUE(zero.ok());
  EXPECT_THAT(*zero, IsEmpty());
}

TEST(ThreadSafeStoreTest, EmptyIndexSetsAreDropped) {
  ThreadSafeStore store(DefaultIndexers());
  store.Upsert(Pod("a", "p", {{"tier", "web"}}));
  store.Upsert(Pod("a", "p", {{"tier", "db"}}));
  EXPECT_THAT(store.ListIndexFuncValues("tier"), ElementsAre("db"));
  EXPECT_THAT(*store.IndexKeys("tier", "web"), IsEmpty());
  store.Remove("a/p");
  EXPECT_THAT(store.ListIndexFuncValues("tier"), IsEmpty());
  EXPECT_THAT(store.ListIndexFuncValues(kNamespaceIndex), IsEmpty());
}

TEST(ThreadSafeStoreTest, LabelIndexFollowsUpdates) {
  Indexers indexers;
  indexers.emplace(std::string(kNamespaceIndex), MetaNamespaceIndexFunc());
  indexers.emplace("app", LabelIndexFunc("app"));
  ThreadSafeStore store(std::move(indexers));
  store.Upsert(Pod("a", "p", {{"app", "web"}}, "1"));
  // Same label value, other labels changed: still indexed once, under web.
  store.Upsert(Pod("a", "p", {{"app", "web"}, {"x", "y"}}, "2"));
  EXPECT_THAT(*store.IndexKeys("app", "web"), ElementsAre("a/p"));
  EXPECT_THAT(*store.IndexKeys(kNamespaceIndex, "a"), ElementsAre("a/p"));
  store.Upsert(Pod("a", "p", {{"app", "db"}}, "3"));
  EXPECT_THAT(store.ListIndexFuncValues("app"), ElementsAre("db"));
  store.Upsert(Pod("a", "p", {}, "4"));
  EXPECT_THAT(store.ListIndexFuncValues("app"), IsEmpty());
  store.Upsert(Pod("a", "p", {{"app", ""}}, "5"));
  EXPECT_THAT(*store.IndexKeys("app", ""), ElementsAre("a/p"));
  EXPECT_THAT(*store.IndexKeys(kNamespaceIndex, "a"), ElementsAre("a/p"));
}

TEST(ThreadSafeStoreTest, NamespaceIndexWhenNamesShareAKey) {
  // A name with '/' (which the API server would refuse) makes a
  // cluster-scoped object's key that of a namespaced one.
  ThreadSafeStore store(DefaultIndexers());
  store.Upsert(Pod("", "a/b"));
  EXPECT_THAT(*store.IndexKeys(kNamespaceIndex, ""), ElementsAre("a/b"));
  store.Upsert(Pod("a", "b"));
  EXPECT_THAT(store.ListIndexFuncValues(kNamespaceIndex), ElementsAre("a"));
  store.Upsert(Pod("", "a/b"));
  EXPECT_THAT(store.ListIndexFuncValues(kNamespaceIndex), ElementsAre(""));
  store.Upsert(Pod("", "a/b", {}, "2"));
  EXPECT_THAT(store.ListIndexFuncValues(kNamespaceIndex), ElementsAre(""));
}

TEST(ThreadSafeStoreTest, AddIndexersIndexesExistingObjects) {
  ThreadSafeStore store;
  store.Upsert(Pod("a", "p1", {{"app", "x"}}));
  store.Upsert(Pod("b", "p2", {{"app", "y"}}));
  store.Upsert(Pod("b", "p3"));
  Indexers more;
  more.emplace("app", LabelIndexFunc("app"));
  more.emplace(std::string(kNamespaceIndex), MetaNamespaceIndexFunc());
  ASSERT_TRUE(store.AddIndexers(std::move(more)).ok());
  EXPECT_THAT(*store.IndexKeys("app", "x"), ElementsAre("a/p1"));
  EXPECT_THAT(Sorted(*store.IndexKeys(kNamespaceIndex, "b")),
              ElementsAre("b/p2", "b/p3"));
  // Later writes keep the new index up to date.
  store.Upsert(Pod("b", "p3", {{"app", "x"}}));
  EXPECT_THAT(Sorted(*store.IndexKeys("app", "x")),
              ElementsAre("a/p1", "b/p3"));

  // A conflict adds nothing, not even the names that were free.
  Indexers conflicting;
  conflicting.emplace("app", LabelIndexFunc("app"));
  conflicting.emplace("zzz", LabelIndexFunc("zzz"));
  EXPECT_EQ(store.AddIndexers(std::move(conflicting)).code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(store.IndexNames(), ElementsAre("app", "namespace"));
}

TEST(ThreadSafeStoreTest, ReplaceAllSwapsContentsAndReturnsOld) {
  ThreadSafeStore store(DefaultIndexers());
  api::ObjectPtr keep_old = Pod("a", "keep", {{"tier", "web"}}, "1");
  store.Upsert(keep_old);
  store.Upsert(Pod("a", "gone", {{"tier", "db"}}));

  api::ObjectPtr keep_new = Pod("a", "keep", {{"tier", "db"}}, "2");
  ThreadSafeStore::ItemMap old = store.ReplaceAll(
      {Pod("b", "dup", {}, "1"), keep_new, Nameless(), Pod("b", "dup", {}, "9"),
       Pod("b", "fresh", {{"tier", "web"}})});
  ASSERT_EQ(old.size(), 2u);
  EXPECT_EQ(old["a/keep"], keep_old);
  EXPECT_EQ(old["a/gone"]->name(), "gone");

  EXPECT_EQ(store.size(), 3u);
  EXPECT_EQ(store.GetByKey("a/keep"), keep_new);
  EXPECT_EQ(store.GetByKey("b/dup")->resource_version(), "9");
  EXPECT_EQ(store.GetByKey("a/gone"), nullptr);
  EXPECT_THAT(*store.IndexKeys("tier", "web"), ElementsAre("b/fresh"));
  EXPECT_THAT(*store.IndexKeys("tier", "db"), ElementsAre("a/keep"));
  EXPECT_THAT(Sorted(store.ListIndexFuncValues(kNamespaceIndex)),
              ElementsAre("a", "b"));

  // The Store interface reports what it left out but keeps the rest.
  EXPECT_EQ(store.Replace({Pod("c", "x"), Nameless()}, "10").code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(store.ListKeys(), ElementsAre("c/x"));
  EXPECT_TRUE(store.Replace({}, "11").ok());
  EXPECT_EQ(store.size(), 0u);
  EXPECT_THAT(store.ListIndexFuncValues("tier"), IsEmpty());
}

// Random operations against a plain map; after every step each index must
// equal the one recomputed from the map.
TEST(ThreadSafeStoreTest, MatchesModelUnderRandomOperations) {
  std::mt19937 rng(20261124);
  ThreadSafeStore store(DefaultIndexers());
  std::map<std::string, api::ObjectPtr> model;
  auto random_pod = [&](int version) {
    std::uniform_int_distribution<int> ns(0, 4), name(0, 700), tier(0, 3);
    std::map<std::string, std::string> labels;
    int t = tier(rng);
    if (t > 0) labels["tier"] = absl::StrCat("t", t);
    if (tier(rng) == 0) labels["extra"] = absl::StrCat("t", tier(rng));
    return Pod(absl::StrCat("ns", ns(rng)), absl::StrCat("p", name(rng)),
               labels, absl::StrCat(version));
  };
  auto check = [&]() {
    ASSERT_EQ(store.size(), model.size());
    std::map<std::string, std::set<std::string>> by_ns, by_tier;
    for (const auto& [key, obj] : model) {
      ASSERT_EQ(store.GetByKey(key), obj) << key;
      by_ns[std::string(obj->namespace_())].insert(key);
      for (const std::string& v : Tiers(*obj)) by_tier[v].insert(key);
    }
    auto expect_index =
        [&](std::string_view name,
            const std::map<std::string, std::set<std::string>>& expected) {
          std::vector<std::string> values;
          for (const auto& [value, keys] : expected) {
            values.push_back(value);
            auto got = store.IndexKeys(name, value);
            ASSERT_TRUE(got.ok());
            EXPECT_THAT(*got, UnorderedElementsAreArray(keys)) << value;
            auto objects = store.ByIndex(name, value);
            ASSERT_TRUE(objects.ok());
            EXPECT_EQ(objects->size(), keys.size());
          }
          EXPECT_THAT(store.ListIndexFuncValues(name),
                      UnorderedElementsAreArray(values));
        };
    expect_index(kNamespaceIndex, by_ns);
    expect_index("tier", by_tier);
    std::vector<std::string> keys;
    for (const auto& [key, obj] : model) keys.push_back(key);
    EXPECT_EQ(Keys(store.List()), keys);
  };
  std::uniform_int_distribution<int> op(0, 99);
  for (int step = 0; step < 4000; ++step) {
    const int o = op(rng);
    if (o < 60) {
      api::ObjectPtr pod = random_pod(step);
      auto it = model.find(pod->Key());
      api::ObjectPtr expected_old = it == model.end() ? nullptr : it->second;
      EXPECT_EQ(store.Upsert(pod), expected_old);
      model[pod->Key()] = pod;
    } else if (o < 95) {
      std::string key = random_pod(step)->Key();
      auto it = model.find(key);
      api::ObjectPtr expected = it == model.end() ? nullptr : it->second;
      EXPECT_EQ(store.Remove(key), expected);
      model.erase(key);
    } else if (o < 97) {
      std::vector<api::ObjectPtr> list;
      std::map<std::string, api::ObjectPtr> next;
      for (int i = 0; i < 400; ++i) {
        api::ObjectPtr pod = random_pod(step);
        list.push_back(pod);
        next[pod->Key()] = pod;
      }
      ThreadSafeStore::ItemMap old = store.ReplaceAll(list);
      std::map<std::string, api::ObjectPtr> old_sorted(old.begin(), old.end());
      EXPECT_EQ(old_sorted, model);
      model = std::move(next);
    } else {
      store.List();  // makes the next writes copy chunks
    }
    if (step % 200 == 0) check();
  }
  check();
}

// Readers, writers, Replace and AddIndexers at once; run under TSan. The
// readers check what must hold at every instant.
TEST(ThreadSafeStoreTest, ConcurrentReadersWritersReplaceAndAddIndexers) {
  ThreadSafeStore store(DefaultIndexers());
  constexpr int kKeys = 500;
  constexpr int kWrites = 3000;
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; ++w) {
    threads.emplace_back([&store, w] {
      std::mt19937 rng(w);
      for (int i = 0; i < kWrites; ++i) {
        std::string name = absl::StrCat("p", rng() % kKeys);
        if (rng() % 4 == 0) {
          store.Remove(absl::StrCat("ns", w, "/", name));
        } else {
          store.Upsert(Pod(absl::StrCat("ns", w), name,
                           {{"tier", absl::StrCat("t", rng() % 3)},
                            {"app", absl::StrCat("a", rng() % 2)}}));
        }
      }
    });
  }
  threads.emplace_back([&store] {
    for (int r = 0; r < 20; ++r) {
      std::vector<api::ObjectPtr> list;
      for (int i = 0; i < 300; ++i) {
        list.push_back(Pod("ns9", absl::StrCat("p", i), {{"tier", "t1"}}));
      }
      store.ReplaceAll(std::move(list));
    }
  });
  threads.emplace_back([&store] {
    for (int i = 0; i < 5; ++i) {
      Indexers more;
      more.emplace(absl::StrCat("app", i), LabelIndexFunc("app"));
      EXPECT_TRUE(store.AddIndexers(std::move(more)).ok());
    }
  });
  for (int r = 0; r < 3; ++r) {
    threads.emplace_back([&store, r] {
      for (int i = 0; i < 400; ++i) {
        std::string tier = absl::StrCat("t", i % 3);
        auto by_tier = store.ByIndex("tier", tier);
        ASSERT_TRUE(by_tier.ok());
        for (const auto& o : *by_tier) EXPECT_EQ(*o->Label("tier"), tier);
        auto in_ns = store.ByIndex(kNamespaceIndex, "ns0");
        ASSERT_TRUE(in_ns.ok());
        for (const auto& o : *in_ns) EXPECT_EQ(o->namespace_(), "ns0");
        if (i % 20 == r) {
          std::vector<api::ObjectPtr> all = store.List();
          std::set<std::string> keys;
          for (const auto& o : all) keys.insert(o->Key());
          EXPECT_EQ(keys.size(), all.size());  // no key twice
          store.ListKeys();
        }
        store.GetByKey("ns1/p7");
        store.ListIndexFuncValues("tier");
        store.IndexNames();
        if (auto app = store.IndexKeys("app0", "a1"); app.ok()) {
          for (const auto& k : *app) EXPECT_FALSE(k.empty());
        }
      }
    });
  }
  for (auto& t : threads) t.join();

  // Every index is exact once the writers are done.
  std::map<std::string, std::set<std::string>> by_tier, by_app;
  for (const auto& o : store.List()) {
    by_tier[std::string(*o->Label("tier"))].insert(o->Key());
    if (auto app = o->Label("app")) by_app[std::string(*app)].insert(o->Key());
  }
  for (const auto& [tier, keys] : by_tier) {
    EXPECT_THAT(*store.IndexKeys("tier", tier),
                UnorderedElementsAreArray(keys));
  }
  for (int i = 0; i < 5; ++i) {
    for (const auto& [app, keys] : by_app) {
      EXPECT_THAT(*store.IndexKeys(absl::StrCat("app", i), app),
                  UnorderedElementsAreArray(keys));
    }
  }
}

}  // namespace
}  // namespace kcr::cache
