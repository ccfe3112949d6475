#include "runtime/cache/fifo.h"

namespace kcr::cache {

std::string_view DeltaTypeName(DeltaType type) {
  switch (type) {
    case DeltaType::kAdded:
      return "Added";
    case DeltaType::kUpdated:
      return "Updated";
    case DeltaType::kDeleted:
      return "Deleted";
    case DeltaType::kReplaced:
      return "Replaced";
    case DeltaType::kSync:
      return "Sync";
  }
  return "Unknown";
}

}  // namespace kcr::cache
