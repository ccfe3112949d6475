// Status propagation macros. abseil 20220623 ships none; these are the only
// definitions in kcr.
#ifndef KCR_BASE_STATUS_MACROS_H_
#define KCR_BASE_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Evaluates `expr` (an absl::Status); returns it from the enclosing function
// when it is not OK.
#define KCR_RETURN_IF_ERROR(expr)                \
  do {                                           \
    const ::absl::Status kcr_status_ = (expr);   \
    if (ABSL_PREDICT_FALSE(!kcr_status_.ok())) { \
      return kcr_status_;                        \
    }                                            \
  } while (false)

#define KCR_STATUS_MACROS_CONCAT_INNER_(a, b) a##b
#define KCR_STATUS_MACROS_CONCAT_(a, b) KCR_STATUS_MACROS_CONCAT_INNER_(a, b)

// Evaluates `rexpr` (an absl::StatusOr<T>); on error returns its status from
// the enclosing function, otherwise moves the value into `lhs`, which may be a
// declaration: KCR_ASSIGN_OR_RETURN(auto obj, Object::Parse(bytes));
#define KCR_ASSIGN_OR_RETURN(lhs, rexpr) \
  KCR_ASSIGN_OR_RETURN_IMPL_(            \
      KCR_STATUS_MACROS_CONCAT_(kcr_statusor_, __LINE__), lhs, rexpr)

#define KCR_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                               \
  if (ABSL_PREDICT_FALSE(!statusor.ok())) {              \
    return std::move(statusor).status();                 \
  }                                                      \
  lhs = std::move(statusor).value()

#endif  // KCR_BASE_STATUS_MACROS_H_
