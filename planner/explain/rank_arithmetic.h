// The arithmetic behind a queued job's rank (berth.v1.RankArithmetic): its
// priority and aged priority, its workspace's dominant share and turn, and
// the jobs ahead of it with why each is ahead — all read from the keys the
// planner's ranking compared (RankKeysOf), never recomputed.
//
// Thread-safe: pure functions of their arguments.
#ifndef BERTH_PLANNER_EXPLAIN_RANK_ARITHMETIC_H_
#define BERTH_PLANNER_EXPLAIN_RANK_ARITHMETIC_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "planner/model/model.h"
#include "planner/plan/plan.h"

namespace berth::planner {

// Why one queued job ranks ahead of another, in the order the keys are
// compared.
enum class AheadReason : uint8_t {
  kHigherPriority,    // ranked at a higher (effective) priority
  kOwnPriority,       // same priority: its own, the other only aged to it
  kReachedEarlier,    // both aged to the level: it reached it first (at one
                      // instant: higher own priority, then older created_at)
  kLowerShare,        // its workspace's dominant share was lower
  kQueuedEarlier,     // equal shares: its workspace's next job was queued first
  kEarlierTurn,       // equal shares and queue times: its workspace's last
                      // turn is older (or it never had one)
  kTieBreak,          // equal keys: a hash of (workspace, created_at), then name
  kSameWorkspace,     // same workspace and level: earlier created_at (then id)
  kCreatedEarlier,    // "fifo": earlier created_at (then id)
  kReservation,       // it holds the reservation, kept ahead of jobs of no
                      // higher priority
};

// "higher priority", "same share, earlier turn", ...
const char* AheadReasonText(AheadReason reason);

// Whether queued job `a` ranks ahead of queued job `b` by `keys` (indices
// into State::queued), and why; nullopt if `b` is ahead of `a` or a == b.
// A strict total order on the jobs that is the ranking's order before the
// reservation holder is kept in its place.
// REQUIRES: keys = RankKeysOf(state, ...), a and b < state.queued.size().
[[nodiscard]] std::optional<AheadReason> AheadByKeys(const RankingKeys& keys,
                                                     const State& state, uint32_t a,
                                                     uint32_t b);

// = berth.v1.RankArithmetic.
struct RankArithmetic {
  std::string policy;
  int32_t priority = 0;
  int32_t effective_priority = 0;
  int32_t aged_levels = 0;
  absl::Time waiting_since = absl::InfinitePast();  // InfinitePast: no age
  absl::Duration aging_interval = absl::ZeroDuration();
  int32_t aging_ceiling = 0;
  absl::Time reached_level_at = absl::InfinitePast();  // aged only
  std::string workspace;
  double memory_share = 0;
  double cpu_share = 0;
  int64_t memory_budget = 0;
  int64_t cpu_budget = 0;
  double dominant_share = 0;
  absl::Time next_queued_at = absl::InfinitePast();
  uint64_t turn = 0;
  uint32_t position = 0;
  bool holds_reservation = false;
  struct AheadCount {
    AheadReason reason;
    int32_t count;
  };
  std::vector<AheadCount> ahead_by_reason;  // most first, then reason order
  struct AheadJob {
    std::string job_id;
    AheadReason reason;
  };
  std::vector<AheadJob> first_ahead;  // in rank order
};

// The arithmetic of result.decisions[index]'s job, listing up to
// `max_ahead` of the jobs ahead. O(index) after the keys.
// REQUIRES: keys = RankKeysOf(state, budgets, policy, result.now) and
// result = Plan(state, budgets, policy, result.now); index <
// result.decisions.size().
[[nodiscard]] RankArithmetic ExplainRank(const State& state, const RankingKeys& keys,
                                         const PlanResult& result, size_t index,
                                         absl::Duration aging_interval, int max_ahead = 5);

}  // namespace berth::planner

#endif  // BERTH_PLANNER_EXPLAIN_RANK_ARITHMETIC_H_
