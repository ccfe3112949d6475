#include "api/patch/merge_patch.h"

#include <random>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/api/json/json_test_util.h"

namespace kcr {
namespace api {
namespace {

using ::kcr::json::testing::DeepArray;
using ::kcr::json::testing::Json;
using ::kcr::json::testing::JsonEq;
using ::kcr::json::testing::Str;
using ::testing::HasSubstr;

// RFC 7386, Appendix A.
TEST(ApplyMergePatchTest, RfcExamples) {
  struct Case {
    const char* target;
    const char* patch;
    const char* result;
  } cases[] = {
      {R"({"a":"b"})", R"({"a":"c"})", R"({"a":"c"})"},
      {R"({"a":"b"})", R"({"b":"c"})", R"({"a":"b","b":"c"})"},
      {R"({"a":"b"})", R"({"a":null})", R"({})"},
      {R"({"a":"b","b":"c"})", R"({"a":null})", R"({"b":"c"})"},
      {R"({"a":["b"]})", R"({"a":"c"})", R"({"a":"c"})"},
      {R"({"a":"c"})", R"({"a":["b"]})", R"({"a":["b"]})"},
      {R"({"a":{"b":"c"}})", R"({"a":{"b":"d","c":null}})",
       R"({"a":{"b":"d"}})"},
      {R"({"a":[{"b":"c"}]})", R"({"a":[1]})", R"({"a":[1]})"},
      {R"(["a","b"])", R"(["c","d"])", R"(["c","d"])"},
      {R"({"a":"b"})", R"(["c"])", R"(["c"])"},
      {R"({"a":"foo"})", R"(null)", R"(null)"},
      {R"({"a":"foo"})", R"("bar")", R"("bar")"},
      {R"({"e":null})", R"({"a":1})", R"({"e":null,"a":1})"},
      {R"([1,2])", R"({"a":"b","c":null})", R"({"a":"b"})"},
      {R"({})", R"({"a":{"bb":{"ccc":null}}})", R"({"a":{"bb":{}}})"},
  };
  for (const Case& c : cases) {
    rapidjson::Document target = Json(c.target);
    rapidjson::Document patch = Json(c.patch);
    absl::StatusOr<rapidjson::Document> got = ApplyMergePatch(target, patch);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_TRUE(JsonEq(Json(c.result), *got)) << c.target << " + " << c.patch;
    // The inputs are untouched.
    EXPECT_TRUE(JsonEq(Json(c.target), target));
  }
}

TEST(ApplyMergePatchTest, IntoCallerAllocator) {
  rapidjson::Document out;
  rapidjson::Document target = Json(R"({"spec":{"replicas":1,"image":"x"}})");
  rapidjson::Document patch = Json(R"({"spec":{"replicas":3}})");
  ASSERT_TRUE(ApplyMergePatch(target, patch, &out, out.GetAllocator()).ok());
  // `out` owns its values: the inputs may go away.
  target.SetNull();
  patch.SetNull();
  EXPECT_TRUE(JsonEq(Json(R"({"spec":{"replicas":3,"image":"x"}})"), out));
}

TEST(ApplyMergePatchTest, Strings) {
  absl::StatusOr<std::string> got =
      ApplyMergePatch(R"({"metadata":{"labels":{"a":"1","b":"2"}}})",
                      R"({"metadata":{"labels":{"a":null,"c":"3"}}})");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, R"({"metadata":{"labels":{"b":"2","c":"3"}}})");

  absl::StatusOr<std::string> bad = ApplyMergePatch("{}", "{\"a\":");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr("merge patch: invalid JSON at offset 5"));
  bad = ApplyMergePatch("nope", "{}");
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("target:"));
}

