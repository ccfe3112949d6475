// CrdTypeTest<T>: the fixture the tests of the CRD types (Nginx,
// CopyratorRule, LoadTest) share: JSON text to a T, and the check that
// FromJson refuses a document of the wrong JSON types with a message that
// names the field.
#ifndef KCR_TEST_API_CRD_CRD_TYPE_TEST_H_
#define KCR_TEST_API_CRD_CRD_TYPE_TEST_H_

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "test/api/json/json_test_util.h"

namespace kcr {
namespace api {
namespace crd {

template <typename T>
class CrdTypeTest : public ::testing::Test {
 protected:
  // A document FromJson must refuse, and a part of the message it must give.
  struct WrongType {
    const char* json;
    const char* message;
  };

  // `text` parsed; a parse error fails the test.
  static rapidjson::Document Json(const char* text) {
    return json::testing::Json(text);
  }

  // T::FromJson of `text`; an error fails the test and yields T().
  static T Parse(const char* text) {
    auto t = T::FromJson(Json(text));
    EXPECT_TRUE(t.ok()) << t.status();
    return t.ok() ? *t : T();
  }

  // Each case's FromJson is InvalidArgument with the case's message in it.
  static void ExpectWrongTypes(const std::vector<WrongType>& cases) {
    for (const WrongType& c : cases) {
      auto t = T::FromJson(Json(c.json));
      EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument)
          << c.json;
      EXPECT_THAT(std::string(t.status().message()),
                  ::testing::HasSubstr(c.message))
          << c.json;
    }
  }
};

}  // namespace crd
}  // namespace api
}  // namespace kcr

#endif  // KCR_TEST_API_CRD_CRD_TYPE_TEST_H_
