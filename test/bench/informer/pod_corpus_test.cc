#include "bench/informer/pod_corpus.h"

#include <set>
#include <string>

#include "gtest/gtest.h"
#include "rapidjson/document.h"

namespace kcr::bench {
namespace {

rapidjson::Document ParseJson(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.c_str(), json.size());
  EXPECT_FALSE(doc.HasParseError()) << json.substr(0, 200);
  return doc;
}

std::unique_ptr<PodCorpus> Make(int64_t pods, int64_t updates,
                                std::vector<std::string> namespaces) {
  PodCorpus::Options options;
  options.pods = pods;
  options.updates = updates;
  options.namespaces = std::move(namespaces);
  absl::StatusOr<std::unique_ptr<PodCorpus>> corpus =
      PodCorpus::Create(options);
  EXPECT_TRUE(corpus.ok()) << corpus.status();
  return corpus.ok() ? *std::move(corpus) : nullptr;
}

TEST(PodCorpusTest, PodsDifferInIdentityAndKeepTheFixtureSize) {
  std::unique_ptr<PodCorpus> corpus = Make(3, 0, {"default"});
  ASSERT_NE(corpus, nullptr);
  std::set<std::string> uids;
  for (int64_t i = 0; i < 3; ++i) {
    const std::string& item = corpus->item(i);
    ASSERT_EQ(item[0], ',');
    rapidjson::Document doc = ParseJson(item.substr(1));
    const auto& meta = doc["metadata"];
    EXPECT_EQ(std::string(meta["name"].GetString()), PodName(i));
    EXPECT_EQ(std::string(meta["namespace"].GetString()), "default");
    EXPECT_EQ(std::string(meta["resourceVersion"].GetString()),
              std::to_string(i + 1));
    EXPECT_EQ(std::string(meta["labels"]["bench-rev"].GetString()), "0");
    EXPECT_TRUE(meta.HasMember("managedFields"));
    uids.insert(meta["uid"].GetString());
    // The fixture is 4,755 bytes minified; the varied fields barely move it.
    EXPECT_GT(item.size(), 4600u);
    EXPECT_LT(item.size(), 4900u);
  }
  EXPECT_EQ(uids.size(), 3u);
  EXPECT_EQ(corpus->list_resource_version(), 3);
}

TEST(PodCorpusTest, UpdatesVisitEachPodInTurnWithIncreasingVersions) {
  std::unique_ptr<PodCorpus> corpus = Make(3, 7, {"default"});
  ASSERT_NE(corpus, nullptr);
  for (int64_t k = 0; k < 7; ++k) {
    const std::string& line = corpus->event(k);
    ASSERT_EQ(line.back(), '\n');
    rapidjson::Document doc = ParseJson(line.substr(0, line.size() - 1));
    EXPECT_EQ(std::string(doc["type"].GetString()), "MODIFIED");
    const auto& meta = doc["object"]["metadata"];
    EXPECT_EQ(std::string(meta["name"].GetString()), PodName(k % 3));
    EXPECT_EQ(corpus->event_pod(k), k % 3);
    EXPECT_EQ(std::string(meta["resourceVersion"].GetString()),
              std::to_string(3 + 1 + k));
    EXPECT_EQ(std::string(meta["labels"]["bench-rev"].GetString()),
              std::to_string(k / 3 + 1));
  }
}

TEST(PodCorpusTest, ScopesAreInKeyOrderAndPositionsFindKeys) {
  std::unique_ptr<PodCorpus> corpus = Make(5, 0, {"zeta", "alpha"});
  ASSERT_NE(corpus, nullptr);
  // Pods 1 and 3 are in alpha, 0, 2 and 4 in zeta; alpha sorts first.
  EXPECT_EQ(*corpus->ScopeOrder(""), (std::vector<int64_t>{1, 3, 0, 2, 4}));
  EXPECT_EQ(*corpus->ScopeOrder("zeta"), (std::vector<int64_t>{0, 2, 4}));
  EXPECT_EQ(corpus->ScopeOrder("other"), nullptr);
  for (const std::string ns : {"", "zeta", "alpha"}) {
    const std::vector<int64_t>& order = *corpus->ScopeOrder(ns);
    for (size_t p = 0; p < order.size(); ++p) {
      EXPECT_EQ(corpus->PositionOf(ns, corpus->KeyOf(order[p])),
                static_cast<int64_t>(p))
          << ns << " " << corpus->KeyOf(order[p]);
    }
  }
  EXPECT_EQ(corpus->PositionOf("alpha", corpus->KeyOf(0)), -1);
  EXPECT_EQ(corpus->PositionOf("", "zeta/" + PodName(1)), -1);
  EXPECT_EQ(corpus->PositionOf("", "zeta/" + PodName(5)), -1);
  EXPECT_EQ(corpus->PositionOf("", "zeta/nginx"), -1);
  EXPECT_EQ(corpus->PositionOf("", "no-slash"), -1);
}

TEST(PodCorpusTest, RejectsAMissingFixtureAndEmptySizes) {
  PodCorpus::Options options;
  options.fixture_path = "test/api/testdata/missing.json";
  EXPECT_EQ(PodCorpus::Create(options).status().code(),
            absl::StatusCode::kNotFound);
  options = {};
  options.pods = 0;
  EXPECT_EQ(PodCorpus::Create(options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kcr::bench
