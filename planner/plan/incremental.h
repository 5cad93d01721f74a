// IncrementalPlanner: Plan() for a caller that plans the same queue again
// and again as events change it (the simulator, the forecast). It keeps
// what one plan can reuse from the last — the queue indexed in rank order
// (per priority and workspace by created_at and id, per priority by when
// each job was queued, which is what aging reads), every job's
// dependency status, the names' numbering — and updates it per event in
// O(log n): an arrival, a job leaving the queue (started, rejected,
// cancelled), a job starting or ending, an outcome recorded.
//
// Plan() then ranks lazily: it draws jobs in the order the ranking policy
// would give them (the DRF merge of the workspaces' queues, aged bands, the
// reservation holder kept in front) only until the admission walk is
// saturated (no worker slot left and the head-of-line reservation placed);
// every later job then waits for a worker slot (or for its dependencies),
// exactly as in Plan()'s own early exit. So a plan costs about the jobs it
// decides, not the queue.
//
// Exactly Plan(): whatever it returns equals Plan(state(), budgets, policy,
// now) on every field a caller reads (verdicts, reasons, dimensions,
// amounts, counterfactuals, reservation, usage) — incremental_test checks
// it after every event of thousands of generated sequences. Where the lazy
// ranking cannot be exact it is not used, and Plan() runs the whole-queue
// planner on state() instead ("fallback"): a ranking policy other than
// "drf" / "fifo", a node inventory, admission paused, a pool in
// maintenance, any queued job the planner would reject for itself (invalid
// resources, unknown pool, larger than a budget, duplicate id, an unknown
// dependency, a dependency cycle), or, with aging, a queued job with
// neither a queued_at nor a created_at. Such plans cost what Plan() costs;
// the rejected jobs then leave the queue and later plans are incremental
// again. Jobs rejected because a dependency failed (and the jobs behind
// them) are planned incrementally: decided in their place if the walk
// draws them, else after its decisions (appended_rejections()), so that
// every plan rejects every one of them, as Plan() does.
//
// Not thread-safe: one caller at a time. A value the caller owns; the
// planner library keeps no state of its own.
#ifndef BERTH_PLANNER_PLAN_INCREMENTAL_H_
#define BERTH_PLANNER_PLAN_INCREMENTAL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "planner/model/model.h"
#include "planner/plan/plan.h"
#include "planner/ranking/policy.h"

namespace berth::planner {

class IncrementalPlanner {
 public:
  IncrementalPlanner();
  ~IncrementalPlanner();
  IncrementalPlanner(const IncrementalPlanner&) = delete;
  IncrementalPlanner& operator=(const IncrementalPlanner&) = delete;

  // The state plans are made from. Events below change it; State::queued's
  // order changes as jobs leave (the last job takes the leaver's index), and
  // decisions index it as Plan()'s do.
  const State& state() const { return state_; }

  // Copies the controls of `from`: pause, pools in maintenance, the carried
  // reservation, fair turns and aging's memory (not its jobs).
  void SetControls(const State& from);

  // Events. Each is O(log n) plus the dependants of the id concerned.
  // Makes room for `jobs` more queued jobs (a caller about to enqueue a whole
  // queue saves the regrowth of the index's tables).
  void Reserve(size_t jobs);
  // As Enqueue of a copy of each of `jobs`, in that order, at a lower cost
  // per job: the index's tables are sized once and its sorted sizes and
  // durations filled in order. Jobs given in the order the rankings read
  // (created_at, then id) also grow each ranked set at its end. (Pointers:
  // a copy of a whole queue beside the planner's own was 200 MiB at 1M.)
  void EnqueueAll(const std::vector<const QueuedJob*>& jobs);
  // The same, taking `jobs` (no copy) in any order: they join in the order
  // the rankings read (created_at, then id). `jobs` is left empty.
  void EnqueueAll(std::vector<QueuedJob>&& jobs);
  // Enqueue: `job` joins the queue (its id should be new; a duplicate is
  // planned like Plan() plans it: rejected, by the fallback).
  void Enqueue(QueuedJob job);
  // The queued job at index `index` of state().queued leaves the queue.
  // REQUIRES: index < state().queued.size().
  void Dequeue(size_t index);
  // A job starts holding resources / stops holding them. RemoveRunning
  // returns false if no running job has that id.
  void AddRunning(RunningJob job);
  bool RemoveRunning(absl::string_view id);
  // Outcomes dependants look at (State::finished).
  void SetFinished(const std::string& id, DependencyOutcome outcome);
  void ForgetFinished(const std::string& id);

  // The index in state().queued of the queued job `id` (of one of them if
  // the id is queued twice), or -1 if none is queued. O(1).
  int64_t QueuedIndexOf(absl::string_view id) const;
  // True if a queued job depends on `id`. O(1).
  bool HasQueuedDependants(absl::string_view id) const;

