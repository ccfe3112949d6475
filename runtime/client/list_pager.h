// ListPager: lists a collection in pages, following continue tokens, as
// client-go's tools/pager.
//
// Each page is one List call with `limit` = page_size. If the server says a
// continue token has expired (410 Expired) part-way, the pager falls back
// to one full list without a limit, as client-go's FullListIfExpired. The
// context bounds the whole list: once it ends, no further page is asked
// for and the page in flight is abandoned (ctx.Err()).
#ifndef KCR_RUNTIME_CLIENT_LIST_PAGER_H_
#define KCR_RUNTIME_CLIENT_LIST_PAGER_H_

#include <cstdint>
#include <functional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/client/rest_client.h"

namespace kcr::client {

class ListPager {
 public:
  static constexpr int64_t kDefaultPageSize = 500;

  // `client` is not owned and must outlive the pager.
  explicit ListPager(RestClient* client, int64_t page_size = kDefaultPageSize)
      : client_(client), page_size_(page_size) {}

  // All items, in one ObjectList whose resource_version is the last page's
  // (the collection's version at the first page, since continue tokens
  // pin it). options.limit and continue_token are ignored.
  absl::StatusOr<ObjectList> List(const Context& ctx, const Resource& resource,
                                  const ListOptions& options = {});

  // Calls `fn` for each item, page by page, stopping at the first error
  // (from the server or from `fn`). Returns the list's resourceVersion.
  // After the expired-token fallback, items of the earlier pages are
  // handed to `fn` again.
  absl::StatusOr<std::string> EachListItem(
      const Context& ctx, const Resource& resource, const ListOptions& options,
      const std::function<absl::Status(const api::ObjectPtr&)>& fn);

  // Pages requested so far.
  int pages() const { return pages_; }

 private:
  // The one paging loop behind List and EachListItem: hands each page to
  // `fn`, in order. `full` is true for the one unpaged list that replaces
  // the pages after an expired continue token; it is the last page.
  absl::Status EachPage(
      const Context& ctx, const Resource& resource, const ListOptions& options,
      const std::function<absl::Status(ObjectList& page, bool full)>& fn);

  RestClient* const client_;
  const int64_t page_size_;
  int pages_ = 0;
};

}  // namespace kcr::client

#endif  // KCR_RUNTIME_CLIENT_LIST_PAGER_H_
