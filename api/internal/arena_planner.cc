#include "api/internal/arena_planner.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "api/json_limits.h"

namespace kcr {
namespace api {
namespace object_internal {

const absl::flat_hash_set<std::string_view, StringHash>& WellKnownStrings() {
  static const auto* const kSet =
      new absl::flat_hash_set<std::string_view, StringHash>{
          // metadata
          "creationTimestamp",
          "deletionTimestamp",
          "deletionGracePeriodSeconds",
          "resourceVersion",
          "ownerReferences",
          "blockOwnerDeletion",
          "kube-controller-manager",
          "kube-scheduler",
          // common labels and annotations
          "app.kubernetes.io/name",
          "app.kubernetes.io/instance",
          "app.kubernetes.io/version",
          "app.kubernetes.io/component",
          "app.kubernetes.io/part-of",
          "app.kubernetes.io/managed-by",
          "pod-template-hash",
          "controller-revision-hash",
          "kubernetes.io/metadata.name",
          "kubectl.kubernetes.io/restartedAt",
          "kubectl.kubernetes.io/last-applied-configuration",
          "deployment.kubernetes.io/revision",
          "deployment.kubernetes.io/desired-replicas",
          "deployment.kubernetes.io/max-replicas",
          "prometheus.io/scrape",
          "prometheus.io/port",
          "prometheus.io/path",
          "control-plane.alpha.kubernetes.io/leader",
          // pod and container spec
          "terminationMessagePath",
          "terminationMessagePolicy",
          "imagePullPolicy",
          "terminationGracePeriodSeconds",
          "serviceAccountName",
          "serviceAccount",
          "securityContext",
          "tolerationSeconds",
          "enableServiceLinks",
          "preemptionPolicy",
          "priorityClassName",
          "runtimeClassName",
          "topologySpreadConstraints",
          "imagePullSecrets",
          "initContainers",
          "ephemeralContainers",
          "readinessProbe",
          "startupProbe",
          "failureThreshold",
          "successThreshold",
          "initialDelaySeconds",
          "timeoutSeconds",
          "allowPrivilegeEscalation",
          "readOnlyRootFilesystem",
          "seccompProfile",
          "persistentVolumeClaim",
          "serviceAccountToken",
          "expirationSeconds",
          "automountServiceAccountToken",
          "/dev/termination-log",
          "default-scheduler",
          "PreemptLowerPriority",
          "FallbackToLogsOnError",
          "node.kubernetes.io/not-ready",
          "node.kubernetes.io/unreachable",
          "metadata.namespace",
          "kube-root-ca.crt",
          "/var/run/secrets/kubernetes.io/serviceaccount",
          "ClusterFirstWithHostNet",
          "RuntimeDefault",
          // status
          "lastTransitionTime",
          "lastUpdateTime",
          "lastHeartbeatTime",
          "containerStatuses",
          "initContainerStatuses",
          "ephemeralContainerStatuses",
          "observedGeneration",
          "readyReplicas",
          "availableReplicas",
          "updatedReplicas",
          "unavailableReplicas",
          "collisionCount",
          "ContainersReady",
          "PodReadyToStartContainers",
          "CrashLoopBackOff",
          "ContainerCreating",
          "ImagePullBackOff",
          "MinimumReplicasAvailable",
          "NewReplicaSetAvailable",
          "ReplicaSetUpdated",
          "NewReplicaSetCreated",
          "FoundNewReplicaSet",
          // workloads
          "revisionHistoryLimit",
          "progressDeadlineSeconds",
          "maxUnavailable",
          "minReadySeconds",
          "matchExpressions",
          // services, leases, events, secrets
          "sessionAffinity",
          "internalTrafficPolicy",
          "ipFamilyPolicy",
          "leaseDurationSeconds",
          "holderIdentity",
          "leaseTransitions",
          "involvedObject",
          "firstTimestamp",
          "reportingComponent",
          "reportingInstance",
          "FailedScheduling",
          "SuccessfulCreate",
          "SuccessfulDelete",
          "ScalingReplicaSet",
          "kubernetes.io/service-account-token",
          "kubernetes.io/dockerconfigjson",
          "kubernetes.io/tls",
          "kubernetes.io/basic-auth",
          // managedFields (when kept)
          "f:creationTimestamp",
          "f:ownerReferences",
          "f:lastTransitionTime",
          "f:lastProbeTime",
          "f:containerStatuses",
          "f:terminationMessagePath",
          "f:terminationMessagePolicy",
          "f:imagePullPolicy",
          "f:securityContext",
          "f:terminationGracePeriodSeconds",
          "f:enableServiceLinks",
          "f:restartPolicy",
          "f:schedulerName",
          "f:volumeMounts",
          "f:containerPort",
          "f:generateName",
          "f:pod-template-hash",
          "f:observedGeneration",
          "f:readyReplicas",
          "f:availableReplicas",
          "f:updatedReplicas",
          "f:resourceVersion",
          "k:{\"type\":\"ContainersReady\"}",
          "k:{\"type\":\"Initialized\"}",
          "k:{\"type\":\"Ready\"}",
          "k:{\"type\":\"PodScheduled\"}",
          "k:{\"type\":\"Available\"}",
          "k:{\"type\":\"Progressing\"}",
      };
  return *kSet;
}

namespace {

// A filter in front of the table: one bit per (length mod 64, last byte
// mod 128) of its strings. Most strings of an object (names, uids,
// timestamps, images) miss it, which spares them the hash lookup.
class WellKnownFilter {
 public:
  WellKnownFilter() {
    for (std::string_view s : WellKnownStrings()) Set(s);
  }
  bool MayHold(std::string_view s) const {
    const size_t bit = Bit(s);
    return (bits_[bit / 64] >> (bit % 64)) & 1;
  }

