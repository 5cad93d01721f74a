// Plan(): the admission search. Given what is queued, what runs and the
// budgets, decides for every queued job: ADMIT now, WAIT (with the reason,
// the binding dimension and its shortfall), or REJECT (it can never run as
// specified).
//
// The search, in one pass over the ranking (Policy::ranking):
//  - Eligibility: rejected jobs (Problem != kNone: invalid resources, unknown
//    pool, duplicate id, larger than a whole budget, unknown/failed/rejected
//    dependency, dependency cycle) get REJECT; then, if paused, PAUSED; then
//    POOL_IN_MAINTENANCE; then WAITING_FOR_DEPENDENCIES while a dependency
//    has not succeeded.
//  - Admission: an eligible job is admitted if it fits every dimension, in
//    this order: worker slots, pool slots, workspace cap, memory, cpu. The
//    first that does not fit is the binding dimension and gives the reason
//    (WAITING_FOR_WORKER_SLOT ... WAITING_FOR_CPU). Memory is never
//    overcommitted: sum(running + admitted) <= budget in every dimension
//    (unless running jobs alone exceed a reduced budget; then nothing is
//    admitted in that dimension).
//  - No starvation (EASY backfill): the first eligible job that does not fit
//    (the head) gets a reservation at the earliest time the timeline of
//    running and admitted jobs' expected ends frees enough for it. A job
//    ranked after it is admitted only if it fits now and either ends by the
//    reservation's start or fits in what the reservation leaves spare at that
//    time; a job that fits now but would delay the reservation gets
//    WAITING_FOR_PRIORITY. With exact durations, the caller passing each
//    plan's holder to the next and no job of higher priority arriving, the
//    reserved job starts by its reservation: always in plan_property_test's
//    simulations (fifo; drf in one workspace), and in >= 99% of the
//    promises of promises_property_test's (drf across workspaces; 100%
//    measured): fair share reorders the others, not the holder.
//  - Estimates that prove wrong (docs/DESIGN.md "Promises"): a
//    running job past its estimate e is expected to end at started + e * 2^k
//    (the smallest k after now), never now; the previous plan's holder
//    (State::reservation_holder) is ranked ahead of jobs of no higher
//    priority, so it keeps the reservation until it starts; once the start
//    first promised to it (State::reservation_promised) has passed, nothing
//    backfills on its own estimate and only what is free now beyond the
//    head's needs is spare; backfill on a job's own estimate stretches it by
//    the running jobs' largest overrun (at most 8x).
//  - Aging (Policy::aging_interval): the ranking sees effective priorities,
//    priority + one per interval waited, at most the highest queued one.
//  - Nodes (Budgets::nodes, optional): a job that fits the cluster-wide
//    budgets is admitted only if some node of its pool's nodes has its
//    memory, cpu and a worker slot free; it goes to the best fit (least
//    memory left, then cpu, ties by node id) and no node is overcommitted.
//    Otherwise it waits for the node dimension that is short (needed / free
//    / capacity of the node with the most free, NodePlacement::on_node). The
//    head's reservation is on the node that frees enough earliest (ties by
//    id), never before the cluster-wide budgets allow; a backfilled job may
//    go on that node only if it ends before the reservation or fits what the
//    reservation leaves spare there. A job larger than every node of its
//    pool is NEVER_FITS (kExceedsBudget), naming the largest node.
//  - Early exit: once no worker slot is left and the reservation is placed,
//    every remaining eligible job waits for a worker slot; those decisions
//    are written from one byte per job.
//
// Deterministic: the result depends only on the contents of the inputs,
// never on the order of State::queued / running or hash-map iteration.
// Cost: O(n log n) for n queued jobs (the ranking's sort), O(n) for the rest;
// no per-job heap allocation and no strings (render text with explain.h).
// Never crashes, asserts or overflows on any State or Budgets values.
//
// Thread-safety: Plan() is a pure function; PlanResult is a value.
#ifndef BERTH_PLANNER_PLAN_PLAN_H_
#define BERTH_PLANNER_PLAN_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "planner/model/model.h"
#include "planner/ranking/policy.h"
#include "planner/model/reasons.h"
#include "planner/timeline/timeline.h"

namespace berth::planner {

// One queued job's decision. decisions[k] in a PlanResult has queue position
// k + 1. 56 bytes, no strings: text comes from explain.h.
struct Decision {
  static constexpr int64_t kNoFit = -1;

