#include "runtime/explorer/scenario.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/json/yaml_to_json.h"
#include "api/object.h"
#include "base/status_macros.h"
#include "base/string_view.h"

namespace kcr::explorer {

Step Step::Create(client::Resource resource, std::string yaml_or_json) {
  absl::StatusOr<api::ObjectPtr> object =
      [&]() -> absl::StatusOr<api::ObjectPtr> {
    KCR_ASSIGN_OR_RETURN(auto doc, json::YamlToJson(yaml_or_json));
    return api::Object::FromValue(*doc);
  }();
  std::string what = object.ok()
                         ? absl::StrCat("create ", resource.gvr.resource, " ",
                                        ToAbsl((*object)->name()))
                         : absl::StrCat("create ", resource.gvr.resource);
  return Step{what,
              [resource = std::move(resource), object = std::move(object)](
                  const Context& ctx, client::RestClient& client) {
                if (!object.ok()) return object.status();
                return client.Create(ctx, resource, **object).status();
              }};
}

Step Step::Patch(client::Resource resource, std::string name,
                 std::string merge_patch) {
  std::string what = absl::StrCat("patch ", resource.gvr.resource, " ", name,
                                  " ", merge_patch);
  return Step{what, [resource = std::move(resource), name = std::move(name),
                     patch = std::move(merge_patch)](
                        const Context& ctx, client::RestClient& client) {
                return client
                    .Patch(ctx, resource, name, client::PatchType::kMerge,
                           patch)
                    .status();
              }};
}

Step Step::Delete(client::Resource resource, std::string name) {
  std::string what = absl::StrCat("delete ", resource.gvr.resource, " ", name);
  return Step{what, [resource = std::move(resource), name = std::move(name)](
                        const Context& ctx, client::RestClient& client) {
                return client.Delete(ctx, resource, name);
              }};
}

}  // namespace kcr::explorer
