// PodCorpus: the pre-rendered bytes the replay server sends. N pods made
// from one realistic Pod (test/api/testdata/pod.json, 4.7 KB minified, with
// managedFields) that differ in name, uid, namespace, resourceVersion and a
// label, and a history of U MODIFIED events that update the pods in turn.
//
// The timeline is fixed: pod i is created at resourceVersion i + 1, so a
// list is the snapshot at resourceVersion N; update k (0-based) changes pod
// k % N at resourceVersion N + 1 + k and sets its "bench-rev" label to the
// number of times that pod has been updated. Names sort in creation order
// ("web-frontend-7c5ddbdf54-0000042"), so a list in key order is a list in
// index order within each namespace.
//
// Immutable after Create; safe to read from any number of threads.
#ifndef KCR_BENCH_INFORMER_POD_CORPUS_H_
#define KCR_BENCH_INFORMER_POD_CORPUS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

namespace kcr::bench {

class PodCorpus {
 public:
  struct Options {
    // The fixture, a Pod as JSON (any formatting).
    std::string fixture_path = "test/api/testdata/pod.json";
    int64_t pods = 10000;
    int64_t updates = 0;
    // Pod i lives in namespaces[i % namespaces.size()].
    std::vector<std::string> namespaces = {"default"};
  };

  // Reads the fixture and renders every pod and event. Fails if the
  // fixture cannot be read or is not a Pod with metadata.
  static absl::StatusOr<std::unique_ptr<PodCorpus>> Create(
      const Options& options);

  int64_t pods() const { return static_cast<int64_t>(items_.size()); }
  int64_t updates() const { return static_cast<int64_t>(events_.size()); }
  // The resourceVersion of the list snapshot: N.
  int64_t list_resource_version() const { return pods(); }
  const std::vector<std::string>& namespaces() const { return namespaces_; }

  // Pod i as ",{...}": a leading comma, so a list body is the items'
  // bytes back to back with the first one's comma skipped.
  const std::string& item(int64_t i) const { return items_[i]; }
  // The namespace index of pod i.
  int namespace_of(int64_t i) const {
    return static_cast<int>(i % static_cast<int64_t>(namespaces_.size()));
  }
  // Update k as one watch line: {"type":"MODIFIED","object":{...}}\n.
  const std::string& event(int64_t k) const { return events_[k]; }
  // The pod that update k changes.
  int64_t event_pod(int64_t k) const { return k % pods(); }

  // The pods of a scope in key order (namespace, then name): every pod for
  // an empty namespace, else that namespace's. Null for an unknown one.
  const std::vector<int64_t>* ScopeOrder(std::string_view namespace_) const;
  // The position in ScopeOrder(namespace_) of the pod with key
  // "namespace/name", or -1.
  int64_t PositionOf(std::string_view namespace_, std::string_view key) const;
  // "namespace/name" of pod i.
  std::string KeyOf(int64_t i) const;

  // Bytes of all items and of all events, for throughput figures.
  int64_t item_bytes() const { return item_bytes_; }
  int64_t event_bytes() const { return event_bytes_; }

 private:
  PodCorpus() = default;

  std::vector<std::string> namespaces_;
  std::vector<std::string> items_;
  std::vector<std::string> events_;
  // Key order of all pods, and of each namespace's.
  std::vector<int64_t> all_order_;
  std::vector<std::vector<int64_t>> namespace_order_;
  // Where each namespace's run starts in all_order_.
  std::vector<int64_t> namespace_offset_;
  absl::flat_hash_map<std::string, int> namespace_index_;
  int64_t item_bytes_ = 0;
  int64_t event_bytes_ = 0;
};

// "web-frontend-7c5ddbdf54-0000042": the name of pod i.
std::string PodName(int64_t i);

}  // namespace kcr::bench

#endif  // KCR_BENCH_INFORMER_POD_CORPUS_H_
