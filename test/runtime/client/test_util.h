// Helpers for the REST client tests: temporary directories and files, and
// the path of the test data.
#ifndef KCR_TEST_RUNTIME_CLIENT_TEST_UTIL_H_
#define KCR_TEST_RUNTIME_CLIENT_TEST_UTIL_H_

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "gtest/gtest.h"

namespace kcr::client::testing {

// test/runtime/client/testdata/<name>, absolute.
inline std::string TestdataPath(const std::string& name) {
  return std::filesystem::absolute("test/runtime/client/testdata/" + name)
      .string();
}

inline std::string ReadFileOrDie(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

inline void WriteFile(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(
      std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

// A fresh empty directory under the test's temporary directory.
inline std::string MakeTempDir(const std::string& name) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) /
      (std::string(info->test_suite_name()) + "." + info->name() + "." + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

}  // namespace kcr::client::testing

#endif  // KCR_TEST_RUNTIME_CLIENT_TEST_UTIL_H_