  uint32_t job = 0;  // index into State::queued
  Verdict verdict = Verdict::kUnspecified;
  Reason reason = Reason::kUnspecified;
  Problem problem = Problem::kNone;  // REJECT only
  // The binding dimension; kUnspecified when none (admitted, paused, in
  // maintenance, waiting for dependencies, rejected for a dependency or a
  // duplicate id).
  Dimension dimension = Dimension::kUnspecified;
  // Holds the head-of-line reservation (PlanResult::reservation_start).
  bool reserved = false;
  // Queued jobs ranked ahead of this one that are not rejected (they compete
  // for the same capacity). Rejected jobs ahead are not counted.
  uint32_t jobs_ahead = 0;
  // In `dimension`'s unit (bytes, millicores, jobs): what the job needs,
  // what is free at its turn in the ranking (capacity - running - admitted
  // ahead of it; may be negative if running jobs exceed a reduced budget),
  // and the budget's total (Amounts::kUnlimited if uncapped). For
  // WAITING_FOR_PRIORITY, `free` is what the reservation leaves spare at its
  // start. For NEVER_FITS, free is what is free now.
  int64_t needed = 0;
  int64_t free = 0;
  int64_t capacity = 0;
  // The smallest change to the job's estimates that gets it admitted now,
  // everything else unchanged: with memory <= fits_memory_bytes and
  // cpu <= fits_cpu_millis it would be admitted by a re-plan (for
  // NEVER_FITS: it would fit the budget). kNoFit when no estimate change
  // helps (a slot is missing, or nothing is left to fit in).
  int64_t fits_memory_bytes = kNoFit;
  int64_t fits_cpu_millis = kNoFit;

  // needed - free (saturating): > 0 for resource and slot waits.
  int64_t shortfall() const;
};

// What running jobs hold of each budget.
struct Usage {
  int64_t memory_bytes = 0;
  int64_t cpu_millis = 0;
  int64_t workers = 0;
  std::map<std::string, int64_t> pool_workers;  // pools with > 0 workers
  bool operator==(const Usage& o) const;
};

// A dependency of decisions[decision]'s job that has not succeeded:
// State::queued[decisions[decision].job].depends_on[position].
struct PendingDependency {
  uint32_t decision;
  uint32_t position;
};

// Where a decision stands on the nodes (Budgets::nodes); indices into
// PlanResult::nodes, -1 for none.
struct NodePlacement {
  // ADMIT: the node it was placed on. The reserved decision: the node its
  // reservation is on (-1 if no node ever frees enough).
  int32_t node = -1;
  // The decision's needed / free / capacity are those of one node, not the
  // cluster's: the job fits the cluster but no node (waits, fragmentation)
  // or is larger than every node (NEVER_FITS). short_node is that node (-1
  // when no node of the job's pool has a worker slot free, or none exists);
  // cluster_free what the whole cluster has free in the dimension.
  bool on_node = false;
  int32_t short_node = -1;
  int64_t cluster_free = 0;
  // A wait with a counterfactual (Decision::fits_memory_bytes/cpu_millis):
  // a node of the job's pool where the job, its estimates shrunk to those
  // amounts, fits now (the one with the most memory free; ties by id), so
  // the advice can say where. -1 when none (or no counterfactual).
  int32_t fits_node = -1;
};

struct PlanResult {
  absl::Time now;
  // One per queued job, in ranking order.
  std::vector<Decision> decisions;
  int64_t admitted_count = 0;
  Usage used_before;  // running jobs
  Usage used_after;   // running + admitted

  // The head-of-line reservation: index into decisions, or -1 if every
  // eligible job was admitted (or backfill found no head).
  int64_t reserved_decision = -1;
  absl::Time reservation_start = absl::InfiniteFuture();

  // Sorted by decision.
  std::vector<PendingDependency> pending_dependencies;

  // The policy's aging and default duration as applied (for explanations
  // and start estimates): effective priorities never exceed aging_ceiling.
  absl::Duration aging_interval = absl::ZeroDuration();
  int32_t aging_ceiling = 0;
  // The highest priority among the queued jobs that fit the budgets,
  // INT32_MIN if none (what CarryReservation remembers as
  // State::top_priority).
  int32_t queued_top_priority = INT32_MIN;
  absl::Duration default_duration = absl::Hours(1);

  // For explanations (explain.h): sorted names of workspaces and pools; the
  // timeline of running and admitted jobs' expected ends keyed by their
  // indices; and what is free after this plan's admissions.
  std::vector<std::string> workspaces;
  std::vector<std::string> pools;
  Timeline timeline;
  Amounts free_after;  // pool_slots / workspace_slots unused here
  std::vector<int64_t> pool_free_after;
  std::vector<int64_t> workspace_free_after;

