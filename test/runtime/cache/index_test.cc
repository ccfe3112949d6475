#include "runtime/cache/index.h"

#include <map>
#include <string>
#include <vector>

#include "api/object.h"
#include "api/object_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kcr::cache {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

api::ObjectPtr Parse(std::string_view json) {
  absl::StatusOr<api::ObjectPtr> object = api::Object::Parse(json);
  EXPECT_TRUE(object.ok()) << object.status();
  return *object;
}

TEST(IndexFuncTest, NamespaceIndexesClusterScopedUnderEmpty) {
  IndexFunc f = MetaNamespaceIndexFunc();
  EXPECT_THAT(f(*Parse(R"({"metadata":{"name":"a","namespace":"ns"}})")),
              ElementsAre("ns"));
  EXPECT_THAT(f(*Parse(R"({"metadata":{"name":"a"}})")), ElementsAre(""));
}

TEST(IndexFuncTest, LabelIndexTakesOneLabel) {
  IndexFunc f = LabelIndexFunc("app");
  EXPECT_THAT(f(*Parse(R"({"metadata":{"name":"a","labels":{"app":"web"}}})")),
              ElementsAre("web"));
  EXPECT_THAT(f(*Parse(R"({"metadata":{"name":"a","labels":{"x":"web"}}})")),
              IsEmpty());
  EXPECT_THAT(f(*Parse(R"({"metadata":{"name":"a","labels":{"app":""}}})")),
              ElementsAre(""));
  EXPECT_THAT(f(*Parse(R"({"metadata":{"name":"a"}})")), IsEmpty());
}

TEST(IndexFuncTest, ControllerOwnerUid) {
  IndexFunc f = ControllerOwnerUidIndexFunc();
  EXPECT_THAT(f(*Parse(R"({"metadata":{"name":"a","ownerReferences":[
      {"apiVersion":"v1","kind":"X","name":"o1","uid":"u1"},
      {"apiVersion":"apps/v1","kind":"ReplicaSet","name":"o2","uid":"u2",
       "controller":true}]}})")),
              ElementsAre("u2"));
  EXPECT_THAT(f(*Parse(R"({"metadata":{"name":"a","ownerReferences":[
      {"apiVersion":"v1","kind":"X","name":"o1","uid":"u1"}]}})")),
              IsEmpty());
  EXPECT_THAT(f(*Parse(R"({"metadata":{"name":"a"}})")), IsEmpty());
}

TEST(IndexFuncTest, ValuesUnchangedOnlyForKnownFunctions) {
  const api::ObjectPtr web = Parse(
      R"({"metadata":{"name":"a","namespace":"n","labels":{"app":"web"}}})");
  const api::ObjectPtr web2 = Parse(
      R"({"metadata":{"name":"a","namespace":"n","resourceVersion":"2",
          "labels":{"app":"web","x":"y"}}})");
  const api::ObjectPtr db = Parse(
      R"({"metadata":{"name":"a","namespace":"m","labels":{"app":"db"}}})");
  const api::ObjectPtr empty =
      Parse(R"({"metadata":{"name":"a","namespace":"n","labels":{"app":""}}})");
  const api::ObjectPtr none = Parse(R"({"metadata":{"name":"a"}})");

  const IndexFunc ns = MetaNamespaceIndexFunc();
  EXPECT_TRUE(IndexValuesUnchanged(ns, *web, *web2));
  EXPECT_FALSE(IndexValuesUnchanged(ns, *web, *db));
  EXPECT_FALSE(IndexValuesUnchanged(ns, *web, *none));

  const IndexFunc app = LabelIndexFunc("app");
  EXPECT_TRUE(IndexValuesUnchanged(app, *web, *web2));
  EXPECT_FALSE(IndexValuesUnchanged(app, *web, *db));
  // An empty value is a value; no label is none.
  EXPECT_FALSE(IndexValuesUnchanged(app, *empty, *none));
  EXPECT_TRUE(IndexValuesUnchanged(app, *none, *none));

  // Any other function is called, never assumed to agree.
  const IndexFunc other = [](const api::Object&) {
    return std::vector<std::string>{"same"};
  };
  EXPECT_FALSE(IndexValuesUnchanged(other, *web, *web));
  EXPECT_FALSE(IndexValuesUnchanged(ControllerOwnerUidIndexFunc(), *web, *web));
}

}  // namespace
}  // namespace kcr::cache
