// The state of a simulated workload at a moment: what a berthd running it
// would hold at that instant — the jobs running then (with when they were
// admitted and on which node), the jobs queued, and those still to arrive —
// as a workload whose start is that moment. Re-planned (`berth-plan now`) or
// simulated, it continues the run from there: "what happens from here".
//
// The state is taken before the plan at that instant: jobs that arrived or
// ended at it are in the queue or gone; jobs admitted at it are still queued.
// It carries the planner's memory after the last plan before that instant
// (the reservation holder and its first promise, the workspaces' fair turns,
// aging's remembered top priority) and each queued job's queued_at, so that
// a re-plan ranks ties and the reservation as the run it continues does.
// Not carried: a running job's actual duration (it ends at its estimate)
// and whether it will fail, and the executor's starts in flight.
//
// Pure functions; thread-compatible.
#ifndef BERTH_TOOLS_PLAN_STATE_AT_H_
#define BERTH_TOOLS_PLAN_STATE_AT_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "berth/v1/files.pb.h"
#include "planner/model/model.h"
#include "planner/simulator/simulator.h"
#include "tools/plan/input.h"

namespace berth {
namespace plan {

// Job id -> the node (Node::id) the run placed it on, for every job admitted
// on a node. Empty without nodes.
using Placements = absl::flat_hash_map<std::string, std::string>;

// The planner's memory at a moment: after the last plan before `at`
// (in.memory if none).
struct MemoryAt {
  absl::Time at = absl::InfiniteFuture();
  planner::PlannerMemory memory;
};

// Runs planner::Simulate(in, opt) and records where each admitted job was
// placed (through SimOptions::on_plan, chained to the caller's), and, if
// `memory` is not null, the planner's memory at memory->at.
planner::SimResult SimulateRecordingPlacements(const planner::SimInput& in,
                                               planner::SimOptions opt, Placements* placements,
                                               MemoryAt* memory = nullptr);

// The continuation of `in` (whose run gave `result` and `placements`) from
// `at` (>= in.start): start = at; running = in.running still running at
// `at` and the jobs admitted before it that end after it (started_at = their
// admission, as berthd dates them; node = their placement); jobs = those
// queued at `at` (arrival offset 0, created_at as the planner dated them)
// (queued_at: when the run queued them) and those arriving later (offset
// from `at`), with their actual duration, failure and time limit; memory =
// `memory` (the run's memory at `at`; a holder no longer queued is
// dropped). Dependencies on jobs that succeeded by `at` are
// dropped (met); jobs that failed, or whose dependency failed, by `at` are
// gone. `actuals` (same order as in.jobs, may be empty) are carried
// alongside into `out_actuals`. `default_duration` is the policy's (how long
// a job of in.running without an estimate runs).
planner::SimInput ContinuationAt(const planner::SimInput& in, const planner::SimResult& result,
                                 const Placements& placements, absl::Time at,
                                 absl::Duration default_duration,
                                 const std::vector<PlanInput::Actual>& actuals,
                                 std::vector<PlanInput::Actual>* out_actuals,
                                 const planner::PlannerMemory& memory = {});

// `state` (a ContinuationAt) as a workload file LoadPlanInput() reads back to
// the same jobs: the fields the planner and the simulator read (id,
// workspace, action, priority, resources, pool, durations, dependencies,
// created_at, queued_at; arrival offsets, actual durations, failures,
// peaks; the planner's memory), with `budgets` and `description`.
v1::Workload WorkloadOf(const planner::SimInput& state, const std::vector<PlanInput::Actual>& actuals,
                        const planner::Budgets& budgets, const std::string& description);

}  // namespace plan
}  // namespace berth

#endif  // BERTH_TOOLS_PLAN_STATE_AT_H_
