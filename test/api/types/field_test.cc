#include "api/types/field.h"

#include "gtest/gtest.h"

namespace kcr {
namespace api {
namespace {

TEST(FieldTest, WrongTypesReadAsAbsent) {
  rapidjson::Document d;
  d.Parse(
      R"({"s":"x","i":7,"big":9999999999,"b":true,"o":{},"a":[],"n":null})");
  EXPECT_EQ(field::String(&d, "s"), "x");
  EXPECT_EQ(field::String(&d, "i"), "");
  EXPECT_EQ(field::String(nullptr, "s"), "");
  EXPECT_EQ(field::Int64(&d, "i"), 7);
  EXPECT_EQ(field::Int64(&d, "s"), std::nullopt);
  EXPECT_EQ(field::Int32(&d, "big"), std::nullopt);
  EXPECT_EQ(field::Int64(&d, "big"), 9999999999LL);
  EXPECT_TRUE(field::Bool(&d, "b"));
  EXPECT_TRUE(field::Bool(&d, "s", true));
  EXPECT_NE(field::Object(&d, "o"), nullptr);
  EXPECT_EQ(field::Object(&d, "a"), nullptr);
  EXPECT_NE(field::Array(&d, "a"), nullptr);
  EXPECT_EQ(field::Array(&d, "o"), nullptr);
  EXPECT_EQ(field::Member(&d["s"], "x"), nullptr);
}

TEST(FieldTest, CheckStringMap) {
  rapidjson::Document d;
  d.Parse(R"({"good":{"a":"b"},"bad":{"a":1},"list":[],"n":null})");
  EXPECT_TRUE(field::CheckStringMap(nullptr, "x").ok());
  EXPECT_TRUE(field::CheckStringMap(&d["n"], "x").ok());
  EXPECT_TRUE(field::CheckStringMap(&d["good"], "x").ok());
  EXPECT_EQ(field::CheckStringMap(&d["bad"], "data").message(),
            "data.a is not a string");
  EXPECT_EQ(field::CheckStringMap(&d["list"], "data").message(),
            "data is not an object");
}

}  // namespace
}  // namespace api
}  // namespace kcr