  // With Budgets::nodes: the valid nodes' ids, sorted, and one placement per
  // decision (placements[k] for decisions[k]). Both empty without nodes.
  std::vector<std::string> nodes;
  std::vector<NodePlacement> placements;
  // The valid nodes themselves (node_specs[i].id == nodes[i]), for passes
  // over a finished plan (the start estimates, eta.h). Empty without nodes.
  std::vector<Node> node_specs;
};

// Plans admission for `state` under `budgets` at time `now`. Never fails: a
// job the planner cannot accept is REJECTed with a Problem. Allocates its
// working memory afresh; to plan repeatedly (the executor's loop, a
// simulation), keep a Planner.
[[nodiscard]] PlanResult Plan(const State& state, const Budgets& budgets,
                              const Policy& policy, absl::Time now);

// The priority `job` (queued when `result` was planned) was ranked with:
// its own plus one per full result.aging_interval it has waited (since its
// queued_at, or created_at when that is unknown: internal::WaitingSince), at
// most result.aging_ceiling (Policy::aging_interval). Equal to job.priority
// when aging did not move it.
int32_t EffectivePriority(const QueuedJob& job, const PlanResult& result);

// What the ranking of Plan(state, budgets, policy, now) placed each queued
// job by, for explanations: the planner's own numbers, not a second formula.
struct RankingKeys {
  // keys[i], jobs[i] describe State::queued[i] (jobs[i].priority is the
  // effective priority, JobRecord::workspace indexes `workspaces`).
  std::vector<JobRankKey> keys;
  std::vector<JobRecord> jobs;
  std::vector<std::string> workspaces;  // sorted
  // The budget totals the shares are fractions of (<= 0: not counted).
  int64_t memory_budget = 0;
  int64_t cpu_budget = 0;
  // Aging's ceiling (PlanResult::aging_ceiling).
  int32_t aging_ceiling = 0;
  // Index of the reservation holder that Plan() keeps ahead of jobs of no
  // higher priority (State::reservation_holder), -1 if none is queued.
  int64_t holder = -1;
  // The ranking policy's name ("drf", "fifo").
  std::string policy;
};

// Ranks as Plan() does, recording the keys. O(n log n) for n queued jobs.
[[nodiscard]] RankingKeys RankKeysOf(const State& state, const Budgets& budgets,
                                     const Policy& policy, absl::Time now);

// Carries the head-of-line reservation from one plan to the next, as every
// caller that plans repeatedly should (the executor, the simulator): sets
// next.reservation_holder to the job `prev` reserved for (prev planned from
// prev_state), and next.reservation_promised to the start first promised to
// it — prev_state's if the holder is unchanged, else prev's reservation
// start. Clears both when prev reserved nothing. Also carries the fair
// turns (State::workspace_turns): prev_state's, with each workspace of a job
// prev admitted moved to the newest turn, in ranking order, and workspaces
// with nothing queued or running in prev forgotten. And aging's memory of
// the top priority (State::top_priority): prev_state's, refreshed to prev's
// highest queued priority when that is at least the remembered one or the
// memory had lapsed in prev. `next` may be `prev_state` itself.
void CarryReservation(const State& prev_state, const PlanResult& prev,
                      State& next);
// The same, for a caller that knows every workspace in next.workspace_turns
// is among prev.workspaces (`none_forgotten`): skips looking each of them
// up (one hash lookup per live workspace a plan).
void CarryReservation(const State& prev_state, const PlanResult& prev, State& next,
                      bool none_forgotten);

namespace internal {
struct Prepared;
}  // namespace internal
class ScratchBuffers;

// Plans like Plan(), reusing its working memory — and the vectors of the
// PlanResult passed in — from one call to the next, so that planning a large
// queue again does not page-fault ~100 fresh bytes per queued job.
//
// Not thread-safe: one Planner per thread. Same output as Plan().
class Planner {
 public:
  Planner();
  ~Planner();
  Planner(const Planner&) = delete;
  Planner& operator=(const Planner&) = delete;

  // Overwrites `out` with Plan(state, budgets, policy, now).
  void Plan(const State& state, const Budgets& budgets, const Policy& policy,
            absl::Time now, PlanResult& out);

 private:
  std::unique_ptr<internal::Prepared> prepared_;
  std::unique_ptr<ScratchBuffers> scratch_;
  std::vector<uint32_t> order_;
};

}  // namespace berth::planner

#endif  // BERTH_PLANNER_PLAN_PLAN_H_
