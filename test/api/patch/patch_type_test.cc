#include "api/patch/patch_type.h"

#include <optional>

#include "gtest/gtest.h"

namespace kcr {
namespace api {
namespace {

TEST(PatchTypeTest, ContentTypesRoundTrip) {
  for (PatchType type : {PatchType::kJson, PatchType::kMerge,
                         PatchType::kStrategicMerge, PatchType::kApply}) {
    EXPECT_EQ(PatchTypeFromContentType(ContentType(type)), type);
  }
  EXPECT_EQ(ContentType(PatchType::kJson), "application/json-patch+json");
  EXPECT_EQ(ContentType(PatchType::kMerge), "application/merge-patch+json");
  EXPECT_EQ(ContentType(PatchType::kStrategicMerge),
            "application/strategic-merge-patch+json");
  EXPECT_EQ(ContentType(PatchType::kApply), "application/apply-patch+yaml");
}

TEST(PatchTypeTest, ParametersAndCaseAreIgnored) {
  EXPECT_EQ(
      PatchTypeFromContentType("application/merge-patch+json; charset=utf-8"),
      PatchType::kMerge);
  EXPECT_EQ(PatchTypeFromContentType("Application/Strategic-Merge-Patch+JSON"),
            PatchType::kStrategicMerge);
  EXPECT_EQ(PatchTypeFromContentType(" application/apply-patch+cbor "),
            PatchType::kApply);
  EXPECT_EQ(PatchTypeFromContentType("application/json"), std::nullopt);
  EXPECT_EQ(PatchTypeFromContentType(""), std::nullopt);
}

}  // namespace
}  // namespace api
}  // namespace kcr
