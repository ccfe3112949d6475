#include "runtime/controller/controllerutil/status.h"

#include <string>
#include <utility>

#include "api/errors/errors.h"

namespace kcr::controller::controllerutil {

absl::StatusOr<api::ObjectPtr> UpdateStatus(const Context& ctx,
                                            client::RestClient* client,
                                            const client::Resource& resource,
                                            std::string_view name,
                                            const MutateFunc& mutate,
                                            const RetryOptions& retry) {
  api::ObjectPtr result;
  absl::Status status = RetryOnConflict(ctx, retry, [&]() -> absl::Status {
    absl::StatusOr<api::ObjectPtr> current = client->Get(ctx, resource, name);
    if (!current.ok()) return current.status();
    api::ObjectBuilder copy(**current);
    if (absl::Status s = mutate(copy); !s.ok()) return s;
    // rapidjson compares objects member by member, whatever their order.
    if (copy.json() == (*current)->json()) {
      result = *std::move(current);
      return absl::OkStatus();
    }
    absl::StatusOr<api::ObjectPtr> modified = copy.Build();
    if (!modified.ok()) return modified.status();
    absl::StatusOr<api::ObjectPtr> updated =
        client->UpdateStatus(ctx, resource, **modified);
    if (!updated.ok()) return updated.status();
    result = *std::move(updated);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return result;
}

absl::StatusOr<api::ObjectPtr> UpdateStatus(const Context& ctx,
                                            client::RestClient* client,
                                            const client::Resource& resource,
                                            const api::ObjectPtr& cached,
                                            const MutateFunc& mutate,
                                            const RetryOptions& retry) {
  api::ObjectBuilder copy(*cached);
  if (absl::Status s = mutate(copy); !s.ok()) return s;
  if (copy.json() == cached->json()) return cached;
  const client::Resource in_namespace =
      resource.InNamespace(std::string(cached->namespace_()));
  // The cache is usually current: send the copy, whose resourceVersion
  // makes the server refuse it when the cache was behind; then read the
  // server's object and apply `mutate` to that.
  absl::StatusOr<api::ObjectPtr> modified = copy.Build();
  if (!modified.ok()) return modified.status();
  absl::StatusOr<api::ObjectPtr> updated =
      client->UpdateStatus(ctx, in_namespace, **modified);
  if (!api::IsConflict(updated.status())) return updated;
  return UpdateStatus(ctx, client, in_namespace, cached->name(), mutate, retry);
}

}  // namespace kcr::controller::controllerutil
