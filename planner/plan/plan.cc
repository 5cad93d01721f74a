#include "planner/plan/plan.h"

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "planner/plan/prepare.h"
#include "planner/ranking/ranking.h"
#include "planner/plan/search.h"
#include "planner/model/saturating.h"
#include "planner/model/scratch.h"

namespace berth::planner {

using internal::SatSub;

static_assert(sizeof(Decision) == 56, "Decision grew: check the benchmark");

int64_t Decision::shortfall() const { return SatSub(needed, free); }

bool Usage::operator==(const Usage& o) const {
  return memory_bytes == o.memory_bytes && cpu_millis == o.cpu_millis &&
         workers == o.workers && pool_workers == o.pool_workers;
}

namespace {

// Moves the previous plan's reservation holder (State::reservation_holder)
// ahead of the jobs ranked just before it whose own priority is not above
// the holder's effective priority: it keeps its reservation until it
// starts unless a job of higher priority is queued — jobs that only aged
// past it, or that fair share moved ahead, do not take it. The one place
// where an aged job (the holder) may stay ahead of jobs whose own priority
// it reached — except the top level's (the aging ceiling) arrivals: an
// aged holder never stays ahead of a job whose own priority is the top and
// that was created after the holder reached it (aging never
// delays the top priority's arrivals). O(n).
void KeepReservationHolder(const State& state, const internal::Prepared& p,
                           absl::Duration interval, std::vector<uint32_t>& order) {
  if (p.holder < 0) return;
  const uint32_t h = static_cast<uint32_t>(p.holder);
  const auto it = std::find(order.begin(), order.end(), h);
  if (it == order.end()) return;
  // Its effective priority, even if aged: a promise made while it
  // outranked the jobs of that level is kept (if the top level drops, an
  // aged holder would otherwise fall behind the new top's own jobs).
  const int32_t prio = p.jobs[h].priority;
  // But an aged holder never stays ahead of a job of the top priority (the
  // aging ceiling) created after the holder reached that level: the top's
  // arrivals are not delayed by aging. Top jobs already queued then keep
  // their place behind it (the top level dropped to theirs after the
  // promise).
  const QueuedJob& holder = state.queued[h];
  const bool aged = p.jobs[h].aged_levels > 0;
  const absl::Time reached_top =
      internal::WaitingSince(holder) +
      interval * (static_cast<int64_t>(p.aging_ceiling) - holder.priority);
  auto first = it;
  while (first != order.begin()) {
    const QueuedJob& q = state.queued[*(first - 1)];
    if (q.priority > prio) break;
    if (aged && q.priority >= p.aging_ceiling && internal::WaitingSince(q) > reached_top) break;
    --first;
  }
  std::rotate(first, it, it + 1);
}

// The ranking Plan() searches, before KeepReservationHolder; with `keys`,
// the keys it ranked by too.
void Rank(const State& state, const Budgets& budgets, const Policy& policy,
          const internal::Prepared& p, ScratchBuffers* scratch,
          std::vector<JobRankKey>* keys, std::vector<uint32_t>& order) {
  RankingInput input;
  input.jobs = p.jobs;
  input.state = &state;
  input.memory_capacity = budgets.memory_bytes;
  input.cpu_capacity = budgets.cpu_millis;
  input.running_memory_by_workspace = p.running_memory_by_workspace;
  input.running_cpu_by_workspace = p.running_cpu_by_workspace;
  input.num_workspaces = static_cast<uint32_t>(p.workspaces.size());
  input.last_turn_by_workspace = p.last_turn_by_workspace;
  input.min_priority = p.min_priority;
  input.max_priority = p.max_priority;
  input.aging_interval_ns =
      policy.aging_interval > absl::ZeroDuration()
          ? std::max<int64_t>(1, absl::ToInt64Nanoseconds(policy.aging_interval))
          : 0;
  input.scratch = scratch;
  input.keys = keys;
  const RankingPolicy& ranking =
      policy.ranking != nullptr ? *policy.ranking : DrfRanking();
  ranking.Rank(input, order);
}

}  // namespace

int32_t EffectivePriority(const QueuedJob& job, const PlanResult& result) {
  return internal::AgedPriority(job.priority, internal::WaitingSince(job), result.now,
                                result.aging_interval, result.aging_ceiling);
}

void CarryReservation(const State& prev_state, const PlanResult& prev,
                      State& next) {
  CarryReservation(prev_state, prev, next, /*none_forgotten=*/false);
}

void CarryReservation(const State& prev_state, const PlanResult& prev, State& next,
                      bool none_forgotten) {
  // Turns: each admission of prev, in ranking order, takes the next turn.
  // Workspaces with nothing queued or running (absent from prev.workspaces)
  // are forgotten: the map stays as small as the live workspaces.
  if (&next != &prev_state) next.workspace_turns = prev_state.workspace_turns;
  // Usually every remembered workspace is still live: one lookup per live
  // workspace finds that, where a search of the sorted names per turn was
  // one string comparison per step (a forecast carries every plan).
  size_t live = none_forgotten ? next.workspace_turns.size() : 0;
  for (size_t i = 0; !none_forgotten && i < prev.workspaces.size(); ++i) {
    if (i > 0 && prev.workspaces[i] == prev.workspaces[i - 1]) continue;  // counted once
    live += next.workspace_turns.contains(prev.workspaces[i]);
  }
  if (live != next.workspace_turns.size()) {
    absl::erase_if(next.workspace_turns, [&prev](const auto& entry) {
      return !std::binary_search(prev.workspaces.begin(), prev.workspaces.end(), entry.first);
    });
  }
  if (prev.admitted_count > 0) {
    uint64_t turn = 0;
    for (const auto& [ws, t] : next.workspace_turns) turn = std::max(turn, t);
    for (const Decision& d : prev.decisions) {
      if (d.verdict != Verdict::kAdmit || d.job >= prev_state.queued.size()) continue;
      next.workspace_turns[prev_state.queued[d.job].workspace] = ++turn;
    }
  }
  // Aging's memory of the top priority: refreshed when a job of (at least)
  // the remembered priority was queued, replaced by the queued top once the
  // memory has lapsed (prev's ceiling fell below it); kept while nothing
  // that fits is queued.
  if (&next != &prev_state) {
    next.top_priority = prev_state.top_priority;
    next.top_priority_seen = prev_state.top_priority_seen;
  }
  if (const int32_t top = prev.queued_top_priority;
      top != INT32_MIN && (top >= next.top_priority || prev.aging_ceiling < next.top_priority)) {
    next.top_priority = top;
    next.top_priority_seen = prev.now;
  }
  if (prev.reserved_decision < 0 ||
      static_cast<size_t>(prev.reserved_decision) >= prev.decisions.size()) {
    next.reservation_holder.clear();
    next.reservation_promised = absl::InfiniteFuture();
    return;
  }
  const std::string& holder =
      prev_state.queued[prev.decisions[prev.reserved_decision].job].id;
  const absl::Time promised = prev_state.reservation_holder == holder
                                  ? prev_state.reservation_promised
                                  : prev.reservation_start;
  next.reservation_holder = holder;
  next.reservation_promised = promised;
}

PlanResult Plan(const State& state, const Budgets& budgets,
                const Policy& policy, absl::Time now) {
  Planner planner;
  PlanResult out;
  planner.Plan(state, budgets, policy, now, out);
  return out;
}

Planner::Planner()
    : prepared_(std::make_unique<internal::Prepared>()),
      scratch_(std::make_unique<ScratchBuffers>()) {}

Planner::~Planner() = default;

namespace {

// Budgets::nodes: cluster-wide fields <= 0 are the nodes' sums.
Budgets WithNodeTotals(const Budgets& b) {
  Budgets out = b;
  int64_t memory = 0, cpu = 0, workers = 0;
  bool unlimited = false;
  for (const Node& n : b.nodes) {
    if (n.memory_bytes <= 0 || n.cpu_millis <= 0) continue;
    memory = internal::SatAdd(memory, n.memory_bytes);
    cpu = internal::SatAdd(cpu, n.cpu_millis);
    if (n.max_workers > 0) workers += n.max_workers; else unlimited = true;
  }
  if (out.memory_bytes <= 0) out.memory_bytes = memory;
  if (out.cpu_millis <= 0) out.cpu_millis = cpu;
  if (out.max_workers <= 0) {
    out.max_workers = unlimited || workers > INT32_MAX ? INT32_MAX
                                                       : static_cast<int32_t>(workers);
  }
  return out;
}

}  // namespace

void Planner::Plan(const State& state, const Budgets& given,
                   const Policy& policy, absl::Time now, PlanResult& result) {
  Budgets with_totals;
  const bool totals = !given.nodes.empty() &&
                      (given.memory_bytes <= 0 || given.cpu_millis <= 0 ||
                       given.max_workers <= 0);
  if (totals) with_totals = WithNodeTotals(given);
  const Budgets& budgets = totals ? with_totals : given;
  internal::Prepared& p = *prepared_;
  internal::Prepare(state, budgets, policy, now, *scratch_, p);
  std::vector<uint32_t>& order = order_;
  Rank(state, budgets, policy, p, scratch_.get(), nullptr, order);
  KeepReservationHolder(state, p, policy.aging_interval, order);

  internal::ResetResult(result, /*keep_names=*/false);
  PlanResult& out = result;
  out.now = now;
  out.aging_interval = policy.aging_interval;
  out.aging_ceiling = p.aging_ceiling;
  out.queued_top_priority = p.queued_top;
  out.default_duration = policy.default_duration > absl::ZeroDuration()
                             ? policy.default_duration
                             : absl::Hours(1);
  out.decisions.reserve(order.size());
  internal::Search(p, state, budgets, policy, now, order, out);

  out.workspaces.reserve(p.workspaces.size());
  for (absl::string_view w : p.workspaces) out.workspaces.emplace_back(w);
  out.pools.reserve(p.pools.size());
  for (absl::string_view pool : p.pools) out.pools.emplace_back(pool);
  out.nodes.reserve(p.nodes.size());
  out.node_specs.reserve(p.nodes.size());
  for (uint32_t i = 0; i < p.nodes.size(); ++i) {
    out.nodes.push_back(p.nodes.node(i).id);
    out.node_specs.push_back(p.nodes.node(i));
  }
}

RankingKeys RankKeysOf(const State& state, const Budgets& given, const Policy& policy,
                       absl::Time now) {
  const bool totals = !given.nodes.empty() &&
                      (given.memory_bytes <= 0 || given.cpu_millis <= 0 ||
                       given.max_workers <= 0);
  const Budgets budgets = totals ? WithNodeTotals(given) : given;
  internal::Prepared p;
  ScratchBuffers scratch;
  internal::Prepare(state, budgets, policy, now, scratch, p);
  RankingKeys out;
  std::vector<uint32_t> order;
  Rank(state, budgets, policy, p, &scratch, &out.keys, order);
  out.keys.resize(p.jobs.size());  // a policy that records none
  out.jobs = p.jobs;
  out.workspaces.reserve(p.workspaces.size());
  for (absl::string_view w : p.workspaces) out.workspaces.emplace_back(w);
  out.memory_budget = budgets.memory_bytes;
  out.cpu_budget = budgets.cpu_millis;
  out.aging_ceiling = p.aging_ceiling;
  out.holder = p.holder;
  out.policy = std::string(
      (policy.ranking != nullptr ? *policy.ranking : DrfRanking()).name());
  return out;
}

}  // namespace berth::planner
