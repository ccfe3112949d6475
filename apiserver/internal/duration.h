// Human-readable durations for Age columns: apimachinery's
// duration.HumanDuration.
#ifndef KCR_APISERVER_INTERNAL_DURATION_H_
#define KCR_APISERVER_INTERNAL_DURATION_H_

#include <string>

#include "absl/time/time.h"

namespace kcr {
namespace apiserver {

// apimachinery's duration.HumanDuration: "<invalid>" below -1s, then
// "0s", "59s", "119s", "2m", "2m5s" (under 10m), "3h" (under 8h with
// minutes: "3h5m"), "47h", "3d4h" (under 8d), "364d", "2y30d" (under 8y),
// "9y".
std::string HumanDuration(absl::Duration d);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_INTERNAL_DURATION_H_
