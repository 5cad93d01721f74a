// Propagation macros for absl::Status / absl::StatusOr<T>.
//
// Debian's Abseil (20220623) predates Abseil's own status macros, so Berth
// carries these two. They add nothing to the status: wrap with context at the
// call site when the caller knows more ("job 'x': ...").
#ifndef BERTH_PLANNER_BASE_STATUS_MACROS_H_
#define BERTH_PLANNER_BASE_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define BERTH_STATUS_MACROS_CONCAT_INNER_(x, y) x##y
#define BERTH_STATUS_MACROS_CONCAT_(x, y) BERTH_STATUS_MACROS_CONCAT_INNER_(x, y)

// Evaluates `expr` (an absl::Status) and returns it from the enclosing
// function if it is not OK.
#define RETURN_IF_ERROR(expr)                        \
  do {                                               \
    ::absl::Status berth_status_ = (expr);           \
    if (!berth_status_.ok()) return berth_status_;   \
  } while (false)

// ASSIGN_OR_RETURN(lhs, rexpr): evaluates `rexpr` (an absl::StatusOr<T>); on
// error returns its status, otherwise moves the value into `lhs`, which may be
// a declaration ("auto x") or an existing variable.
#define ASSIGN_OR_RETURN(lhs, rexpr)                                         \
  ASSIGN_OR_RETURN_IMPL_(                                                    \
      BERTH_STATUS_MACROS_CONCAT_(berth_statusor_, __LINE__), lhs, rexpr)

#define ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                           \
  if (!statusor.ok()) return statusor.status();      \
  lhs = std::move(statusor).value()

#endif  // BERTH_PLANNER_BASE_STATUS_MACROS_H_
