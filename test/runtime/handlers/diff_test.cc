#include "runtime/handlers/diff.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "rapidjson/document.h"

namespace kcr::handlers {
namespace {

std::shared_ptr<const rapidjson::Document> Doc(const char* json) {
  auto doc = std::make_shared<rapidjson::Document>();
  doc->Parse(json);
  EXPECT_FALSE(doc->HasParseError()) << json;
  return doc;
}

std::string DiffOf(const char* a, const char* b) {
  return Diff::Compute(a == nullptr ? nullptr : Doc(a),
                       b == nullptr ? nullptr : Doc(b))
      .ToJson();
}

TEST(DiffTest, EqualDocumentsGiveNothing) {
  EXPECT_EQ(
      DiffOf(R"({"a":{"b":[1,2]},"c":"x"})", R"({"c":"x","a":{"b":[1,2]}})"),
      "[]");
  EXPECT_TRUE(Diff::Compute(nullptr, nullptr).empty());
  EXPECT_EQ(DiffOf("null", nullptr), "[]");
}

TEST(DiffTest, ScalarChangeInNestedObjects) {
  EXPECT_EQ(DiffOf(R"({"spec":{"x":{"y":1,"z":2}}})",
                   R"({"spec":{"x":{"y":5,"z":2}}})"),
            R"([["change",["spec","x","y"],1,5]])");
}

TEST(DiffTest, AddsThenRemovesThenChanges) {
  EXPECT_EQ(DiffOf(R"({"gone":1,"same":{"k":"v"},"moved":true})",
                   R"({"moved":false,"new":{"n":1},"same":{"k":"v"}})"),
            R"([["add",["new"],null,{"n":1}],)"
            R"(["remove",["gone"],1,null],)"
            R"(["change",["moved"],true,false]])");
}

TEST(DiffTest, ListsAreAtomic) {
  EXPECT_EQ(DiffOf(R"({"l":[1,2,3]})", R"({"l":[1,2]})"),
            R"([["change",["l"],[1,2,3],[1,2]]])");
  EXPECT_EQ(DiffOf(R"({"l":[{"a":1}]})", R"({"l":[{"a":2}]})"),
            R"([["change",["l"],[{"a":1}],[{"a":2}]]])");
}

TEST(DiffTest, TypeChangesAreOneChange) {
  EXPECT_EQ(DiffOf(R"({"v":{"a":1}})", R"({"v":"text"})"),
            R"([["change",["v"],{"a":1},"text"]])");
  EXPECT_EQ(DiffOf(R"({"v":1})", R"({"v":1.5})"),
            R"([["change",["v"],1,1.5]])");
  EXPECT_EQ(DiffOf(R"({"v":"1"})", R"({"v":1})"),
            R"([["change",["v"],"1",1]])");
}

TEST(DiffTest, NullIsAbsentAsInKopf) {
  EXPECT_EQ(DiffOf(R"({"v":null})", R"({"v":3})"), R"([["add",["v"],null,3]])");
  EXPECT_EQ(DiffOf(R"({"v":3})", R"({"v":null})"),
            R"([["remove",["v"],3,null]])");
  EXPECT_EQ(DiffOf(R"({"v":null})", R"({})"), "[]");
}

TEST(DiffTest, WholeDocumentAddedOrRemoved) {
  EXPECT_EQ(DiffOf(nullptr, R"({"a":1})"), R"([["add",[],null,{"a":1}]])");
  EXPECT_EQ(DiffOf(R"({"a":1})", nullptr), R"([["remove",[],{"a":1},null]])");
}

TEST(DiffTest, RemovalsOfNestedKeys) {
  EXPECT_EQ(DiffOf(R"({"m":{"a":1,"b":{"c":2}}})", R"({"m":{"a":1}})"),
            R"([["remove",["m","b"],{"c":2},null]])");
}

TEST(DiffTest, OperationsPointIntoTheDocuments) {
  auto old_doc = Doc(R"({"spec":{"size":1}})");
  auto new_doc = Doc(R"({"spec":{"size":2}})");
  Diff d = Diff::Compute(old_doc, new_doc);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].kind, DiffKind::kChange);
  EXPECT_EQ(d[0].path, (FieldPath{"spec", "size"}));
  EXPECT_EQ(d[0].old_value, &(*old_doc)["spec"]["size"]);
  EXPECT_EQ(d[0].new_value, &(*new_doc)["spec"]["size"]);
  // A copy outlives the caller's references to the documents.
  Diff copy = d;
  old_doc.reset();
  new_doc.reset();
  d = Diff();
  EXPECT_EQ(copy[0].old_value->GetInt(), 1);
  EXPECT_EQ(copy[0].new_value->GetInt(), 2);
}

