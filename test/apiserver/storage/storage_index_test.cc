// Storage's indexes: objects filed by the values an IndexFunc gives, kept
// current on every write, looked up without scanning the collection.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "api/object.h"
#include "api/object_builder.h"
#include "apiserver/storage/storage.h"
#include "gtest/gtest.h"

namespace kcr {
namespace apiserver {
namespace {

// Files an object under each of its labels' "key=value".
void ByLabel(const api::Object& o, std::vector<std::string>* values) {
  for (const auto& [k, v] : o.labels()) {
    values->push_back(std::string(k) + "=" + std::string(v));
  }
}

void Put(Storage* storage, const std::string& collection, const std::string& ns,
         const std::string& name,
         const std::map<std::string, std::string>& labels) {
  ASSERT_TRUE(storage
                  ->Write(collection, ns, name,
                          [&](const api::ObjectPtr&) {
                            api::ObjectBuilder b("v1", "Thing");
                            b.SetNamespace(ns);
                            b.SetName(name);
                            b.SetLabels(labels);
                            return Storage::Mutation::Put(std::move(b));
                          })
                  .ok());
}

void Remove(Storage* storage, const std::string& collection,
            const std::string& ns, const std::string& name) {
  ASSERT_TRUE(storage
                  ->Write(collection, ns, name,
                          [](const api::ObjectPtr&) {
                            return Storage::Mutation::Remove();
                          })
                  .ok());
}

std::vector<std::string> Names(const std::vector<api::ObjectPtr>& objects) {
  std::vector<std::string> out;
  for (const api::ObjectPtr& o : objects) out.emplace_back(o->Key());
  return out;
}

TEST(StorageIndexTest, IndexesWhatIsStoredAndEveryLaterWrite) {
  Storage storage;
  Put(&storage, "/things", "a", "one", {{"app", "x"}});
  ASSERT_TRUE(storage.AddIndex("label", ByLabel));
  EXPECT_FALSE(storage.AddIndex("label", ByLabel));
  Put(&storage, "/things", "a", "two", {{"app", "x"}, {"tier", "web"}});
  Put(&storage, "/things", "b", "three", {{"app", "y"}});
  Put(&storage, "/others", "a", "four", {{"app", "x"}});

  EXPECT_EQ(Names(storage.ByIndex("/things", "label", "app=x")),
            (std::vector<std::string>{"a/one", "a/two"}));
  EXPECT_EQ(Names(storage.ByIndex("/things", "label", "tier=web")),
            (std::vector<std::string>{"a/two"}));
  EXPECT_EQ(Names(storage.ByIndex("/others", "label", "app=x")),
            (std::vector<std::string>{"a/four"}));
  EXPECT_TRUE(storage.ByIndex("/things", "label", "app=z").empty());
  EXPECT_TRUE(storage.ByIndex("/things", "nosuch", "app=x").empty());
  EXPECT_TRUE(storage.ByIndex("/nosuch", "label", "app=x").empty());

  std::vector<std::pair<std::string, api::ObjectPtr>> all =
      storage.ByIndexAll("label", "app=x");
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].first, "/others");
  EXPECT_EQ(all[1].first, "/things");
  EXPECT_EQ(all[2].second->name(), "two");
}

TEST(StorageIndexTest, UpdatesMoveAndDeletesRemove) {
  Storage storage;
  ASSERT_TRUE(storage.AddIndex("label", ByLabel));
  Put(&storage, "/things", "a", "one", {{"app", "x"}});
  Put(&storage, "/things", "a", "one", {{"app", "y"}});
  EXPECT_TRUE(storage.ByIndex("/things", "label", "app=x").empty());
  ASSERT_EQ(storage.ByIndex("/things", "label", "app=y").size(), 1u);
  // The object handed out is the current one.
  Put(&storage, "/things", "a", "one", {{"app", "y"}, {"v", "2"}});
  std::vector<api::ObjectPtr> current =
      storage.ByIndex("/things", "label", "app=y");
  ASSERT_EQ(current.size(), 1u);
  EXPECT_EQ(current[0]->Label("v").value_or(""), "2");
  Remove(&storage, "/things", "a", "one");
  EXPECT_TRUE(storage.ByIndex("/things", "label", "app=y").empty());
  EXPECT_TRUE(storage.ByIndexAll("label", "v=2").empty());
}

TEST(StorageIndexTest, ObjectsWithoutValuesAreLeftOut) {
  Storage storage;
  ASSERT_TRUE(storage.AddIndex("label", ByLabel));
  Put(&storage, "/things", "a", "bare", {});
  Put(&storage, "/things", "a", "dup", {{"k", "v"}});
  EXPECT_EQ(Names(storage.ByIndex("/things", "label", "k=v")),
            (std::vector<std::string>{"a/dup"}));
}

}  // namespace
}  // namespace apiserver
}  // namespace kcr
