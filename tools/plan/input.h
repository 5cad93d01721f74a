// berth-plan's inputs: a workload or snapshot file turned into a simulation
// input (via //planner/convert), with the validation the edge owes the
// planner — so that bad input gets a message naming the file, the job and the
// field instead of a silent REJECT in a report.
//
// Thread-compatible pure functions (apart from reading the file).
#ifndef BERTH_TOOLS_PLAN_INPUT_H_
#define BERTH_TOOLS_PLAN_INPUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "berth/v1/budgets.pb.h"
#include "berth/v1/files.pb.h"
#include "planner/model/model.h"
#include "planner/simulator/simulator.h"

namespace berth {
namespace plan {

struct PlanInput {
  std::string path;
  std::string description;
  // A snapshot file (berth.v1.Snapshot): every job arrives at the start,
  // which is the latest created_at of its jobs (the epoch if none).
  bool is_snapshot = false;
  // start, running and jobs; sim.budgets is left empty (see below).
  planner::SimInput sim;
  // Per job of sim.jobs (same index): its action and what it really used at
  // its peak (WorkloadJob.actual_peak_memory_bytes; 0 = unknown).
  struct Actual {
    std::string action;
    int64_t peak_memory_bytes = 0;
  };
  std::vector<Actual> actuals;
  // A workload without startTime starts at the latest time its jobs carry
  // (createdAt, queuedAt, a running job's startedAt; the epoch if none), so
  // that `now` plans at a moment of the file's own, not at 1970. Reports say
  // so (start_from_file_times).
  bool start_from_file_times = false;
  // The workload's own budgets, if it has any.
  bool has_file_budgets = false;
  planner::Budgets file_budgets;
};

// Reads `path` as a Workload or a Snapshot (a file whose jobs are bare
// JobSpecs, or that has "generation", is a snapshot), strictly (unknown
// fields and wrong types are errors), and validates every job:
//   id 1-128 of [A-Za-z0-9._-], unique across jobs and running; workspace
//   non-empty; resources.cpuMillis and memoryBytes > 0; expectedDuration,
//   actualDuration > 0 when set; arrivalOffset >= 0; dependsOn names a job
//   of the file and no cycle; at least one job.
// INVALID_ARGUMENT listing up to 10 problems, one per line, each
//   "<path>: job '<id>' (jobs[<i>]): <field> <problem>"; NOT_FOUND /
//   PERMISSION_DENIED if the file cannot be read.
// A plain, valid workload is read by simdjson straight into the planner's
// jobs (fast_workload.h); anything else, and every error, by protobuf's
// reader with the same result. `fast_reader` false: that reader alone (for
// the tests that hold the two equal).
[[nodiscard]] absl::StatusOr<PlanInput> LoadPlanInput(const std::string& path,
                                                      bool fast_reader = true);

// Budgets must be usable: memory, cpu and max workers > 0, pool and
// workspace limits >= 0. `source` names where they came from (e.g.
// "--memory/--cpus/--max-workers" or a file). INVALID_ARGUMENT otherwise.
[[nodiscard]] absl::Status ValidateBudgets(const planner::Budgets& budgets,
                                           absl::string_view source);

// Every job's pool must be "default" or have a budget entry (as the server
// rejects unknown pools). INVALID_ARGUMENT naming the job and the pool.
[[nodiscard]] absl::Status CheckPoolsKnown(const PlanInput& input,
                                           const planner::Budgets& budgets);

}  // namespace plan
}  // namespace berth

#endif  // BERTH_TOOLS_PLAN_INPUT_H_
