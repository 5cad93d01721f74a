// Reading a large workload file straight into the planner's jobs with
// simdjson (Debian's libsimdjson), without a protobuf message per job.
//
// The contract is equality with the reference reader (LoadPlanInput's
// protobuf path, tools/plan/input.h): where it succeeds, the PlanInput is
// the one the reference gives. It reads only plain, valid input — a Workload
// (not a snapshot) whose jobs use the JSON names of the fields, numbers as
// JSON numbers or decimal strings, the plain Timestamp and Duration forms,
// no nulls or repeated keys — and every job passes LoadPlanInput's checks
// (ids valid and unique, resources > 0, durations > 0 when set, offsets and
// peaks not negative, queuedAt not after the arrival), as does the planner's
// memory. On anything else it returns false and the caller
// takes the reference path, whose errors name the file, the job and the
// field. The small parts (budgets, running jobs, the planner's memory) go
// through protobuf's
// parser.
//
// Thread-compatible.
#ifndef BERTH_TOOLS_PLAN_FAST_WORKLOAD_H_
#define BERTH_TOOLS_PLAN_FAST_WORKLOAD_H_

#include <string>

#include "absl/strings/string_view.h"
#include "tools/plan/input.h"

namespace berth {
namespace plan {

// Fills `in` (path set by the caller) from `json` and returns true, or
// returns false (then `in` is unspecified) for the reference reader to read.
// Dependencies are left to the caller's checks.
[[nodiscard]] bool FastLoadWorkload(absl::string_view json, PlanInput* in);

}  // namespace plan
}  // namespace berth

#endif  // BERTH_TOOLS_PLAN_FAST_WORKLOAD_H_
