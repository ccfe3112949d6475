// The type of a watch event, as apimachinery's watch.EventType: what the
// server writes in each event's "type" and what a client decodes. Shared by
// the REST client's watch stream and the API server's watch cache.
#ifndef KCR_API_META_WATCH_EVENT_TYPE_H_
#define KCR_API_META_WATCH_EVENT_TYPE_H_

#include <string_view>

namespace kcr::api {

enum class EventType { kAdded, kModified, kDeleted, kBookmark, kError };

// The name on the wire: "ADDED", "MODIFIED", "DELETED", "BOOKMARK",
// "ERROR".
std::string_view EventTypeName(EventType type);

}  // namespace kcr::api

#endif  // KCR_API_META_WATCH_EVENT_TYPE_H_