TEST(ApplyMergePatchTest, DeepInputRefused) {
  rapidjson::Document deep;
  DeepArray(100000, &deep);
  rapidjson::Document obj = Json("{}");
  EXPECT_EQ(ApplyMergePatch(obj, deep).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ApplyMergePatch(deep, obj).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(CreateMergePatch(deep, obj).ok());
  EXPECT_FALSE(
      ApplyMergePatch("{}", std::string(100000, '[') + std::string(100000, ']'))
          .ok());
}

TEST(CreateMergePatchTest, Minimal) {
  struct Case {
    const char* original;
    const char* modified;
    const char* patch;
  } cases[] = {
      {R"({"a":1})", R"({"a":1})", R"({})"},
      {R"({"a":1})", R"({"a":1.0})", R"({})"},
      {R"({"a":1,"b":2})", R"({"a":1})", R"({"b":null})"},
      {R"({"a":1})", R"({"a":2,"c":[1]})", R"({"a":2,"c":[1]})"},
      {R"({"a":{"x":1,"y":2}})", R"({"a":{"x":1,"y":3}})", R"({"a":{"y":3}})"},
      {R"({"a":[1,2]})", R"({"a":[1,3]})", R"({"a":[1,3]})"},
      {R"({"a":{"x":1}})", R"({"a":5})", R"({"a":5})"},
      {R"({"a":5})", R"({"a":{"x":1}})", R"({"a":{"x":1}})"},
      {R"([1])", R"([1])", R"([1])"},
      {R"("s")", R"({"a":1})", R"({"a":1})"},
      {R"({"a":1})", R"(null)", R"(null)"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<rapidjson::Document> patch =
        CreateMergePatch(Json(c.original), Json(c.modified));
    ASSERT_TRUE(patch.ok());
    EXPECT_TRUE(JsonEq(Json(c.patch), *patch))
        << c.original << " -> " << c.modified;
  }
  absl::StatusOr<std::string> s = CreateMergePatch(R"({"a":1})", R"({"b":1})");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, R"({"a":null,"b":1})");
  EXPECT_FALSE(CreateMergePatch("{", "{}").ok());
}

// Random documents for the round-trip property. Object members are never
// null in `modified` (a merge patch cannot set null), arrays may hold null.
class Generator {
 public:
  explicit Generator(uint32_t seed) : rng_(seed) {}

  void Value(int depth, bool allow_null, rapidjson::Value* out,
             rapidjson::Document::AllocatorType& a) {
    int kind = Pick(depth <= 0 ? 5 : 7);
    switch (kind) {
      case 0:
        if (allow_null) {
          out->SetNull();
          break;
        }
        [[fallthrough]];
      case 1:
        out->SetBool(Pick(2) == 1);
        break;
      case 2:
        out->SetInt(Pick(5));
        break;
      case 3:
        out->SetDouble(Pick(5) + 0.5);
        break;
      case 4:
        out->SetString(Key().c_str(), a);
        break;
      case 5: {
        out->SetArray();
        int n = Pick(4);
        for (int i = 0; i < n; ++i) {
          rapidjson::Value e;
          Value(depth - 1, true, &e, a);
          out->PushBack(e, a);
        }
        break;
      }
      default: {
        out->SetObject();
        int n = Pick(5);
        for (int i = 0; i < n; ++i) {
          std::string k = Key();
          if (out->HasMember(k.c_str())) continue;
          rapidjson::Value e;
          Value(depth - 1, false, &e, a);
          out->AddMember(rapidjson::Value(k.c_str(), a), e, a);
        }
        break;
      }
    }
  }

  // Changes some members of `v` in place: keeps the two documents similar
  // so the diff exercises nested objects.
  void Mutate(int depth, rapidjson::Value* v,
              rapidjson::Document::AllocatorType& a) {
    if (!v->IsObject() || Pick(6) == 0) {
      Value(depth, false, v, a);
      return;
    }
    for (auto it = v->MemberBegin(); it != v->MemberEnd();) {
      switch (Pick(4)) {
        case 0:
          it = v->EraseMember(it);
          continue;
        case 1:
          Mutate(depth - 1, &it->value, a);
          break;
        default:
          break;
      }
      ++it;
    }
    if (Pick(2) == 0) {
      std::string k = Key();
      if (!v->HasMember(k.c_str())) {
        rapidjson::Value e;
        Value(depth - 1, false, &e, a);
        v->AddMember(rapidjson::Value(k.c_str(), a), e, a);
      }
    }
  }

 private:
  int Pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  std::string Key() { return std::string(1, static_cast<char>('a' + Pick(6))); }

  std::mt19937 rng_;
};

TEST(CreateMergePatchTest, ApplyCreateRoundTrip) {
  Generator gen(20240601);
  for (int i = 0; i < 3000; ++i) {
    rapidjson::Document original;
    gen.Value(4, false, &original, original.GetAllocator());
    if (i % 3 != 0) {
      // Mostly objects, the shape of Kubernetes resources.
      original.SetObject();
      gen.Mutate(4, &original, original.GetAllocator());
    }
    rapidjson::Document modified;
    modified.CopyFrom(original, modified.GetAllocator());
    gen.Mutate(4, &modified, modified.GetAllocator());

    absl::StatusOr<rapidjson::Document> patch =
        CreateMergePatch(original, modified);
    ASSERT_TRUE(patch.ok());
    absl::StatusOr<rapidjson::Document> got = ApplyMergePatch(original, *patch);
    ASSERT_TRUE(got.ok());
    ASSERT_TRUE(JsonEq(modified, *got))
        << "original " << Str(original) << "\npatch " << Str(*patch);
    // An unchanged document gives an empty (or identity) patch.
    absl::StatusOr<rapidjson::Document> none =
        CreateMergePatch(original, original);
    ASSERT_TRUE(none.ok());
    if (original.IsObject()) {
      EXPECT_EQ(Str(*none), "{}");
    }
  }
}

}  // namespace
}  // namespace api
}  // namespace kcr
