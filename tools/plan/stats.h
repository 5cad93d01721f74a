// Statistics over simulation results for berth-plan's reports: wait
// percentiles (overall, by priority, by workspace) and time-weighted
// utilisation of each budget. Pure functions; thread-safe.
#ifndef BERTH_TOOLS_PLAN_STATS_H_
#define BERTH_TOOLS_PLAN_STATS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "planner/simulator/simulator.h"

namespace berth {
namespace plan {

struct WaitStats {
  int64_t jobs = 0;  // jobs that started
  absl::Duration p50, p95, max, mean;
};

// Percentiles (berth::Quantile, tools/base/quantile.h) of the waits of jobs that started (SUCCEEDED or
// FAILED); all zero if none did. `p` in (0, 100].
absl::Duration Percentile(std::vector<absl::Duration> values, double p);
WaitStats Waits(const std::vector<absl::Duration>& waits);

struct GroupWaits {
  std::string key;  // priority number or workspace name
  int32_t priority = 0;
  WaitStats waits;
};
// By priority, highest first.
std::vector<GroupWaits> WaitsByPriority(const planner::SimInput& in,
                                        const planner::SimResult& r);
// By workspace, worst p95 first (then name).
std::vector<GroupWaits> WaitsByWorkspace(const planner::SimInput& in,
                                         const planner::SimResult& r);
WaitStats AllWaits(const planner::SimResult& r);

// Time-weighted mean and peak of one dimension over [start, end], as a
// fraction of the budget (peaks may exceed 1 for the count-only baseline).
struct Utilisation {
  double mean = 0;
  double peak = 0;
};
struct UsageSummary {
  Utilisation memory, cpu, workers;
  double mean_queue = 0;
  int32_t peak_queue = 0;
};
UsageSummary Summarise(const planner::SimResult& r, const planner::Budgets& b);

struct Outcomes {
  int64_t succeeded = 0, failed = 0, dependency_failed = 0, rejected = 0, not_run = 0;
  int64_t timed_out = 0;  // of `failed`
};
Outcomes CountOutcomes(const planner::SimResult& r);

// The job (index into in.jobs) that waited longest among those that started,
// or -1 if none did. Ties: the earlier in the input.
int64_t LongestWaiting(const planner::SimResult& r);

}  // namespace plan
}  // namespace berth

#endif  // BERTH_TOOLS_PLAN_STATS_H_
