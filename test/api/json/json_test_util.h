// Test helpers: parse JSON text in one line and compare JSON values.
#ifndef KCR_TEST_API_JSON_JSON_TEST_UTIL_H_
#define KCR_TEST_API_JSON_JSON_TEST_UTIL_H_

#include <string>
#include <string_view>

#include "absl/strings/string_view.h"
#include "api/json/json_util.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"

namespace kcr {
namespace json {
namespace testing {

inline rapidjson::Document Json(absl::string_view text) {
  rapidjson::Document d;
  absl::Status s = ParseJson(std::string_view(text.data(), text.size()), &d);
  EXPECT_TRUE(s.ok()) << text << ": " << s;
  return d;
}

inline std::string Str(const rapidjson::Value& v) {
  absl::StatusOr<std::string> s = JsonToString(v);
  return s.ok() ? *s : std::string(s.status().message());
}

// Prints both values on failure.
inline ::testing::AssertionResult JsonEq(const rapidjson::Value& want,
                                         const rapidjson::Value& got) {
  if (JsonDeepEqual(want, got)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "want " << Str(want) << "\n got  " << Str(got);
}

// A value nested `depth` arrays deep, built without recursion.
inline void DeepArray(int depth, rapidjson::Document* doc) {
  rapidjson::Value v(rapidjson::kArrayType);
  for (int i = 1; i < depth; ++i) {
    rapidjson::Value outer(rapidjson::kArrayType);
    outer.PushBack(v, doc->GetAllocator());
    v = std::move(outer);
  }
  static_cast<rapidjson::Value&>(*doc) = std::move(v);
}

}  // namespace testing
}  // namespace json
}  // namespace kcr

#endif  // KCR_TEST_API_JSON_JSON_TEST_UTIL_H_
