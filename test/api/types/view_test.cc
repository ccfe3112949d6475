#include "api/types/view.h"

#include "gtest/gtest.h"

namespace kcr {
namespace api {
namespace {

// A view of kind "Widget", to test the shared kind check.
class WidgetView : public TypedView {
 public:
  static absl::StatusOr<WidgetView> Create(ObjectPtr obj) {
    if (absl::Status s = Check(obj, "Widget"); !s.ok()) return s;
    return WidgetView(std::move(obj));
  }

 private:
  explicit WidgetView(ObjectPtr obj) : TypedView(std::move(obj)) {}
};

TEST(TypedViewTest, ChecksKind) {
  ObjectPtr widget =
      *Object::Parse(R"({"kind":"Widget","metadata":{"name":"w"}})");
  absl::StatusOr<WidgetView> view = WidgetView::Create(widget);
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(view->object().name(), "w");
  EXPECT_EQ(view->ptr(), widget);
  // List items carry no kind.
  EXPECT_TRUE(WidgetView::Create(*Object::Parse(R"({"metadata":{}})")).ok());
  absl::StatusOr<WidgetView> other =
      WidgetView::Create(*Object::Parse(R"({"kind":"Gadget","metadata":{}})"));
  EXPECT_EQ(other.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(other.status().message(), "kind is Gadget, not Widget");
  EXPECT_FALSE(WidgetView::Create(nullptr).ok());
}

}  // namespace
}  // namespace api
}  // namespace kcr
