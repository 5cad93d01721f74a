// Machine-readable detail of one simulation for `berth-plan simulate
// --json/--csv`: one row per job (so waits and promises can be checked
// without re-implementing the simulation) and the usage timeline.
//
// Thread-compatible pure functions.
#ifndef BERTH_TOOLS_PLAN_SIM_TABLES_H_
#define BERTH_TOOLS_PLAN_SIM_TABLES_H_

#include "planner/simulator/simulator.h"
#include "tools/plan/report.h"

namespace berth {
namespace plan {

// Table "jobs", one row per SimInput::jobs entry in input order. Times are
// seconds since the simulation's start (null when the job never got there):
//   arrival_s     entered the queue
//   ready_s       its dependencies ended (= arrival_s without dependencies)
//   admitted_s    the plan admitted it (took its capacity)
//   started_s, finished_s  its container ran: admitted_s + --start-latency,
//                 and its end (its capacity comes back --finish-latency
//                 later); with both latencies 0, started_s = admitted_s
//   wait_s        admitted - ready (time waiting for capacity)
//   promised_at_s the first plan that gave it the head-of-line reservation
//   promised_s    the start that plan promised
//   promise_late_s  admitted_s - promised_s, at least 0 (null if never
//                 reserved): how late the job started against its promise
//   promise_kept  promise_late_s <= `tolerance` (null if never reserved):
//                 the executor's modelled latencies (ExecutorTolerance)
//                 delay every capacity hand-over, so a start that late is
//                 the promise kept
//   outcome, main_wait_reason (the reason it waited longest under)
Table JobsTable(const planner::SimInput& in, const planner::SimResult& r,
                absl::Duration tolerance = absl::ZeroDuration());

// How late a kept promise may be under the executor model of `opt`: one
// start (start_latency, slowed by start_contention for each other start slot
// in flight, plus start_jitter) and one finish_latency — what the capacity a
// reservation waits for is handed over later than the plan's expected end.
absl::Duration ExecutorTolerance(const planner::SimOptions& opt);

// Table "timeline": one row per change of usage (SimResult::timeline): time_s,
// memory_bytes / cpu_millis / workers reserved by running jobs, queued jobs.
Table TimelineTable(const planner::SimResult& r);

}  // namespace plan
}  // namespace berth

#endif  // BERTH_TOOLS_PLAN_SIM_TABLES_H_
