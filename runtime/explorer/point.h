// Point: one perturbation of a scenario's run, and its one-line form.
//
//   crash-after-write:K            the Manager dies right after the
//                                  controllers' K-th write is stored; a new
//                                  Manager (fresh caches) takes over
//   error-CODE-on-write:K          the controllers' K-th write is answered
//                                  CODE (409, 500, 429 with Retry-After,
//                                  504) instead of being stored
//   error-504-after-store-on-write:K   ... stored, then answered 504
//   stale-view:RESOURCE:step:S     watch events of RESOURCE ("configmaps",
//                                  "deployments.apps") are held back from
//                                  the controllers from step S until a while
//                                  after step S+1 began; writes go on
//   unobserved:step:S:N            the watch event of the user's N-th
//                                  write of step S (an object the user
//                                  writes again in a later step) never
//                                  reaches the controllers: they see the
//                                  object's state before and after, never
//                                  that one
//
// K counts the writes of the reference run's controllers (1-based), events
// and leases left out; S counts the scenario's steps (1-based).
//
// A reproduction names the scenario and the seed too:
// "nginx:crash-after-write:3:seed=42", the value of KCR_EXPLORE that reruns
// exactly that point (explorer.h).
#ifndef KCR_RUNTIME_EXPLORER_POINT_H_
#define KCR_RUNTIME_EXPLORER_POINT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace kcr::explorer {

struct Point {
  enum class Kind {
    kReference,
    kCrashAfterWrite,
    kError,
    kStaleView,
    kUnobserved
  };
  Kind kind = Kind::kReference;
  // kCrashAfterWrite, kError: the write (1-based).
  int write = 0;
  // kError: 409, 500, 429 or 504; after_store only with 504.
  int code = 0;
  bool after_store = false;
  // kStaleView, kUnobserved: the step (1-based).
  int step = 0;
  // kStaleView: "<resource>" or "<resource>.<group>".
  std::string resource;
  // kUnobserved: which write of the step (1-based).
  int nth = 0;

  // The perturbation class, for reports: "reference", "crash",
  // "api-error", "stale-view", "unobserved".
  std::string Class() const;
  // "crash-after-write:3" (the forms above; "reference" for the reference
  // run).
  std::string ToString() const;
  static absl::StatusOr<Point> Parse(std::string_view text);
};

// A point of one scenario, with the seed: "<scenario>:<point>:seed=<n>".
struct Selection {
  std::string scenario;
  Point point;
  uint64_t seed = 0;

  std::string ToString() const;
  // InvalidArgument naming what is wrong.
  static absl::StatusOr<Selection> Parse(std::string_view text);
};

}  // namespace kcr::explorer

#endif  // KCR_RUNTIME_EXPLORER_POINT_H_
