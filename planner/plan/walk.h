// Walk: the mutable state of the admission search — what is free now, the
// head-of-line reservation and what may backfill around it — and the
// decision for one eligible job. Internal to planner/ (search.cc drives it;
// the rules are in plan.h).
//
// Not thread-safe: one per Search() call.
#ifndef BERTH_PLANNER_PLAN_WALK_H_
#define BERTH_PLANNER_PLAN_WALK_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/time/time.h"
#include "planner/model/job_record.h"
#include "planner/model/model.h"
#include "planner/plan/nodes.h"
#include "planner/plan/plan.h"
#include "planner/ranking/policy.h"
#include "planner/plan/prepare.h"
#include "planner/timeline/timeline.h"

namespace berth::planner::internal {

// The head-of-line reservation while the search runs.
struct Reservation {
  bool active = false;
  bool strict = false;       // Policy::backfill == false: nothing backfills
  // The holder's first promised start has passed (State::
  // reservation_promised): only jobs that fit the spare backfill.
  bool overdue = false;
  // Reservation start - now, saturated. Always > 0: the head does not fit
  // now, and no running job is expected to end at or before now
  // (ExpectedEnd), so a due-but-blocked reservation cannot arise and only
  // jobs that fit what the head leaves spare backfill beside it.
  int64_t start_in_ns = 0;
  uint32_t pool = 0;         // the head's pool and workspace
  uint32_t workspace = 0;
  Amounts spare;             // left at the start after the head
};

class Walk {
 public:
  // REQUIRES: p, b and out outlive the Walk.
  Walk(const Prepared& p, const State& state, const Budgets& b,
       const Policy& policy, absl::Time now, PlanResult& out);

  // True when nothing more can be admitted or reserved: no worker slot is
  // free and the head-of-line reservation is placed. Every later eligible
  // job then waits for a worker slot (it is the first dimension checked).
  bool Saturated() const { return res_.active && free_.worker_slots < 1; }

  // True once the head-of-line reservation is placed. From then on a job is
  // admitted only if it fits free() and either its estimate is at most
  // BackfillLimit() or it fits spare() (with a spare worker slot); any other
  // job waits and changes nothing of the walk's state (its reason is read
  // off that state).
  bool Reserved() const { return res_.active; }
  const Amounts& free() const { return free_; }
  const Amounts& spare() const { return res_.spare; }
  // The longest estimate (ns) that ends before the reservation
  // (EndsBeforeReservation), or -1 if none does. REQUIRES: Reserved().
  int64_t BackfillLimit() const;

  // True when no job of at least this memory, cpu and expected duration
  // (nanoseconds, default applied) can be admitted any more: the
  // reservation is placed, and a worker slot, memory or cpu is short for
  // it, or backfill is off, or it could neither end before the reservation
  // nor fit what the reservation leaves spare (free amounts and the spare
  // only shrink).
  bool AdmitsNone(int64_t min_memory, int64_t min_cpu, int64_t min_duration_ns) const {
    if (!res_.active) return false;
    if (res_.strict || free_.worker_slots < 1 || free_.memory_bytes < min_memory ||
        free_.cpu_millis < min_cpu)
      return true;
    const bool ends = !res_.overdue && static_cast<double>(min_duration_ns) * p_.overrun <=
                                           static_cast<double>(res_.start_in_ns);
    const bool spare = res_.spare.worker_slots >= 1 && res_.spare.memory_bytes >= min_memory &&
                       res_.spare.cpu_millis >= min_cpu;
    return !ends && !spare;
  }

  // Decides one eligible job (no problem, not paused, pool open, no pending
  // dependency) at ranking position k.
  void Decide(const JobRecord& j, Decision& d, size_t k);

  // Writes usage, timeline and free amounts to the PlanResult.
  void Finish();

  // Fills needed/free/capacity of `d` for dimension `dim` as of now.
  void FillNow(const JobRecord& j, Dimension dim, Decision& d) const;

  // NEVER_FITS because the job is larger than every node (walk_nodes.cc):
  // fills `d` and out.placements[k] with the largest node. REQUIRES: nodes.
  void FillNeverFitsOnNode(const JobRecord& j, Decision& d, size_t k) const;

 private:
  // May backfill on its own estimate: the reservation is not overdue and the
  // job, its estimate stretched by the running jobs' largest overrun
  // (Prepared::overrun), ends by the reservation's start.
  bool EndsBeforeReservation(const JobRecord& j) const { return EndsBefore(j.duration_ns); }
  bool EndsBefore(int64_t duration_ns) const;
  bool SlotsNow(const JobRecord& j) const;
  Dimension FirstShortNow(const JobRecord& j) const;
  // First dimension in which `j` started now would eat into the head's
  // reservation.
  Dimension FirstShortSpare(const JobRecord& j) const;
  bool FitsSpare(const JobRecord& j) const {
    return FirstShortSpare(j) == Dimension::kUnspecified;
  }
  void ConsumeSpare(const JobRecord& j);
  void Admit(const JobRecord& j, Decision& d);
  // Fits now, but a reservation holds the capacity (or strict order).
  void WaitForPriority(const JobRecord& j, Decision& d, bool fits_now);
  // With a reservation active: the largest estimates that would backfill.
  void SuggestBackfill(const JobRecord& j, Decision& d) const;
  void Reserve(const JobRecord& j, Decision& d, size_t k);

  // With nodes (walk_nodes.cc): decides a job that fits the cluster-wide
  // budgets now; places it on a node, or waits for one.
  void DecideOnNodes(const JobRecord& j, Decision& d, size_t k);
  // Moves the reservation (start: the cluster's earliest fit) onto the node
  // that frees enough earliest; returns the start.
  absl::Time ReserveOnNode(const JobRecord& j, size_t k, absl::Time start);
  // What the nodes of `group` (those the job's pool may use) have free in
  // `dim`, at most the cluster budget's free amount; worker slots: the
  // cluster's.
  int64_t ClusterFree(uint32_t group, Dimension dim) const;
  // With nodes: bounds a counterfactual ("fits now if estimate <= X") by
  // what one node of the job's pool group has free (memory on a node with
  // the job's cpu free, and vice versa). No-op without nodes or a fit.
  void ClampFitsToNodes(const JobRecord& j, Decision& d) const;
  // What node `n` offers job `j` now: its free amounts, and on the
  // reservation's node only the spare the reservation leaves (unless `d`
  // holds the reservation or `j` ends before it), as DecideOnNodes admits.
  NodeAmounts Offered(const JobRecord& j, const Decision& d, uint32_t n) const;
  // With nodes: sets out.placements[k].fits_node for a wait whose
  // counterfactual fits a node of the job's pool now.
  void NameFitsNode(const JobRecord& j, const Decision& d, size_t k);
  // Decide() before NameFitsNode.
  void DecideNow(const JobRecord& j, Decision& d, size_t k);

  const Prepared& p_;
  const State& state_;
  const Budgets& budgets_;
  const absl::Time now_;
  PlanResult& out_;
  Amounts free_;
  std::vector<int64_t> pool_free_;
  std::vector<int64_t> ws_free_;
  int64_t ws_capacity_ = Amounts::kUnlimited;
  Reservation res_;
  int64_t admitted_memory_ = 0;
  int64_t admitted_cpu_ = 0;
  std::vector<int64_t> admitted_by_pool_;
  Timeline timeline_;
  // Without Budgets::nodes: empty.
  std::optional<NodePlacer> placer_;
  NodePlacer::Guard guard_;  // the reservation's node
};

}  // namespace berth::planner::internal

#endif  // BERTH_PLANNER_PLAN_WALK_H_
