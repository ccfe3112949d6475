// The REST client against a server that answers with hostile bodies: JSON
// nested a million deep in a list, an object, an error Status and a watch
// event. Each must come back as a clear error, never a stack overflow: the
// client reads every body with the iterative, depth-bounded parser.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "api/errors/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/client/rest_client.h"
#include "test/runtime/client/scripted_server.h"

namespace kcr::client {
namespace {

using ::kcr::client::testing::ResponseWriter;
using ::kcr::client::testing::ScriptedServer;
using ::kcr::client::testing::TestRequest;
using ::testing::HasSubstr;

const api::GroupVersionResource kConfigMaps{"", "v1", "configmaps"};

constexpr int kMillion = 1000000;

std::string DeepArrays(int levels) {
  return std::string(levels, '[') + std::string(levels, ']');
}

std::string DeepObjects(int levels) {
  std::string s;
  s.reserve(static_cast<size_t>(levels) * 6 + 1);
  for (int i = 0; i < levels; ++i) s += R"({"a":)";
  s += "1";
  s += std::string(levels, '}');
  return s;
}

class HostileServerTest : public ::testing::Test {
 protected:
  // Serves `body` with `code` to every request.
  void Serve(int code, std::string body) {
    auto server = ScriptedServer::Start(
        [code, body = std::move(body)](const TestRequest&, ResponseWriter& w) {
          w.Respond(code, body);
        });
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    Config config;
    config.host = server_->url();
    ClientOptions options;
    options.max_backoff_retries = 0;
    options.sleep = [](absl::Duration) {};
    auto client = NewRestClient(config, options);
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
  }

  const Resource cms_ = Resource::Namespaced(kConfigMaps, "default");
  std::unique_ptr<ScriptedServer> server_;
  std::unique_ptr<RestClient> client_;
};

TEST_F(HostileServerTest, ListItemsNestedAMillionDeep) {
  Serve(200, absl::StrCat(R"({"kind":"ConfigMapList","apiVersion":"v1",)"
                          R"("metadata":{"resourceVersion":"1"},"items":)",
                          DeepArrays(kMillion), "}"));
  auto list = client_->List(Context::Background(), cms_);
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(list.status().message()),
              HasSubstr("list response: items[0] is not a JSON object ('[') "
                        "at offset 86"));
}

TEST_F(HostileServerTest, ListItemNestedAMillionDeep) {
  Serve(200, absl::StrCat(R"({"kind":"ConfigMapList","apiVersion":"v1",)"
                          R"("metadata":{"resourceVersion":"1"},"items":[)",
                          R"({"metadata":{"name":"a"},"data":)",
                          DeepObjects(kMillion), "}]}"));
  auto list = client_->List(Context::Background(), cms_);
  ASSERT_FALSE(list.ok());
  EXPECT_THAT(std::string(list.status().message()),
              HasSubstr("nests deeper than"));
}

TEST_F(HostileServerTest, ObjectNestedAMillionDeep) {
  Serve(200, absl::StrCat(R"({"kind":"ConfigMap","apiVersion":"v1",)"
                          R"("metadata":{"name":"a"},"data":)",
                          DeepArrays(kMillion), "}"));
  auto object = client_->Get(Context::Background(), cms_, "a");
  ASSERT_FALSE(object.ok());
  EXPECT_THAT(std::string(object.status().message()),
              HasSubstr("response is not a Kubernetes object"));
}

// An error body too deep to be a Status still gives an error named by the
// HTTP code, with the start of the body.
TEST_F(HostileServerTest, ErrorStatusNestedAMillionDeep) {
  Serve(404, absl::StrCat(R"({"kind":"Status","apiVersion":"v1",)"
                          R"("status":"Failure","reason":"NotFound",)"
                          R"("code":404,"details":)",
                          DeepObjects(kMillion), "}"));
  auto object = client_->Get(Context::Background(), cms_, "a");
  ASSERT_FALSE(object.ok());
  EXPECT_TRUE(api::IsNotFound(object.status())) << object.status();
  EXPECT_THAT(std::string(object.status().message()),
              HasSubstr("the server responded with HTTP status 404"));
}

TEST_F(HostileServerTest, WatchEventNestedAMillionDeep) {
  Serve(200, absl::StrCat(R"({"type":"ADDED","object":)", DeepArrays(kMillion),
                          "}\n"));
  auto watch = client_->Watch(Context::Background(), cms_);
  ASSERT_TRUE(watch.ok()) << watch.status();
  WatchEvent event;
  EXPECT_FALSE((*watch)->Next(&event));
  EXPECT_EQ((*watch)->status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string((*watch)->status().message()),
              HasSubstr("nests deeper than"));
}

}  // namespace
}  // namespace kcr::client