  // CarryReservation(state(), prev, state()): call with the plan just made
  // (by this planner, unchanged since), before applying its admissions. When
  // `prev` holds the workspace names of the plan last carried, no turn's
  // workspace is looked up among them (none can have been forgotten).
  void Carry(const PlanResult& prev);

  // How much of a plan the caller reads.
  enum class Detail {
    // Every decision: `out` equals Plan(state(), budgets, policy, now).
    kWhole,
    // out.decisions holds the ranked prefix the walk decided until it was
    // saturated, out.pending_dependencies only that prefix's; every other
    // queued job is planned as tail_decision() (or, if
    // dependency_pending(index), as WAITING_FOR_DEPENDENCIES).
    kPrefix,
    // As kPrefix, but the walk also stops once the reservation is placed and
    // no queued job can be admitted any more (what is free is below the
    // smallest queued job's memory or cpu, or backfill is off): every other
    // queued job waits, for a reason not given. Under "fifo" and "drf" the
    // walk also
    // passes over the jobs waiting for a dependency and, once the
    // reservation is placed, every job it could not admit (larger than what
    // is free, or neither ending before the reservation nor fitting its
    // spare), at O(log n) a job it decides, not a job it passes (FitIndex,
    // incremental_fit.h; under "drf" O(workspaces · log n), ShareIndex,
    // incremental_share.h): out.decisions then holds only some of the ranked
    // prefix (each decision equal to Plan()'s, jobs_ahead the rank among the
    // jobs not rejected), among
    // them the reserved one (out.reserved_decision indexes out.decisions)
    // and every admitted one; every job not in it waits.
    // out.pending_dependencies index out.decisions.
    kAdmissions,
    // As kPrefix, but the walk also stops once the reservation is placed and
    // no queued job can be admitted any more (as kAdmissions, but never
    // passing over a job: out.decisions is the whole ranked prefix). Nothing
    // beyond the prefix is admitted, reserved or rejected, so what is free
    // stays out.free_after, out.pool_free_after and out.workspace_free_after
    // (by out.pools / out.workspaces): every later queued job that is not
    // dependency_pending() waits for TailReason() of those amounts and its
    // own memory and cpu, as Plan() decides it. For a caller that needs every
    // job's reason (the simulator) without walking the jobs that cannot
    // start. The walk also stops once no job it has not drawn could be
    // admitted (what is free, the reservation's end and spare bound it: the
    // jobs within them that it drew were admitted or wait for a pool or
    // workspace slot; incremental_stop.h). out.pending_dependencies is empty
    // unless the plan decided every job (last_was_whole_queue()).
    kPrefixFree,
  };

  // The reason Plan() gives a queued job decided after the walk has stopped
  // (kPrefixFree): the first dimension short for it of worker slots (`free`),
  // its pool's free slots, its workspace's free slots, memory and cpu
  // (`free`), or WAITING_FOR_PRIORITY if none is (it fits now, but could
  // neither end before the reservation nor fit what it leaves spare).
  static Reason TailReason(const Amounts& free, int64_t pool_free, int64_t workspace_free,
                           int64_t memory, int64_t cpu) {
    if (free.worker_slots < 1) return Reason::kWaitingForWorkerSlot;
    if (pool_free < 1) return Reason::kWaitingForPoolSlot;
    if (workspace_free < 1) return Reason::kWaitingForWorkspaceCap;
    if (memory > free.memory_bytes) return Reason::kWaitingForMemory;
    if (cpu > free.cpu_millis) return Reason::kWaitingForCpu;
    return Reason::kWaitingForPriority;
  }

  // Plans state() into `out` (reusing its vectors). When the plan is
  // incremental and not kWhole (last_was_whole_queue() false), the jobs
  // beyond out.decisions are neither admitted, rejected nor reserved; every
  // field of `out` other than decisions and pending_dependencies is whole.
  void Plan(const Budgets& budgets, const Policy& policy, absl::Time now,
            Detail detail, PlanResult& out);

  // With true, every Plan() runs the whole-queue planner (the reference an
  // incremental caller is compared with). Default false.
  void set_whole_queue_only(bool on) { whole_queue_only_ = on; }

  // "drf" admissions-only walks draw up to this many jobs per workspace of a
  // level one by one before passing over jobs in bulk (RankStream's
  // default: 8). Testing: 0 makes every such walk pass over in bulk.
  void set_draws_before_jump(size_t per_run) { draws_before_jump_ = per_run; }

