// Explanations: the human side of a plan, rendered lazily from a PlanResult
// so that Plan() itself allocates no strings. Answers "why is my job not
// running?" (berth.v1.Explanation / PlanDecision.summary at the edge).
//
// Thread-safe: pure functions of their arguments.
#ifndef BERTH_PLANNER_EXPLAIN_EXPLAIN_H_
#define BERTH_PLANNER_EXPLAIN_EXPLAIN_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "planner/forecast/eta.h"
#include "planner/model/model.h"
#include "planner/plan/plan.h"
#include "planner/model/reasons.h"

namespace berth::planner {

// = berth.v1.Shortfall.
struct Shortfall {
  Dimension dimension = Dimension::kUnspecified;
  int64_t needed = 0;
  int64_t free = 0;
  int64_t capacity = 0;
  int64_t shortfall = 0;  // needed - free
};

// = berth.v1.Suggestion: the smallest change that would let the job run now.
struct Suggestion {
  std::string text;  // "fits now if memory estimate <= 6 GiB"
  Dimension dimension = Dimension::kUnspecified;
  // The estimate in `dimension` that would fit now (bytes / millicores), or 0
  // when the change is not to the job's estimate ("needs a worker slot").
  int64_t fits_if_at_most = 0;
};

// = berth.v1.Explanation (for a queued job).
struct Explanation {
  std::string job_id;
  Verdict verdict = Verdict::kUnspecified;
  Reason reason = Reason::kUnspecified;
  Problem problem = Problem::kNone;
  int32_t queue_position = 0;  // 1-based
  int32_t jobs_ahead = 0;      // non-rejected queued jobs ranked ahead
  std::vector<std::string> ahead_job_ids;  // the first few of them
  std::optional<Shortfall> shortfall;
  std::vector<std::string> pending_dependencies;  // in depends_on order
  // When the job is expected to start: now if admitted; the reservation's
  // start if it holds it; otherwise a lower bound (estimate_is_lower_bound):
  // the earliest time the running and admitted jobs' expected ends free
  // enough for it alone, and never before the next of those ends (a job
  // that waits cannot start before something changes). InfiniteFuture() if
  // unknown (paused, pool in maintenance, dependencies pending, rejected).
  absl::Time estimated_start = absl::InfiniteFuture();
  bool estimate_is_lower_bound = false;
  // The job holds the reservation and its start moved later than the start
  // first promised to it (State::reservation_promised; running jobs overran
  // their estimates): that first promise, so that every slip is said
  // ("overdue (was ...)"). InfiniteFuture() otherwise.
  absl::Time first_promised_start = absl::InfiniteFuture();
  // The start from the plan's one pass over the ranking (eta.h): its kind
  // (now, reserved, if estimates hold, unknown) and time.
  StartEstimate projected;
  // How many levels aging raised the priority it was ranked with
  // (EffectivePriority() - priority); 0 if aging did not move it.
  int64_t aging_boost = 0;
  std::optional<Suggestion> smallest_change;
  // With Budgets::nodes: the node it was placed on (admitted) or its
  // reservation is on; empty otherwise. on_node: the shortfall is one node's
  // (short_node, may be empty), not the cluster's; cluster_free is what the
  // cluster has free in that dimension.
  std::string node;
  bool on_node = false;
  std::string short_node;
  int64_t cluster_free = 0;
  // Sentences for people: "Waiting for memory: needs 16 GiB, 6 GiB free of
  // 128 GiB. 3 higher-ranked jobs ahead. Expected to start around
  // 2026-11-22 14:20 UTC. Fits now if memory estimate <= 6 GiB."
  std::string summary;
};

struct ExplainOptions {
  // How many ids of jobs ahead to list.
  int max_ahead_ids = 5;
};

// Explains result.decisions[index], with its projected start from a
// forecast of the whole plan (EstimateStarts: for one-off explanations and
// tests; berthd keeps one StartEstimateTable per plan and uses the overload
// below). `budgets` and `policy` are those planned with.
// REQUIRES: `result` = Plan(state, budgets, policy, ...) and
// index < decisions.size().
[[nodiscard]] Explanation Explain(const State& state, const Budgets& budgets,
                    const Policy& policy, const PlanResult& result, size_t index,
                    const ExplainOptions& options = {});

// The same, with the projected start taken from `estimates` (the plan's
// StartEstimateTable): O(1) for it.
// REQUIRES: as above, and estimates = StartEstimateTable(state, budgets,
// policy, result).
[[nodiscard]] Explanation Explain(const State& state, const Budgets& budgets,
                    const PlanResult& result, size_t index,
                    const StartEstimateTable& estimates,
                    const ExplainOptions& options = {});

// The one-line summary of a decision (berth.v1.PlanDecision.summary), e.g.
// "needs 16 GiB memory, 6 GiB free of 128 GiB", "admitted", "paused".
// Cheaper than Explain(): no ETA, no ids; O(1) but for the list of pending
// dependencies.
[[nodiscard]] std::string DecisionSummary(const State& state, const PlanResult& result,
                            size_t index);

// The shortfall of a decision, if it has a binding dimension.
[[nodiscard]] std::optional<Shortfall> ShortfallOf(const Decision& d);

// The smallest change for result.decisions[index], if one exists.
[[nodiscard]] std::optional<Suggestion> SuggestionOf(const State& state,
                                       const PlanResult& result, size_t index);

}  // namespace berth::planner

#endif  // BERTH_PLANNER_EXPLAIN_EXPLAIN_H_
