#include "api/meta/watch_event_type.h"

namespace kcr::api {

std::string_view EventTypeName(EventType type) {
  switch (type) {
    case EventType::kAdded:
      return "ADDED";
    case EventType::kModified:
      return "MODIFIED";
    case EventType::kDeleted:
      return "DELETED";
    case EventType::kBookmark:
      return "BOOKMARK";
    case EventType::kError:
      return "ERROR";
  }
  return "UNKNOWN";
}

}  // namespace kcr::api