TEST(DiffTest, ReduceKeepsOperationsUnderThePathRelativeToIt) {
  Diff d = Diff::Compute(Doc(R"({"spec":{"a":{"x":1},"b":2},"meta":1})"),
                         Doc(R"({"spec":{"a":{"x":2},"b":3},"meta":2})"));
  EXPECT_EQ(d.Reduce({"spec"}).ToJson(),
            R"([["change",["a","x"],1,2],["change",["b"],2,3]])");
  EXPECT_EQ(d.Reduce({"spec", "a"}).ToJson(), R"([["change",["x"],1,2]])");
  EXPECT_EQ(d.Reduce({"spec", "a", "x"}).ToJson(), R"([["change",[],1,2]])");
  EXPECT_EQ(d.Reduce({"status"}).ToJson(), "[]");
  EXPECT_EQ(d.Reduce({}).ToJson(), d.ToJson());
}

TEST(DiffTest, ReduceUnderAnAncestorThatWasAddedOrReplaced) {
  // spec appeared whole: the field inside it is an add.
  Diff added =
      Diff::Compute(Doc(R"({})"), Doc(R"({"spec":{"sleepytime":"120"}})"));
  EXPECT_EQ(added.Reduce({"spec", "sleepytime"}).ToJson(),
            R"([["add",[],null,"120"]])");
  // spec went from a string to an object: the field inside is an add.
  Diff retyped =
      Diff::Compute(Doc(R"({"spec":"x"})"), Doc(R"({"spec":{"v":1}})"));
  EXPECT_EQ(retyped.Reduce({"spec", "v"}).ToJson(), R"([["add",[],null,1]])");
  // spec went away: the field inside is a remove.
  Diff removed = Diff::Compute(Doc(R"({"spec":{"v":{"w":1}}})"), Doc("{}"));
  EXPECT_EQ(removed.Reduce({"spec", "v"}).ToJson(),
            R"([["remove",[],{"w":1},null]])");
  // A field that is absent on both sides of an ancestor's change: nothing.
  EXPECT_EQ(removed.Reduce({"spec", "other"}).ToJson(), "[]");
}

TEST(DiffTest, FieldPaths) {
  EXPECT_EQ(ParseFieldPath("spec.template.image"),
            (FieldPath{"spec", "template", "image"}));
  EXPECT_EQ(ParseFieldPath(""), FieldPath{});
  EXPECT_EQ(FormatFieldPath({"spec", "x"}), "spec.x");
  auto doc = Doc(R"({"a":{"b":{"c":3}},"s":"x"})");
  EXPECT_EQ(FindField(doc.get(), {"a", "b", "c"})->GetInt(), 3);
  EXPECT_EQ(FindField(doc.get(), {"a", "z"}), nullptr);
  EXPECT_EQ(FindField(doc.get(), {"s", "t"}), nullptr);
  EXPECT_EQ(FindField(nullptr, {"a"}), nullptr);
  EXPECT_EQ(FindField(doc.get(), {}), doc.get());
}

}  // namespace
}  // namespace kcr::handlers