 private:
  static size_t Bit(std::string_view s) {
    return (s.size() % 64) * 128 + (static_cast<unsigned char>(s.back()) % 128);
  }
  void Set(std::string_view s) {
    const size_t bit = Bit(s);
    bits_[bit / 64] |= uint64_t{1} << (bit % 64);
  }
  uint64_t bits_[64 * 128 / 64] = {};
};

}  // namespace

const char* WellKnown(std::string_view s) {
  static const auto* const kFilter = new WellKnownFilter();
  if (s.empty() || !kFilter->MayHold(s)) return nullptr;
  const auto& set = WellKnownStrings();
  auto it = set.find(s);
  return it == set.end() ? nullptr : it->data();
}

void PlanString(const Value& s, Plan* plan) { PlanString(StringOf(s), plan); }

void PlanString(std::string_view sv, Plan* plan) {
  if (sv.size() <= kInlineStringMax) return;
  if (const char* known = WellKnown(sv)) {
    plan->strings.emplace_back(known, kNotInBlob);
    return;
  }
  auto [it, inserted] = plan->offsets.try_emplace(sv, plan->blob_bytes);
  if (inserted) plan->blob_bytes += sv.size() + 1;
  plan->strings.emplace_back(nullptr, it->second);
}

bool IsSkipped(const Value& parent, const Value& key, const Value* skip) {
  return &parent == skip && StringOf(key) == "managedFields";
}

absl::Status MakePlan(const Value& root, const Value* skip, Plan* plan) {
  using Item = Plan::Item;
  std::vector<Item>& stack = plan->stack;
  stack.clear();
  stack.push_back({nullptr, &root, 0});
  while (!stack.empty()) {
    Item item = stack.back();
    stack.pop_back();
    if (item.key != nullptr) PlanString(*item.key, plan);
    const Value& v = *item.value;
    if (v.IsString()) {
      PlanString(v, plan);
    } else if (v.IsObject() || v.IsArray()) {
      const int depth = item.depth + 1;
      if (depth > kMaxJsonDepth) {
        return Invalid(
            absl::StrCat("JSON nests deeper than ", kMaxJsonDepth, " levels"));
      }
      if (v.IsObject()) {
        size_t count = 0;
        for (auto m = v.MemberEnd(); m != v.MemberBegin();) {
          --m;
          if (IsSkipped(v, m->name, skip)) continue;
          stack.push_back({&m->name, &m->value, depth});
          ++count;
        }
        plan->node_bytes += Align(count * sizeof(Value::Member));
      } else {
        for (auto e = v.End(); e != v.Begin();) {
          --e;
          stack.push_back({nullptr, e, depth});
        }
        plan->node_bytes += Align(v.Size() * sizeof(Value));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace object_internal
}  // namespace api
}  // namespace kcr
