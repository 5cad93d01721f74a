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
#ifndef BERTH_PLANNER_FORECAST_ETA_H_
#define BERTH_PLANNER_FORECAST_ETA_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "planner/model/model.h"
#include "planner/plan/plan.h"

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

// EstimateStarts(state, result, index + 1)[index] without keeping the
// estimates before it (ExplainJob of one job in a 1M queue: no 12-MB vector
// per call). kUnknown if index is past the decisions.
[[nodiscard]] StartEstimate EstimateStart(const State& state, const PlanResult& result,
                                          size_t index);

// Every decision's estimate of one plan, from one pass, kept in 16 bytes
// each (a StartEstimate is 32): for a plan that is asked about many times
// (berthd's PlanSnapshot::estimates(), shared by ExplainJob and GetPlan), so
// that each question is O(1) instead of a walk of the ranking up to the job.
// A time is kept as nanoseconds after result.now; the rare one that is not
// a whole number of them (or is out of range) is kept exactly on the side.
//
// Immutable once built: thread-safe to read.
class StartEstimateTable {
 public:
  // An empty table.
  StartEstimateTable() = default;
  // EstimateStarts(state, result), kept. REQUIRES: result = Plan(state, ...).
  StartEstimateTable(const State& state, const PlanResult& result);

  // result.decisions.size().
  size_t size() const { return packed_.size(); }
  // Equal in every field to EstimateStarts(state, result)[k].
  // REQUIRES: k < size().
  StartEstimate operator[](size_t k) const;

 private:
  // offset_ns: time - now in nanoseconds, or one of the two markers below.
  struct Packed {
    int64_t offset_ns = 0;
    int32_t node = -1;
    EtaKind kind = EtaKind::kUnknown;
  };
  static_assert(sizeof(Packed) == 16, "16 bytes a decision: 16 MB at 1M jobs");
  static constexpr int64_t kInfinite = INT64_MAX;  // InfiniteFuture()
  static constexpr int64_t kInexact = INT64_MIN;   // in inexact_

  absl::Time now_;
  std::vector<Packed> packed_;
  absl::flat_hash_map<uint32_t, absl::Time> inexact_;  // by index
};

}  // namespace berth::planner

#endif  // BERTH_PLANNER_FORECAST_ETA_H_
