// What right-sizing would buy on a workload (berth-plan rightsize): each
// job's memory estimate replaced by the estimate Berth would suggest from
// the runs of its (workspace, action) that had ended by the time it arrived
// (executor/usage/usage_stats.h, as the RightSize RPC computes it), learned
// from the workload's actual peaks (WorkloadJob.actual_peak_memory_bytes).
#ifndef BERTH_TOOLS_PLAN_RIGHT_SIZE_H_
#define BERTH_TOOLS_PLAN_RIGHT_SIZE_H_

#include <cstdint>

#include "planner/simulator/simulator.h"
#include "tools/plan/input.h"

namespace berth {
namespace plan {

struct RightSized {
  // The input with the re-estimated jobs' memory replaced.
  planner::SimInput input;
  // Jobs whose estimate was lowered, and of those, how many peaked above
  // their new estimate (a real run would have been OOM-killed: the
  // simulation does not model that, so it flatters right-sizing by them).
  int64_t re_estimated = 0;
  int64_t above_new_estimate = 0;
  // Sum over every job of memory estimate x run time, before and after.
  double reserved_gib_hours_before = 0;
  double reserved_gib_hours_after = 0;
};

// `before` is the simulation of `in.sim` as estimated: a job learns from
// the jobs that ended (in it) no later than its arrival. Jobs without an
// actual peak teach nothing and are re-estimated like the others.
// REQUIRES: before.jobs has one result per in.sim.jobs.
RightSized RightSize(const PlanInput& in, const planner::SimResult& before);

}  // namespace plan
}  // namespace berth

#endif  // BERTH_TOOLS_PLAN_RIGHT_SIZE_H_
