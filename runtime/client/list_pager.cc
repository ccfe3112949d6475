#include "runtime/client/list_pager.h"

#include <utility>

#include "api/errors/errors.h"
#include "base/status_macros.h"
#include "glog/logging.h"

namespace kcr::client {
namespace {

// The continue token is too old (410): Expired, or Gone from older servers.
bool IsExpired(const absl::Status& status) {
  return api::IsResourceExpired(status) || api::IsGone(status);
}

}  // namespace

absl::Status ListPager::EachPage(
    const Context& ctx, const Resource& resource, const ListOptions& options,
    const std::function<absl::Status(ObjectList& page, bool full)>& fn) {
  ListOptions page = options;
  page.limit = page_size_;
  page.continue_token.clear();
  while (true) {
    ++pages_;
    absl::StatusOr<ObjectList> list = client_->List(ctx, resource, page);
    if (!list.ok() && IsExpired(list.status()) &&
        !page.continue_token.empty()) {
      // The token outlived the server's history: start over in one piece.
      LOG(WARNING) << "continue token expired; listing "
                   << resource.gvr.ToString() << " without paging";
      ListOptions full = options;
      full.limit = 0;
      full.continue_token.clear();
      ++pages_;
      list = client_->List(ctx, resource, full);
      KCR_RETURN_IF_ERROR(list.status());
      return fn(*list, /*full=*/true);
    }
    KCR_RETURN_IF_ERROR(list.status());
    KCR_RETURN_IF_ERROR(fn(*list, /*full=*/false));
    if (list->continue_token.empty()) return absl::OkStatus();
    page.continue_token = list->continue_token;
    // Continue tokens carry the version; the server rejects both together.
    page.resource_version.clear();
    page.resource_version_match.clear();
  }
}

absl::StatusOr<std::string> ListPager::EachListItem(
    const Context& ctx, const Resource& resource, const ListOptions& options,
    const std::function<absl::Status(const api::ObjectPtr&)>& fn) {
  std::string resource_version;
  // After a full list, items already handed to fn are handed again.
  KCR_RETURN_IF_ERROR(
      EachPage(ctx, resource, options, [&](ObjectList& list, bool /*full*/) {
        for (const api::ObjectPtr& item : list.items)
          KCR_RETURN_IF_ERROR(fn(item));
        resource_version = list.resource_version;
        return absl::OkStatus();
      }));
  return resource_version;
}

absl::StatusOr<ObjectList> ListPager::List(const Context& ctx,
                                           const Resource& resource,
                                           const ListOptions& options) {
  ObjectList all;
  KCR_RETURN_IF_ERROR(
      EachPage(ctx, resource, options, [&](ObjectList& list, bool full) {
        if (full) {
          all = std::move(list);
          return absl::OkStatus();
        }
        if (all.kind.empty()) {
          all.kind = list.kind;
          all.api_version = list.api_version;
        }
        for (auto& item : list.items) all.items.push_back(std::move(item));
        all.resource_version = list.resource_version;
        return absl::OkStatus();
      }));
  return all;
}

}  // namespace kcr::client
