// A write's precondition: a check of another object in the write's hold.
#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "api/object.h"
#include "api/object_builder.h"
#include "apiserver/storage/storage.h"
#include "gtest/gtest.h"

namespace kcr {
namespace apiserver {
namespace {

Storage::Mutation Thing(const std::string& ns, const std::string& name) {
  api::ObjectBuilder b("v1", "Thing");
  b.SetNamespace(ns);
  b.SetName(name);
  return Storage::Mutation::Put(std::move(b));
}

absl::StatusOr<Storage::WriteResult> PutIfParent(Storage* storage,
                                                 const std::string& name,
                                                 int* fn_runs) {
  Storage::Precondition parent;
  parent.collection = "/parents";
  parent.name = "p";
  parent.check = [](const api::ObjectPtr& p) {
    return p == nullptr ? absl::NotFoundError("no parent") : absl::OkStatus();
  };
  return storage->Write(
      "/things", "p", name,
      [&](const api::ObjectPtr&) {
        ++*fn_runs;
        return Thing("p", name);
      },
      &parent);
}

TEST(StoragePreconditionTest, AFailedCheckAbortsTheWriteBeforeItsFunction) {
  Storage storage;
  const int64_t rv = storage.CurrentResourceVersion();
  int fn_runs = 0;
  auto result = PutIfParent(&storage, "a", &fn_runs);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(fn_runs, 0);
  EXPECT_EQ(storage.Get("/things", "p", "a"), nullptr);
  EXPECT_EQ(storage.CurrentResourceVersion(), rv);
}

TEST(StoragePreconditionTest, TheCheckSeesTheObjectAsStoredAtTheWrite) {
  Storage storage;
  ASSERT_TRUE(storage
                  .Write("/parents", "", "p",
                         [](const api::ObjectPtr&) { return Thing("", "p"); })
                  .ok());
  int fn_runs = 0;
  ASSERT_TRUE(PutIfParent(&storage, "a", &fn_runs).ok());
  EXPECT_EQ(fn_runs, 1);
  EXPECT_NE(storage.Get("/things", "p", "a"), nullptr);
  ASSERT_TRUE(storage
                  .Write("/parents", "", "p",
                         [](const api::ObjectPtr&) {
                           return Storage::Mutation::Remove();
                         })
                  .ok());
  auto result = PutIfParent(&storage, "b", &fn_runs);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(fn_runs, 1);
  EXPECT_EQ(storage.Get("/things", "p", "b"), nullptr);
}

}  // namespace
}  // namespace apiserver
}  // namespace kcr
