// --event-ttl through the whole server: an Event goes its TTL after its
// last write, an update extends it, other kinds stay. Time on a fake clock.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "apiserver/api_server.h"
#include "gtest/gtest.h"
#include "test/apiserver/test_client.h"
#include "test/fakes/fake_clock.h"
#include "test/util/eventually.h"

namespace kcr::apiserver {
namespace {

using ::kcr::testing::Eventually;
using ::kcr::testing::FakeClock;

constexpr char kEvents[] = "/api/v1/namespaces/default/events";
constexpr char kConfigMaps[] = "/api/v1/namespaces/default/configmaps";

std::string EventJson(const std::string& name, const std::string& message) {
  return absl::StrCat(
      R"({"apiVersion":"v1","kind":"Event","metadata":{"name":")", name,
      R"("},"involvedObject":{"kind":"Pod","namespace":"default","name":"p"},)"
      R"("reason":"Test","message":")",
      message, R"(","type":"Normal"})");
}

class EventTtlTest : public ::testing::Test {
 protected:
  void Start(absl::Duration ttl) {
    ApiServerOptions options;
    options.clock = &clock_;
    options.event_ttl = ttl;
    auto s = ApiServer::Start(std::move(options));
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    client_ = std::make_unique<TestClient>("127.0.0.1", server_->port());
  }

  int Status(const std::string& path) { return client_->Get(path).status; }

  FakeClock clock_;
  std::unique_ptr<ApiServer> server_;
  std::unique_ptr<TestClient> client_;
};

TEST_F(EventTtlTest, EventsExpireAfterTheirLastWriteOthersStay) {
  Start(absl::Minutes(10));
  ASSERT_EQ(client_->Post(kEvents, EventJson("old", "a")).status, 201);
  ASSERT_EQ(client_->Post(kEvents, EventJson("updated", "a")).status, 201);
  ASSERT_EQ(
      client_
          ->Post(kConfigMaps, R"({"apiVersion":"v1","kind":"ConfigMap",)"
                              R"("metadata":{"name":"cm"},"data":{"k":"v"}})")
          .status,
      201);
  clock_.Advance(absl::Minutes(6));
  ASSERT_EQ(
      client_
          ->Patch(absl::StrCat(kEvents, "/updated"), R"({"message":"again"})",
                  "application/merge-patch+json")
          .status,
      200);
  clock_.Advance(absl::Minutes(5));  // old: 11 min; updated: 5 since its write

  EXPECT_TRUE(
      Eventually([&] { return Status(absl::StrCat(kEvents, "/old")) == 404; }));
  EXPECT_EQ(Status(absl::StrCat(kEvents, "/updated")), 200);
  EXPECT_EQ(Status(absl::StrCat(kConfigMaps, "/cm")), 200);

  clock_.Advance(absl::Minutes(6));
  EXPECT_TRUE(Eventually(
      [&] { return Status(absl::StrCat(kEvents, "/updated")) == 404; }));
  EXPECT_EQ(Status(absl::StrCat(kConfigMaps, "/cm")), 200);
}

TEST_F(EventTtlTest, ZeroKeepsEvents) {
  Start(absl::ZeroDuration());
  ASSERT_EQ(client_->Post(kEvents, EventJson("e", "a")).status, 201);
  clock_.Advance(absl::Hours(24 * 30));
  absl::SleepFor(absl::Milliseconds(200));
  EXPECT_EQ(Status(absl::StrCat(kEvents, "/e")), 200);
}

}  // namespace
}  // namespace kcr::apiserver
