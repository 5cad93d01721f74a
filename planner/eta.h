// Start estimates for the queued jobs of a plan, from one pass over its
// ranking: when each job is expected to start if every estimate holds and
// nothing else arrives — never "now" for a job that cannot start now.
//
// The pass places the waiting jobs in ranking order (strict order, no
// backfill) on the timeline of the plan's running and admitted jobs: each
// starts at the earliest time, no earlier than the job ranked before it, at
// which the releases so far free enough for it, and then holds its
// resources for its expected duration. With Budgets::nodes it must also fit
// one node of its pool (best fit, as admission places) at that time, and
// holds its resources there: a job that fits the cluster but no node waits
// until a node frees enough, and never gets "now". O(n log m) for n queued jobs and m
// jobs holding resources at any time; allocates O(n + m).
//
// Thread-safe: pure functions of their arguments.
#ifndef BERTH_PLANNER_ETA_H_
#define BERTH_PLANNER_ETA_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "planner/model.h"
#include "planner/plan.h"

namespace berth::planner {

enum class EtaKind : uint8_t {
  // No estimate: paused, pool in maintenance, dependencies pending,
  // rejected, or it does not fit even once every running job has ended.
  kUnknown = 0,
  // Admitted by this plan: starts now.
  kNow = 1,
  // Holds the head-of-line reservation: a start Berth keeps (backfill never
  // delays it) unless estimates prove wrong or a higher priority arrives.
  kReserved = 2,
  // Waiting: the start if every estimate holds and nothing of higher rank
  // arrives. Always after now. Backfill may start it earlier; estimates
  // that prove too short, later.
  kIfEstimatesHold = 3,
};

// "unknown", "now", "reserved", "if_estimates_hold".
absl::string_view EtaKindName(EtaKind k);

struct StartEstimate {
  EtaKind kind = EtaKind::kUnknown;
  absl::Time time = absl::InfiniteFuture();  // InfiniteFuture() if unknown
  // With Budgets::nodes: the node it is expected to start on (index into
  // PlanResult::nodes: the admission's node, the reservation's node, or the
  // node that frees enough first in the pass); -1 without nodes or if
  // unknown.
  int32_t node = -1;
};

// One estimate per result.decisions[k] for k < min(limit, decisions.size()).
// REQUIRES: result = Plan(state, ...).
[[nodiscard]] std::vector<StartEstimate> EstimateStarts(
    const State& state, const PlanResult& result, size_t limit = SIZE_MAX);

}  // namespace berth::planner

#endif  // BERTH_PLANNER_ETA_H_
