// Registry (registry.h): what a stored write sets off. Service writes keep
// the ServiceAllocator in step; CRD writes make their versions served or
// not (ResourceRegistry), and a CRD being deleted has its objects deleted,
// then loses its cleanup finalizer and goes.
#include <vector>

#include "api/errors/errors.h"
#include "apiserver/registry/crd_strategy.h"
#include "apiserver/registry/registry.h"
#include "apiserver/registry/registry_internal.h"
#include "glog/logging.h"

namespace kcr {
namespace apiserver {
namespace {

using Mutation = Storage::Mutation;
using registry_internal::IsCoreServices;

}  // namespace

void Registry::AfterWrite(const ResourceInfo& r,
                          const Storage::WriteResult& result) {
  if (result.op == Mutation::Op::kKeep || result.object == nullptr) return;
  if (IsCoreServices(r)) {
    if (result.op == Mutation::Op::kRemove) {
      service_allocator_->Observe(result.object.get(), nullptr);
    } else {
      service_allocator_->Observe(result.previous.get(), result.object.get());
    }
  }
  if (IsCRDResource(r)) {
    const api::ObjectPtr& crd = result.object;
    if (result.op == Mutation::Op::kRemove) {
      resources_->RemoveCRD(crd->name());
      return;
    }
    absl::Status s = resources_->AddCRD(crd->json());
    if (!s.ok()) {
      LOG(WARNING) << "crd not served name=" << crd->name() << ": " << s;
    }
    if (crd->being_deleted() && crd->HasFinalizer(kCrdCleanupFinalizer)) {
      CleanUpCRD(crd);
    }
    return;
  }
  if (r.custom && result.op == Mutation::Op::kRemove) {
    api::ObjectPtr crd = storage_->Get(
        "apiextensions.k8s.io/customresourcedefinitions", "", r.crd_name);
    if (crd != nullptr && crd->being_deleted() &&
        crd->HasFinalizer(kCrdCleanupFinalizer) &&
        storage_->Count(r.StorageKey()) == 0) {
      CleanUpCRD(crd);
    }
  }
}

void Registry::CleanUpCRD(const api::ObjectPtr& crd) {
  std::vector<ResourceInfoPtr> served;
  for (const ResourceInfoPtr& info : resources_->All()) {
    if (info->custom && info->crd_name == crd->name()) served.push_back(info);
  }
  if (!served.empty()) {
    const ResourceInfo& r = *served.front();
    for (const api::ObjectPtr& o : storage_->Snapshot(r.StorageKey())) {
      auto d = Delete(r, o->namespace_(), o->name(), {});
      if (!d.ok() && !api::IsNotFound(d.status())) {
        LOG(WARNING) << "crd cleanup crd=" << crd->name()
                     << " object=" << o->Key() << ": " << d.status();
      }
    }
    if (storage_->Count(r.StorageKey()) != 0) return;  // finalizers pending
  }
  ResourceInfoPtr crds = resources_->Lookup("apiextensions.k8s.io", "v1",
                                            "customresourcedefinitions");
  auto result = storage_->Write(
      crds->StorageKey(), "", crd->name(),
      [&](const api::ObjectPtr& cur) -> absl::StatusOr<Mutation> {
        if (cur == nullptr || !cur->HasFinalizer(kCrdCleanupFinalizer)) {
          return Mutation::Keep();
        }
        api::ObjectBuilder b = cur->ToBuilder();
        b.RemoveFinalizer(kCrdCleanupFinalizer);
        return UpdateLocked(*crds, cur, std::move(b), "", true);
      });
  if (!result.ok()) {
    LOG(WARNING) << "crd cleanup crd=" << crd->name() << ": "
                 << result.status();
    return;
  }
  if (result->op == Mutation::Op::kRemove) {
    resources_->RemoveCRD(crd->name());
  }
}

}  // namespace apiserver
}  // namespace kcr
