// Shared plumbing of berth-plan's subcommands (internal to tools/plan):
// argument parsing, loading, budgets, policy, and turning simulation results
// into report fields and chart panels.
#ifndef BERTH_TOOLS_PLAN_COMMON_H_
#define BERTH_TOOLS_PLAN_COMMON_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "planner/forecast/eta.h"
#include "planner/model/model.h"
#include "planner/ranking/policy.h"
#include "planner/simulator/simulator.h"
#include "tools/plan/args.h"
#include "tools/plan/chart.h"
#include "tools/plan/commands.h"
#include "tools/plan/input.h"
#include "tools/plan/report.h"

namespace berth {
namespace plan {

// The executor's latencies berth-plan assumes unless told otherwise: what
// berthd measured on this project's machine kind (Debian 12, 2 cores, the
// host's dockerd, a quiet host; docs/BENCHMARKS.md): the start
// model fitted to its starts by how many ran together, the median finish
// latency, and berthd's --start_parallelism default.
inline constexpr absl::Duration kDefaultStartLatency = absl::Milliseconds(250);
inline constexpr absl::Duration kDefaultFinishLatency = absl::Milliseconds(50);
inline constexpr int32_t kDefaultStartParallelism = 4;
inline constexpr absl::Duration kDefaultStartContention = absl::Milliseconds(70);

struct Setup {
  Args args;
  PlanInput input;
  BudgetChoices budgets;
  planner::Policy policy;
  std::string policy_name;
  OutputFormat format = OutputFormat::kTable;
  // Wall time spent reading, parsing and validating the file.
  absl::Duration load_time;
  // --start-latency / --finish-latency: the executor's latencies the
  // simulation models (planner::SimOptions). Given explicitly, else read
  // with --executor-metrics, else kDefaultStartLatency /
  // kDefaultFinishLatency.
  absl::Duration start_latency = kDefaultStartLatency;
  absl::Duration finish_latency = kDefaultFinishLatency;
  // --start-parallelism: the executor's start slots (0 = unbounded).
  int32_t start_parallelism = kDefaultStartParallelism;
  // --start-contention: what each start in flight adds to a start's
  // latency (planner::SimOptions::start_contention). Given explicitly, else
  // read with --executor-metrics, else kDefaultStartContention.
  absl::Duration start_contention = kDefaultStartContention;
  // --start-jitter, --jitter-seed: planner::SimOptions::start_jitter and
  // start_jitter_seed.
  absl::Duration start_jitter = absl::ZeroDuration();
  uint64_t jitter_seed = 0;
};

// Berth's simulation options for this setup: its policy and the executor
// latencies, planning at container starts as berthd does.
planner::SimOptions PlannerSimOptions(const Setup& s);

// The same executor latencies for the ETA forecast (planner::ExecutorModel),
// so that `now` forecasts what `simulate` then plays (jitter aside).
planner::ExecutorModel ExecutorModelOf(const Setup& s);

// The count-only baseline's options: max_workers (<= 0: the budgets'), and
// the same executor latencies as Berth's, so that a comparison shows the
// policies, not the executor.
planner::SimOptions BaselineSimOptions(const Setup& s, int32_t max_workers);

// Parses `argv` with the budget flags, --json, --csv, --policy,
// --no-backfill, --default-duration, --aging-interval, --start-latency,
// --finish-latency and `extra`; requires exactly one
// positional FILE; loads and validates it and the budgets.
[[nodiscard]] absl::StatusOr<Setup> Prepare(const std::vector<std::string>& argv,
                                            const std::string& command,
                                            const std::vector<FlagSpec>& extra,
                                            bool allow_lists);

// The moment `at` (> 0) of the run `simulate` makes of `in` under `budgets`
// and this setup's options: ContinuationAt() (state_at.h), whose start is
// in.start + at. With --state-out FILE, that state as a workload file is
// added to out->files; else, with `print`, it is out->text. Errors: INTERNAL
// if it cannot be written as JSON.
[[nodiscard]] absl::StatusOr<planner::SimInput> RunUntil(const Setup& s, planner::SimInput in,
                                                         const planner::Budgets& budgets,
                                                         absl::Duration at, bool print,
                                                         CommandOutput* out);

// A state (ContinuationAt) as the JSON of a workload file.
[[nodiscard]] absl::StatusOr<std::string> StateJson(const Setup& s, const planner::SimInput& state,
                                                    const std::vector<PlanInput::Actual>& actuals,
                                                    const planner::Budgets& budgets,
                                                    absl::Duration at);

// The single combination (REQUIRES: not sweeping).
planner::Budgets OnlyBudgets(const Setup& s);

// "256 GiB, 32 cores, 24 workers, pool database <= 4, workspace <= 8".
std::string DescribeBudgets(const planner::Budgets& b);

// Runs the simulation with progress reporting under `label`.
planner::SimResult RunSimulation(const planner::SimInput& in, planner::SimOptions opt,
                                 const CommandEnv& env, const std::string& label);

// Cells with units: seconds (machine) / "1h30m" (human); fraction / "62.5%".
Cell DurationCell(absl::Duration d);
Cell PercentCell(double fraction);
Cell BytesCell(int64_t bytes);
Cell CpuCell(int64_t millis);

// Chart panels (memory GiB, CPU cores, worker slots, queue) for one or more
// named results of the same workload; x in hours since `start`.
struct NamedResult {
  std::string name;
  std::string color;
  const planner::SimResult* result;
};
Chart UsageChart(const std::string& title, const std::string& subtitle,
                 const planner::Budgets& budgets, const std::vector<NamedResult>& results);

// The --svg path, or empty.
std::string SvgPath(const Setup& s);

}  // namespace plan
}  // namespace berth

#endif  // BERTH_TOOLS_PLAN_COMMON_H_
