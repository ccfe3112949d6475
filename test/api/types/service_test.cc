#include "api/types/service.h"

#include "gtest/gtest.h"

namespace kcr {
namespace api {
namespace {

ObjectPtr Parse(std::string_view json) {
  absl::StatusOr<ObjectPtr> obj = Object::Parse(json);
  EXPECT_TRUE(obj.ok()) << obj.status();
  return obj.ok() ? *obj : nullptr;
}

TEST(ServiceViewTest, PortNamed) {
  auto svc = ServiceView::Create(Parse(R"({"kind":"Service",
    "metadata":{"name":"web"},"spec":{"ports":[
      {"name":"metrics","port":9090},"junk",{"name":"bad","port":"80"},
      {"name":"http","port":8080}]}})"));
  ASSERT_TRUE(svc.ok());
  EXPECT_EQ(svc->PortNamed("http"), 8080);
  EXPECT_EQ(svc->PortNamed("metrics"), 9090);
  EXPECT_EQ(svc->PortNamed("bad"), std::nullopt);
  EXPECT_EQ(svc->PortNamed("grpc"), std::nullopt);
  EXPECT_EQ(ServiceView::Create(Parse(R"({"kind":"Service","metadata":{}})"))
                ->PortNamed("http"),
            std::nullopt);
  EXPECT_FALSE(
      ServiceView::Create(Parse(R"({"kind":"Pod","metadata":{}})")).ok());
}

}  // namespace
}  // namespace api
}  // namespace kcr
