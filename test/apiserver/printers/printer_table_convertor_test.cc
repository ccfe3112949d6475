#include "apiserver/printers/printer_table_convertor.h"

#include <string>

#include "apiserver/registry/resources.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "test/fakes/fake_clock.h"

namespace kcr::apiserver {
namespace {

rapidjson::Document Json(const std::string& text) {
  rapidjson::Document d;
  d.Parse(text.c_str());
  EXPECT_FALSE(d.HasParseError()) << text;
  return d;
}

api::ObjectPtr Obj(const std::string& json) {
  auto o = api::Object::Parse(json);
  EXPECT_TRUE(o.ok()) << o.status();
  return *o;
}

class PrinterTableConvertorTest : public ::testing::Test {
 protected:
  testing::FakeClock clock_;
  ResourceRegistry resources_;
  PrinterTableConvertor convertor_{&clock_};
};

TEST_F(PrinterTableConvertorTest, BuiltinPrinters) {
  ResourceInfoPtr pods = resources_.Lookup("", "v1", "pods");
  ASSERT_NE(pods, nullptr);
  TableRequest request;
  request.resource_version = "77";
  request.continue_token = "c";
  request.remaining_item_count = 4;
  absl::StatusOr<std::string> t = convertor_.ConvertToTable(
      *pods, {Obj(R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"a",
          "resourceVersion":"5"},"spec":{"containers":[{"name":"c"}]},
          "status":{"phase":"Pending"}})")},
      request);
  ASSERT_TRUE(t.ok()) << t.status();
  rapidjson::Document d = Json(*t);
  EXPECT_STREQ(d["metadata"]["resourceVersion"].GetString(), "77");
  EXPECT_STREQ(d["metadata"]["continue"].GetString(), "c");
  EXPECT_EQ(d["metadata"]["remainingItemCount"].GetInt(), 4);
  EXPECT_STREQ(d["columnDefinitions"][1]["name"].GetString(), "Ready");
  EXPECT_STREQ(d["rows"][0]["cells"][2].GetString(), "Pending");
  EXPECT_STREQ(d["rows"][0]["object"]["kind"].GetString(),
               "PartialObjectMetadata");
}

TEST_F(PrinterTableConvertorTest, SingleObjectCarriesItsResourceVersion) {
  ResourceInfoPtr cms = resources_.Lookup("", "v1", "configmaps");
  TableRequest request;
  request.no_headers = true;
  request.include_object = TableRequest::IncludeObject::kObject;
  absl::StatusOr<std::string> t = convertor_.ConvertToTable(
      *cms, {Obj(R"({"metadata":{"name":"a","resourceVersion":"9"}})")},
      request);
  ASSERT_TRUE(t.ok()) << t.status();
  rapidjson::Document d = Json(*t);
  EXPECT_STREQ(d["metadata"]["resourceVersion"].GetString(), "9");
  EXPECT_TRUE(d["columnDefinitions"].IsNull());
  EXPECT_STREQ(d["rows"][0]["object"]["kind"].GetString(), "ConfigMap");
}

TEST_F(PrinterTableConvertorTest, CustomResourceColumnsFromTheCrd) {
  rapidjson::Document crd = Json(R"({
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
      "names": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                "listKind": "WidgetList"},
      "versions": [{"name": "v1", "served": true, "storage": true,
        "schema": {"openAPIV3Schema": {"type": "object",
          "x-kubernetes-preserve-unknown-fields": true}},
        "additionalPrinterColumns": [
          {"name": "Size", "type": "integer", "jsonPath": ".spec.size"}]},
        {"name": "v2", "served": true, "storage": false,
        "schema": {"openAPIV3Schema": {"type": "object",
          "x-kubernetes-preserve-unknown-fields": true}}}]}})");
  ASSERT_TRUE(resources_.AddCRD(crd).ok());
  ResourceInfoPtr v1 = resources_.Lookup("example.com", "v1", "widgets");
  ResourceInfoPtr v2 = resources_.Lookup("example.com", "v2", "widgets");
  ASSERT_NE(v1, nullptr);
  ASSERT_NE(v2, nullptr);
  api::ObjectPtr w = Obj(R"({"apiVersion":"example.com/v1","kind":"Widget",
      "metadata":{"name":"w","creationTimestamp":"2023-11-14T22:13:15Z"},
      "spec":{"size":4}})");
  for (int i = 0; i < 2; ++i) {  // the second time from the cache
    absl::StatusOr<std::string> t = convertor_.ConvertToTable(*v1, {w}, {});
    ASSERT_TRUE(t.ok()) << t.status();
    rapidjson::Document d = Json(*t);
    ASSERT_EQ(d["columnDefinitions"].Size(), 2u);
    EXPECT_STREQ(d["columnDefinitions"][1]["name"].GetString(), "Size");
    EXPECT_EQ(d["rows"][0]["cells"][1].GetInt(), 4);
  }
  absl::StatusOr<std::string> t = convertor_.ConvertToTable(*v2, {w}, {});
  ASSERT_TRUE(t.ok()) << t.status();
  rapidjson::Document d = Json(*t);
  ASSERT_EQ(d["columnDefinitions"].Size(), 2u);
  EXPECT_STREQ(d["columnDefinitions"][1]["name"].GetString(), "Age");
  EXPECT_STREQ(d["rows"][0]["cells"][1].GetString(), "5s");
}

}  // namespace
}  // namespace kcr::apiserver
