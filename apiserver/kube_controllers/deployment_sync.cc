// Scaling a Deployment (kube's sync.go): a change of spec.replicas, or any
// change while paused, resizes the one active ReplicaSet or every active
// one in proportion to its max-replicas annotation; scaleReplicaSet writes
// a ReplicaSet's size and replica annotations.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "apiserver/kube_controllers/deployment_internal.h"
#include "base/status_macros.h"
#include "base/str_cat.h"
#include "glog/logging.h"

namespace kcr {
namespace apiserver {
namespace deployment_internal {

std::vector<api::ObjectPtr> DeploymentSync::OldOf(
    const api::ObjectPtr& new_rs) const {
  std::vector<api::ObjectPtr> out;
  for (const api::ObjectPtr& rs : rss_) {
    if (new_rs == nullptr || rs->uid() != new_rs->uid()) out.push_back(rs);
  }
  return out;
}

void DeploymentSync::Replace(const api::ObjectPtr& rs) {
  for (api::ObjectPtr& r : rss_) {
    if (r->uid() == rs->uid()) {
      r = rs;
      return;
    }
  }
  rss_.push_back(rs);
}

api::ObjectPtr DeploymentSync::Current(const api::ObjectPtr& rs) const {
  for (const api::ObjectPtr& r : rss_) {
    if (r->uid() == rs->uid()) return r;
  }
  return rs;
}

absl::StatusOr<bool> DeploymentSync::ScaleReplicaSet(const api::ObjectPtr& rs,
                                                     int64_t size) {
  const bool resize = SpecReplicas(*rs) != size;
  api::ObjectBuilder b = rs->ToBuilder();
  const bool annotations = SetReplicasAnnotations(&b);
  if (!resize && !annotations) return false;
  KCR_RETURN_IF_ERROR(b.SetInt("/spec/replicas", size));
  KCR_ASSIGN_OR_RETURN(WriteResult w,
                       registry_->Update(replicasets_, rs->namespace_(),
                                         rs->name(), std::move(b)));
  if (resize) {
    VLOG(2) << "deployment controller: scaled rs=" << rs->Key() << " from "
            << SpecReplicas(*rs) << " to " << size;
    events_->Record(*d_, "apps/v1", "Deployment", false, "ScalingReplicaSet",
                    Cat("Scaled ", size > SpecReplicas(*rs) ? "up" : "down",
                        " replica set ", rs->name(), " to ", size, " from ",
                        SpecReplicas(*rs)),
                    now_);
  }
  Replace(w.object);
  return resize;
}

absl::StatusOr<bool> DeploymentSync::IsScalingEvent() {
  KCR_ASSIGN_OR_RETURN(api::ObjectPtr new_rs, GetNew(false));
  (void)new_rs;
  for (const api::ObjectPtr& rs : Active(rss_)) {
    std::optional<std::string_view> a =
        rs->Annotation(kDesiredReplicasAnnotation);
    int64_t desired;
    if (!a.has_value() || !ParseInt(*a, &desired)) continue;
    if (desired != replicas_) return true;
  }
  return false;
}

absl::Status DeploymentSync::ScaleSync() {
  KCR_ASSIGN_OR_RETURN(api::ObjectPtr new_rs, GetNew(false));
  KCR_RETURN_IF_ERROR(Scale(new_rs));
  new_rs = new_rs == nullptr ? nullptr : Current(new_rs);
  if (paused_) KCR_RETURN_IF_ERROR(Cleanup(new_rs));
  return WriteStatus(Calculate(new_rs));
}

absl::Status DeploymentSync::Scale(const api::ObjectPtr& new_rs) {
  std::vector<api::ObjectPtr> old = OldOf(new_rs);
  std::vector<api::ObjectPtr> active = Active(rss_);
  if (active.size() <= 1 && (new_rs != nullptr || !old.empty())) {
    api::ObjectPtr target;
    if (active.size() == 1) {
      target = active[0];
    } else if (new_rs != nullptr) {
      target = new_rs;
    } else {
      target = old.back();  // the newest
    }
    if (SpecReplicas(*target) == replicas_) return absl::OkStatus();
    return ScaleReplicaSet(target, replicas_).status();
  }
  // IsSaturated: the new ReplicaSet has everything; old ones go to zero.
  if (new_rs != nullptr && SpecReplicas(*new_rs) == replicas_ &&
      StatusCount(*new_rs, "availableReplicas") == replicas_) {
    for (const api::ObjectPtr& rs : Active(old)) {
      KCR_RETURN_IF_ERROR(ScaleReplicaSet(rs, 0).status());
    }
    return absl::OkStatus();
  }
  if (recreate_ || active.empty()) return absl::OkStatus();
  const int64_t all = SumSpec(active);
  const int64_t allowed = replicas_ > 0 ? replicas_ + max_surge_ : 0;
  const int64_t to_add = allowed - all;
  if (to_add == 0) return absl::OkStatus();
  // Larger first when growing, smaller first when shrinking (newer first
  // among equals).
  std::sort(active.begin(), active.end(),
            [&](const api::ObjectPtr& a, const api::ObjectPtr& b) {
              if (SpecReplicas(*a) != SpecReplicas(*b)) {
                return to_add > 0 ? SpecReplicas(*a) > SpecReplicas(*b)
                                  : SpecReplicas(*a) < SpecReplicas(*b);
              }
              return CreatedBefore(b, a);
            });
  std::map<std::string, int64_t> sizes;
  int64_t added = 0;
  for (const api::ObjectPtr& rs : active) {
    const int64_t proportion = Proportion(*rs, to_add, added);
    sizes[std::string(rs->uid())] = SpecReplicas(*rs) + proportion;
    added += proportion;
  }
  for (size_t i = 0; i < active.size(); ++i) {
    int64_t size = sizes[std::string(active[i]->uid())];
    if (i == 0 && to_add != added)
      size = std::max<int64_t>(0, size + to_add - added);
    KCR_RETURN_IF_ERROR(ScaleReplicaSet(active[i], size).status());
  }
  return absl::OkStatus();
}

int64_t DeploymentSync::Proportion(const api::Object& rs, int64_t to_add,
                                   int64_t added) const {
  if (SpecReplicas(rs) == 0 || to_add == 0 || to_add == added) return 0;
  int64_t fraction;
  if (replicas_ == 0) {
    fraction = -SpecReplicas(rs);
  } else {
    int64_t annotated = 0;
    std::optional<std::string_view> a = rs.Annotation(kMaxReplicasAnnotation);
    if (!a.has_value() || !ParseInt(*a, &annotated) || annotated <= 0) {
      annotated = std::max<int64_t>(1, StatusCount(*d_, "replicas"));
    }
    const double size = static_cast<double>(SpecReplicas(rs)) *
                        static_cast<double>(replicas_ + max_surge_) /
                        static_cast<double>(annotated);
    fraction = static_cast<int64_t>(std::llround(size)) - SpecReplicas(rs);
  }
  const int64_t allowed = to_add - added;
  return to_add > 0 ? std::min(fraction, allowed) : std::max(fraction, allowed);
}

}  // namespace deployment_internal
}  // namespace apiserver
}  // namespace kcr
