// The ETA ranges of a plan (planner/forecast/eta_range.h) with the ratios
// Berth learned: each run's real time over its duration estimate, from the
// usage history the store keeps per (workspace, action).
//
// A queued job's ratios are its (workspace, action)'s when that has at least
// kMinRatioRuns runs with an estimate, else its workspace's (every action's
// runs pooled), else none: then it gets no range (never an invented one),
// and in the scaled forecasts it is scaled by the ratios of all history, as
// are running jobs (by their workspace's, else all history's), so that the
// jobs ahead of a ranged job vary as Berth has seen jobs vary.
//
// Pure functions of their arguments; a PlanRanges is immutable once built.
#ifndef BERTH_EXECUTOR_RECONCILE_ETA_RANGES_H_
#define BERTH_EXECUTOR_RECONCILE_ETA_RANGES_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "executor/store/job_record.h"
#include "executor/store/usage_history.h"
#include "planner/forecast/eta.h"
#include "planner/forecast/eta_range.h"
#include "planner/model/model.h"
#include "planner/plan/plan.h"
#include "planner/ranking/policy.h"

namespace berth {

// Fewest runs with an estimate before ratios are learned.
inline constexpr int kMinRatioRuns = 5;
// Plans of larger queues get no ranges: each range costs three forecasts
// and three copies of the queue.
inline constexpr size_t kMaxRangedQueue = 100'000;

// real run time / estimate of each SUCCEEDED run that had an estimate (a
// failed run ends early for reasons other than its length).
std::vector<double> DurationRatiosOf(const UsageHistory& history);

// Where a queued job's ratios come from.
struct RangeBasis {
  std::string basis;  // "action" or "workspace"
  planner::DurationRatios ratios;
};

struct PlanRanges {
  // By index into state.queued; nullopt: no history of its own.
  std::vector<std::optional<RangeBasis>> basis;
  // Null when no queued job has ratios, or the queue is above
  // kMaxRangedQueue.
  std::unique_ptr<planner::EtaRangeTable> table;
  // The queue was above kMaxRangedQueue.
  bool too_large = false;
};

// The ranges of `result` (= Plan(state, budgets, policy, result.now)).
// `queued_jobs[i]` is the store's record of state.queued[i] (its action is
// read from it for the workspaces with history only).
std::unique_ptr<const PlanRanges> BuildPlanRanges(
    const planner::State& state, const std::vector<JobRecord>& queued_jobs,
    const planner::Budgets& budgets, const planner::Policy& policy,
    const planner::PlanResult& result, const planner::ForecastOptions& options,
    const std::vector<UsageHistory>& histories);

}  // namespace berth

#endif  // BERTH_EXECUTOR_RECONCILE_ETA_RANGES_H_
