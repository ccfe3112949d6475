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

}  // namespace
}  // namespace kcr::cache