  // True if the last Plan() ran the whole-queue planner (a fallback, see
  // above), was asked for kWhole, or decided every job: out.decisions
  // covered every queued job.
  bool last_was_whole_queue() const { return last_whole_; }
  // The last incremental plan's decisions end with this many rejections
  // (a dependency failed: REJECT, DEPENDENCY_FAILED, the Problem Plan()
  // gives) of jobs ranked beyond the walk's other decisions, in the order
  // of state().queued; their jobs_ahead counts only the jobs the walk
  // decided before them that are not rejected (Plan()'s may be more). Every
  // other decision of a plan that is not a whole one is ranked before them
  // (kPrefix, kPrefixFree: the ranked prefix stops before them).
  size_t appended_rejections() const { return last_whole_ ? 0 : appended_rejections_; }
  // The decision of every queued job beyond the last plan's decided prefix
  // that is not waiting for a dependency (its `job` field is meaningless):
  // WAITING_FOR_WORKER_SLOT.
  const Decision& tail_decision() const { return tail_; }
  // True if queued job `index` waits for a dependency that is queued or
  // running (and has no dependency problem).
  bool dependency_pending(size_t index) const;

  // Plans made incrementally / by the whole-queue planner, the jobs the
  // incremental ones decided (their decisions), and the jobs they passed
  // over undecided (kAdmissions).
  int64_t incremental_plans() const { return incremental_plans_; }
  int64_t whole_plans() const { return whole_plans_; }
  int64_t decided_jobs() const { return decided_jobs_; }
  int64_t skipped_jobs() const { return skipped_jobs_; }
  // Incremental plans that rejected jobs for a dependency.
  int64_t rejecting_plans() const { return rejecting_plans_; }
  // kPrefixFree walks that stopped because no job they had not drawn could
  // be admitted any more (before AdmitsNone() held and before the queue's
  // end).
  int64_t early_stops() const { return early_stops_; }
  // Times the share index's aged order of a priority was rebuilt alone, once
  // jobs leaving had made it stale (the rest of the index stays fresh).
  int64_t aged_rebuilds() const { return aged_rebuilds_; }

 // Internal: the queue's index (incremental_index.h).
  struct Index;

 private:

  // Indexes the job just added at the end of state_.queued, as Enqueue
  // does, but without its size and duration (Index::memory, cpu, duration),
  // which the caller adds (AddSizes); `bulk`: nor the rechecks of the queued
  // jobs depending on it, which the caller makes (RecheckJoined).
  void AddToIndex(bool bulk = false);
  // The dependants of the jobs queued from state().queued[first] on, and
  // the cycles through those jobs, as AddToIndex checks them one at a time.
  void RecheckJoined(size_t first);
  // Adds the sizes and durations of state().queued[first...].
  void AddSizes(size_t first);
  bool PlanIncrementally(const Budgets& budgets, const Policy& policy,
                         absl::Time now, Detail detail, PlanResult& out);
  // What Prepare() computes apart from the queued jobs' records and the
  // priorities: names, pools' capacities, fair turns, the running jobs' use
  // and expected ends (incremental_prepare.cc).
  void PrepareRunning(const Budgets& budgets, const Policy& policy, absl::Time now,
                      internal::Prepared& p);

  State state_;
  std::unique_ptr<Index> index_;
  std::unique_ptr<internal::Prepared> prepared_;
  std::vector<uint32_t> buffer_;  // the ranking drawn up to the holder
  // A plan's jobs rejected for a dependency (Index::DependencyRejections).
  std::vector<uint8_t> rejected_mark_;
  std::vector<uint32_t> rejected_jobs_;
  size_t appended_rejections_ = 0;
  int64_t rejecting_plans_ = 0;
  Planner planner_;
  Decision tail_;
  bool last_whole_ = true;
  bool whole_queue_only_ = false;
  size_t draws_before_jump_ = SIZE_MAX;  // the stream's default
  int64_t incremental_plans_ = 0;
  int64_t whole_plans_ = 0;
  int64_t decided_jobs_ = 0;
  int64_t skipped_jobs_ = 0;
  int64_t early_stops_ = 0;
  int64_t aged_rebuilds_ = 0;
  // Jobs drawn by "drf" admissions-only walks since the share index was
  // last rebuilt, while it could not be used (when to rebuild it).
  size_t drawn_without_shares_ = 0;
  // kPrefixFree walks: jobs drawn while the fit index was stale since it
  // was last built (when to rebuild it; at first: build it), and which jobs
  // the current walk drew (== drawn_mark_).
  size_t drawn_without_fit_ = SIZE_MAX;
  std::vector<uint32_t> drawn_in_walk_;
  uint32_t drawn_mark_ = 0;
  // Carry(): the result the last incremental plan wrote (nullptr after a
  // whole-queue plan) and the workspace names' generation it holds; and
  // whether every remembered turn's workspace is among the names of that
  // generation (so when `prev` holds them, none is to be forgotten).
  const PlanResult* names_out_ = nullptr;
  uint64_t names_generation_ = 0;
  bool turns_within_ = false;
  uint64_t turns_generation_ = 0;
};

}  // namespace berth::planner

#endif  // BERTH_PLANNER_PLAN_INCREMENTAL_H_
