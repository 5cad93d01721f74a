#include "planner/explain/rank_arithmetic.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "planner/ranking/ranking.h"

namespace berth::planner {
namespace {

constexpr size_t kReasons = static_cast<size_t>(AheadReason::kReservation) + 1;

std::optional<AheadReason> If(bool ahead, AheadReason why) {
  if (ahead) return why;
  return std::nullopt;
}

}  // namespace

const char* AheadReasonText(AheadReason reason) {
  switch (reason) {
    case AheadReason::kHigherPriority: return "higher priority";
    case AheadReason::kOwnPriority: return "same priority, its own (not aged)";
    case AheadReason::kReachedEarlier: return "aged to the same priority earlier";
    case AheadReason::kLowerShare: return "same priority, lower workspace share";
    case AheadReason::kQueuedEarlier: return "same share, queued earlier";
    case AheadReason::kEarlierTurn: return "same share, earlier turn";
    case AheadReason::kTieBreak: return "same share and turn, tie-break";
    case AheadReason::kSameWorkspace: return "same workspace, created earlier";
    case AheadReason::kCreatedEarlier: return "created earlier";
    case AheadReason::kReservation: return "holds the reservation";
  }
  return "unknown";
}

std::optional<AheadReason> AheadByKeys(const RankingKeys& keys, const State& state,
                                       uint32_t a, uint32_t b) {
  if (a == b) return std::nullopt;
  const JobRecord& x = keys.jobs[a];
  const JobRecord& y = keys.jobs[b];
  if (keys.policy == "fifo") {
    if (x.created_ns != y.created_ns) {
      return If(x.created_ns < y.created_ns, AheadReason::kCreatedEarlier);
    }
    return If(TieBreakLess(state, a, b), AheadReason::kCreatedEarlier);
  }
  const JobRankKey& kx = keys.keys[a];
  const JobRankKey& ky = keys.keys[b];
  if (x.priority != y.priority) return If(x.priority > y.priority, AheadReason::kHigherPriority);
  if (kx.aged != ky.aged) return If(!kx.aged, AheadReason::kOwnPriority);
  if (kx.aged) return If(kx.position < ky.position, AheadReason::kReachedEarlier);
  if (x.workspace == y.workspace) {
    return If(kx.position < ky.position, AheadReason::kSameWorkspace);
  }
  if (kx.share_bits != ky.share_bits) {
    return If(kx.share_bits < ky.share_bits, AheadReason::kLowerShare);
  }
  if (kx.since_ns != ky.since_ns) return If(kx.since_ns < ky.since_ns, AheadReason::kQueuedEarlier);
  if (kx.turn != ky.turn) return If(kx.turn < ky.turn, AheadReason::kEarlierTurn);
  if (kx.salt != ky.salt) return If(kx.salt < ky.salt, AheadReason::kTieBreak);
  return If(x.workspace < y.workspace, AheadReason::kTieBreak);
}

RankArithmetic ExplainRank(const State& state, const RankingKeys& keys,
                           const PlanResult& result, size_t index,
                           absl::Duration aging_interval, int max_ahead) {
  RankArithmetic r;
  const uint32_t i = result.decisions[index].job;
  const JobRecord& j = keys.jobs[i];
  const JobRankKey& k = keys.keys[i];
  r.policy = keys.policy;
  r.priority = state.queued[i].priority;
  r.effective_priority = j.priority;
  r.aged_levels = j.aged_levels;
  if (aging_interval > absl::ZeroDuration() && j.waiting_since_ns > 0) {
    r.waiting_since = absl::FromUnixNanos(j.waiting_since_ns);
    r.aging_interval = aging_interval;
    r.aging_ceiling = keys.aging_ceiling;
  }
  if (k.aged) r.reached_level_at = absl::FromUnixNanos(k.reached_ns);
  if (j.workspace < keys.workspaces.size()) r.workspace = keys.workspaces[j.workspace];
  r.memory_share = k.memory_share;
  r.cpu_share = k.cpu_share;
  r.memory_budget = keys.memory_budget;
  r.cpu_budget = keys.cpu_budget;
  float share;
  std::memcpy(&share, &k.share_bits, sizeof share);
  r.dominant_share = share;
  if (k.since_ns > 0) r.next_queued_at = absl::FromUnixNanos(k.since_ns);
  r.turn = k.turn;
  r.position = k.position;
  r.holds_reservation = keys.holder == static_cast<int64_t>(i);

  std::array<int32_t, kReasons> counts{};
  for (size_t m = 0; m < index; ++m) {
    const uint32_t o = result.decisions[m].job;
    if (keys.jobs[o].rejected()) continue;  // as Explanation::jobs_ahead
    // Not ahead by the keys: the reservation holder, kept in its place.
    const AheadReason why = AheadByKeys(keys, state, o, i).value_or(AheadReason::kReservation);
    ++counts[static_cast<size_t>(why)];
    if (static_cast<int>(r.first_ahead.size()) < max_ahead) {
      r.first_ahead.push_back({state.queued[o].id, why});
    }
  }
  for (size_t c = 0; c < kReasons; ++c) {
    if (counts[c] > 0) r.ahead_by_reason.push_back({static_cast<AheadReason>(c), counts[c]});
  }
  std::stable_sort(r.ahead_by_reason.begin(), r.ahead_by_reason.end(),
                   [](const auto& x, const auto& y) { return x.count > y.count; });
  return r;
}

}  // namespace berth::planner
