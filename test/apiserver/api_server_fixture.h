// ApiServerFixture: a local API server in this process and a REST client
// talking to it over real HTTP, for tests of code that reads and writes
// through the client (controllers, leader election, Events).
//
//   class MyTest : public kcr::testing::ApiServerFixture {};
//   TEST_F(MyTest, Writes) {
//     StartServer();  // ASSERTs inside: check HasFatalFailure() after
//     client_->Create(...);
//   }
#ifndef KCR_TEST_APISERVER_API_SERVER_FIXTURE_H_
#define KCR_TEST_APISERVER_API_SERVER_FIXTURE_H_

#include <memory>
#include <utility>

#include "apiserver/api_server.h"
#include "gtest/gtest.h"
#include "runtime/client/rest_client.h"
#include "runtime/client/rest_config.h"

namespace kcr::testing {

class ApiServerFixture : public ::testing::Test {
 protected:
  // Starts the server with `options` (its simulated node off unless
  // asked for, so no pod changes by itself) and, unless `with_client` is
  // false, a client without a QPS limit in client_.
  void StartServer(apiserver::ApiServerOptions options = NoSimulatedNode(),
                   bool with_client = true) {
    auto server = apiserver::ApiServer::Start(std::move(options));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    config_.host = server_->url();
    config_.qps = -1;
    if (!with_client) return;
    auto client = client::NewRestClient(config_);
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
  }

  static apiserver::ApiServerOptions NoSimulatedNode() {
    apiserver::ApiServerOptions options;
    options.controllers.node_simulator = false;
    return options;
  }

  std::unique_ptr<apiserver::ApiServer> server_;
  client::Config config_;
  std::unique_ptr<client::RestClient> client_;
};

}  // namespace kcr::testing

#endif  // KCR_TEST_APISERVER_API_SERVER_FIXTURE_H_
