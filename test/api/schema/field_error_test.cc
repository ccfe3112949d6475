#include "api/schema/field_error.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kcr {
namespace api {
namespace {

TEST(FieldErrorTest, RendersLikeApimachinery) {
  using T = FieldError::Type;
  EXPECT_EQ((FieldError{T::kRequired, "spec.x", "", ""}).ToString(),
            "spec.x: Required value");
  EXPECT_EQ((FieldError{T::kInvalid, "spec.x", "-1", "too small"}).ToString(),
            "spec.x: Invalid value: -1: too small");
  EXPECT_EQ(
      (FieldError{T::kNotSupported, "t", "\"x\"", "supported values: \"a\""})
          .ToString(),
      "t: Unsupported value: \"x\": supported values: \"a\"");
  EXPECT_EQ((FieldError{T::kTooMany, "l", "4", "must have at most 3 items"})
                .ToString(),
            "l: Too many: 4: must have at most 3 items");
  EXPECT_EQ((FieldError{T::kForbidden, "f", "", "no"}).ToString(),
            "f: Forbidden: no");
  EXPECT_EQ((FieldError{T::kRequired, "", "", ""}).ToString(),
            "Required value");
  EXPECT_THAT(
      ToStrings({{T::kRequired, "a", "", ""}, {T::kRequired, "b", "", "why"}}),
      ::testing::ElementsAre("a: Required value", "b: Required value: why"));
}

}  // namespace
}  // namespace api
}  // namespace kcr
