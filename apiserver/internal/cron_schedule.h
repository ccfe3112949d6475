// CronSchedule: a cron schedule as robfig/cron/v3's standard parser reads
// it (cron.ParseStandard, which kube-apiserver validates CronJobs with and
// kube-controller-manager's cronjob controller schedules by): five fields
// (minute, hour, day of month, month, day of week) with names, ranges,
// steps and lists, the @yearly/@annually/@monthly/@weekly/@daily/
// @midnight/@hourly descriptors, `@every <duration>`, and a `CRON_TZ=<zone>`
// or `TZ=<zone>` prefix.
//
// Next() follows robfig's SpecSchedule.Next on the wall clock of the
// schedule's zone: the first matching minute after the given time, within
// five years. Where daylight saving skips a wall-clock time the activation
// is skipped; where it repeats one, the schedule fires at the first.
//
// Immutable after Parse; thread-safe.
#ifndef KCR_APISERVER_INTERNAL_CRON_SCHEDULE_H_
#define KCR_APISERVER_INTERNAL_CRON_SCHEDULE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace kcr {
namespace apiserver {

class CronSchedule {
 public:
  // Parses `spec`. The error's message is robfig's ("expected exactly 5
  // fields, found 4: [* * * *]", "provided bad location Mars/Base: ...").
  static absl::StatusOr<CronSchedule> Parse(std::string_view spec);

  // The first activation strictly after `t`, or InfiniteFuture when there
  // is none within five years (robfig's zero time). A spec without a zone
  // prefix is read in `zone`.
  absl::Time Next(absl::Time t, const absl::TimeZone& zone) const;

  // Whether the spec carried CRON_TZ= or TZ=.
  bool has_zone_prefix() const { return zone_.has_value(); }

 private:
  CronSchedule() = default;

  // Bit i set when value i matches; bit 63 (kStar) when the field was `*`
  // or `?` (robfig's starBit, which makes day of month and day of week
  // both have to match).
  uint64_t minute_ = 0, hour_ = 0, dom_ = 0, month_ = 0, dow_ = 0;
  // @every: the delay, whole seconds.
  absl::Duration every_ = absl::ZeroDuration();
  std::optional<absl::TimeZone> zone_;
};

// Loads a zone as Go's time.LoadLocation does: "" and "UTC" are UTC,
// "Local" the machine's zone, else a name of the tz database.
absl::StatusOr<absl::TimeZone> LoadCronTimeZone(std::string_view name);

}  // namespace apiserver
}  // namespace kcr

#endif  // KCR_APISERVER_INTERNAL_CRON_SCHEDULE_H_
