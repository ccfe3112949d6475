// The vocabulary of RestClient (runtime/client/rest_client.h): the
// collection a call addresses (Resource), the options of each verb, as
// apimachinery's metav1.GetOptions, ListOptions, CreateOptions, PatchOptions
// and DeleteOptions, and a page of a list (ObjectList). Plain values.
#ifndef KCR_RUNTIME_CLIENT_OPTIONS_H_
#define KCR_RUNTIME_CLIENT_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/meta/group_version.h"
#include "api/object.h"
#include "api/patch/patch_type.h"

namespace kcr::client {

// A collection on the server: a resource and, for namespaced resources,
// the namespace ("" = all namespaces for List/Watch/DeleteCollection; for
// Create/Update the object's own namespace).
struct Resource {
  api::GroupVersionResource gvr;
  bool namespaced = true;
  std::string namespace_;

  static Resource Namespaced(api::GroupVersionResource gvr,
                             std::string ns = "") {
    return Resource{std::move(gvr), true, std::move(ns)};
  }
  static Resource ClusterScoped(api::GroupVersionResource gvr) {
    return Resource{std::move(gvr), false, ""};
  }
  // The same resource in namespace `ns`.
  Resource InNamespace(std::string ns) const {
    return Resource{gvr, namespaced, std::move(ns)};
  }
};

struct GetOptions {
  std::string resource_version;  // "" = most recent; "0" = any (cache)
  // Ask for metadata only: the server answers a PartialObjectMetadata.
  bool metadata_only = false;
};

struct ListOptions {
  std::string label_selector;  // e.g. "app=web,tier in (a,b)"
  std::string field_selector;  // e.g. "metadata.name=x"
  // KEP-5866's shardSelector, e.g. "shardRange(object.metadata.uid,
  // '0x0000000000000000', '0x8000000000000000')"; a server without the
  // ShardedListAndWatch gate ignores it and sends everything.
  std::string shard_selector;
  std::string resource_version;
  std::string resource_version_match;  // "NotOlderThan" or "Exact"
  int64_t limit = 0;                   // 0 = no paging
  std::string continue_token;
  // Ask for metadata only: the server answers PartialObjectMetadataList
  // (list) and PartialObjectMetadata objects (get, watch), as client-go's
  // metadata client does.
  bool metadata_only = false;
  // Watch only:
  std::optional<int64_t> timeout_seconds;
  bool allow_watch_bookmarks = false;
  bool send_initial_events = false;
};

struct CreateOptions {
  bool dry_run = false;       // dryRun=All
  std::string field_manager;  // fieldManager
};
using UpdateOptions = CreateOptions;

// kJson, kMerge, kStrategicMerge, kApply (api/patch/patch_type.h).
using api::PatchType;

struct PatchOptions {
  bool dry_run = false;
  std::string field_manager;  // required for kApply
  bool force = false;         // kApply only: take ownership on conflicts
};

struct Preconditions {
  std::optional<std::string> uid;
  std::optional<std::string> resource_version;
};

struct DeleteOptions {
  std::optional<int64_t> grace_period_seconds;
  Preconditions preconditions;
  std::string propagation_policy;  // "Orphan", "Background", "Foreground" or ""
  bool dry_run = false;
};

// What a list answer says besides its items (its ListMeta, and the list's
// kind), for ListEach.
struct ListMeta {
  std::string api_version;
  std::string kind;  // e.g. "PodList"
  std::string resource_version;
  std::string continue_token;  // non-empty: more pages
  std::optional<int64_t> remaining_item_count;
};

// A page of a list. Items carry kind and apiVersion (filled from the list's
// kind when the server left them out, as client-go's dynamic client does).
struct ObjectList {
  std::string api_version;
  std::string kind;  // e.g. "ConfigMapList"
  std::string resource_version;
  std::string continue_token;  // non-empty: more pages
  std::optional<int64_t> remaining_item_count;
  std::vector<api::ObjectPtr> items;
};

}  // namespace kcr::client

#endif  // KCR_RUNTIME_CLIENT_OPTIONS_H_
