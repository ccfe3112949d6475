// kubectl against cmd/local-apiserver with shardSelector (KEP-5866): the raw
// list and watch URLs a sharded client sends return exactly the objects of
// the range, and a malformed selector is kube-apiserver's 400.
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "api/selector/shard_selector.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "test/integration/kubectl_harness.h"
#include "test/integration/kubectl_server_fixture.h"

namespace kcr {
namespace apiserver {
namespace {

using ::kcr::integration::KubectlResult;
using ::testing::HasSubstr;

std::string UrlEncode(const std::string& s) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string Half(int index) {
  api::ShardRange r = api::ShardRange::Of(index, 2);
  return "shardRange(object.metadata.uid, '" + api::FormatShardBound(r.start) +
         "', '" + api::FormatShardBound(r.end) + "')";
}

class KubectlShardSelectorTest : public integration::KubectlServerFixture {
 protected:
  void SetUp() override { StartServer("kubectl-shard"); }

  std::string Ok(const std::vector<std::string>& args,
                 const std::string& stdin_data = "") {
    KubectlResult r = kubectl_->Run(args, stdin_data);
    EXPECT_EQ(r.exit_code, 0) << "kubectl failed: " << r.err << r.out;
    return r.out;
  }
};

TEST_F(KubectlShardSelectorTest, RawListAndWatchReturnTheRange) {
  std::string manifest;
  for (int i = 0; i < 40; ++i) {
    manifest += "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-" +
                std::to_string(i) + "\n  namespace: default\n";
  }
  Ok({"apply", "-f", "-"}, manifest);
  // name -> uid of every ConfigMap the plain list sees.
  std::map<std::string, std::string> all;
  {
    rapidjson::Document d;
    std::string out =
        Ok({"get", "--raw", "/api/v1/namespaces/default/configmaps?limit=500"});
    d.Parse(out.c_str());
    ASSERT_FALSE(d.HasParseError()) << out;
    for (const auto& i : d["items"].GetArray()) {
      std::string name = i["metadata"]["name"].GetString();
      if (name.rfind("cm-", 0) == 0)
        all[name] = i["metadata"]["uid"].GetString();
    }
  }
  ASSERT_EQ(all.size(), 40u);
  size_t total = 0;
  for (int h = 0; h < 2; ++h) {
    std::string out =
        Ok({"get", "--raw",
            "/api/v1/namespaces/default/configmaps?shardSelector=" +
                UrlEncode(Half(h))});
    rapidjson::Document d;
    d.Parse(out.c_str());
    ASSERT_FALSE(d.HasParseError()) << out;
    EXPECT_EQ(std::string(d["metadata"]["shardInfo"]["selector"].GetString()),
              Half(h));
    std::map<std::string, std::string> got;
    for (const auto& i : d["items"].GetArray()) {
      std::string name = i["metadata"]["name"].GetString();
      if (name.rfind("cm-", 0) == 0)
        got[name] = i["metadata"]["uid"].GetString();
    }
    for (const auto& [name, uid] : all) {
      bool in = api::ShardRange::Of(h, 2).Contains(api::Fnv1a64(uid));
      EXPECT_EQ(got.count(name), in ? 1u : 0u) << name;
    }
    total += got.size();

    // The watch's initial events are the same objects.
    std::string events =
        Ok({"get", "--raw",
            "/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1&"
            "shardSelector=" +
                UrlEncode(Half(h))});
    std::istringstream lines(events);
    std::string line;
    size_t added = 0;
    while (std::getline(lines, line)) {
      rapidjson::Document e;
      e.Parse(line.c_str());
      if (e.HasParseError() || !e.IsObject()) continue;
      std::string name = e["object"]["metadata"]["name"].GetString();
      if (name.rfind("cm-", 0) != 0) continue;
      EXPECT_EQ(std::string(e["type"].GetString()), "ADDED");
      EXPECT_EQ(got.count(name), 1u) << name;
      ++added;
    }
    EXPECT_EQ(added, got.size());
  }
  EXPECT_EQ(total, all.size());
}

TEST_F(KubectlShardSelectorTest, MalformedSelectorIsBadRequest) {
  KubectlResult r =
      kubectl_->Run({"get", "--raw",
                     "/api/v1/configmaps?shardSelector=" +
                         UrlEncode("shardRange(object.metadata.uid, '0x0', "
                                   "'0x8000000000000000')")});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("BadRequest"));
  EXPECT_THAT(r.err, HasSubstr("invalid shard selector: hexStart must be a "
                               "0x-prefixed 16-digit hex value"));
}

}  // namespace
}  // namespace apiserver
}  // namespace kcr
