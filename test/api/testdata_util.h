// Reads the JSON fixtures under test/api/testdata/ (declared as data of the
// tests that use them) and minifies JSON for size comparisons.
#ifndef KCR_TEST_API_TESTDATA_UTIL_H_
#define KCR_TEST_API_TESTDATA_UTIL_H_

#include <fstream>
#include <iterator>
#include <string>

#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace kcr {
namespace api {
namespace testing {

// Contents of test/api/testdata/<name>, or "" when missing.
inline std::string ReadTestdata(const std::string& name) {
  std::ifstream in("test/api/testdata/" + name, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

// `json` without insignificant whitespace (key order kept).
inline std::string Minify(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.c_str(), json.size());
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  doc.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace testing
}  // namespace api
}  // namespace kcr

#endif  // KCR_TEST_API_TESTDATA_UTIL_H_
