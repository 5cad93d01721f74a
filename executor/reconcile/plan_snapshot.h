// PlanSnapshot: the planner's view of the store at one revision, and the plan
// computed from it. PlanCache keeps the latest one for readers (GetPlan,
// ExplainJob) so that concurrent reads share one computation.
//
// Thread-safety: a PlanSnapshot is immutable once built (share it through
// std::shared_ptr<const PlanSnapshot>). PlanCache is thread-safe.
#ifndef BERTH_EXECUTOR_RECONCILE_PLAN_SNAPSHOT_H_
#define BERTH_EXECUTOR_RECONCILE_PLAN_SNAPSHOT_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "berth/v1/budgets.pb.h"
#include "berth/v1/executor.pb.h"
#include "berth/v1/job.pb.h"
#include "planner/base/clock.h"
#include "executor/reconcile/eta_ranges.h"
#include "executor/reconcile/node_budgets.h"
#include "executor/reconcile/node_use.h"
#include "executor/reconcile/queue_head.h"
#include "executor/store/store.h"
#include "planner/forecast/eta.h"
#include "planner/model/model.h"
#include "planner/plan/plan.h"
#include "planner/ranking/policy.h"

namespace berth {

struct PlanSnapshot {
  PlanSnapshot() = default;
  // `position` views strings of `state`: a copy would view the original's.
  PlanSnapshot(const PlanSnapshot&) = delete;
  PlanSnapshot& operator=(const PlanSnapshot&) = delete;

  // Store revision up to which the plan reflects every change: the one the
  // state was read at, raised by PlanCache::CarryForward over writes that
  // changed nothing a plan reads (only ever raised; atomic for that).
  mutable std::atomic<uint64_t> revision{0};
  // NodeBudgets::version() the budgets' nodes were taken at (0: none).
  uint64_t nodes_version = 0;
  absl::Time now;
  v1::Budgets budgets;
  v1::ControlState control;
  // queued_jobs[i] is the store's record of state.queued[i] (shared, not
  // copied: see JobRecord).
  std::vector<JobRecord> queued_jobs;
  planner::State state;
  planner::PlanResult result;
  // What `result` was planned with (planner::FromProto(budgets), nodes
  // included, and the cache's policy): the ETA forecast plans with them.
  planner::Budgets planned_budgets;
  planner::Policy policy;
  // How estimates() forecasts: the executor's start model
  // (planner::ForecastOptions::executor, PlanCache::SetExecutorModel).
  planner::ForecastOptions forecast;
  // Job id (viewing state.queued[].id) -> index into result.decisions (its
  // queue position - 1). Built by the first call, like estimates(): a plan
  // that no reader asks about by id (the reconciler's, most at 1M) never
  // pays for a 1M-entry table. REQUIRES: state and result are final.
  using PositionIndex = absl::flat_hash_map<absl::string_view, uint32_t>;
  const PositionIndex& positions() const;
  // The index into result.decisions of a queued job, or nullopt if `job_id`
  // is not queued.
  std::optional<uint32_t> PositionOf(absl::string_view job_id) const;

  // The decision for a queued job, or nullptr if `job_id` is not queued.
  const planner::Decision* Find(const std::string& job_id) const;

  // Every decision's start estimate (planner::StartEstimateTable: the
  // planner's bounded forward forecast of this state, 16 bytes a decision),
  // created by the first call and kept with the plan, so that ExplainJob,
  // GetPlan and the dashboard share one forecast per plan. The table
  // forecasts as far as its reads need (a read of the first rows makes only
  // the forecast plans that start them). Thread-safe. The reference lives as
  // long as the snapshot.
  // REQUIRES: state, result, planned_budgets and policy are final.
  const planner::StartEstimateTable& estimates() const;
  // The table if a call of estimates() computed it already, else nullptr
  // (never computes it).
  const planner::StartEstimateTable* estimates_if_computed() const;

  // Every decision's ETA range (eta_ranges.h) with the ratios learned from
  // `store`'s usage history, created by the first call and kept with the
  // plan like estimates(): three more forecasts, as far as reads need.
  // Thread-safe; the reference lives as long as the snapshot.
  // REQUIRES: as estimates(), and queued_jobs is final.
  const PlanRanges& ranges(const Store& store) const;

  // The keys the planner's ranking compared for every queued job
  // (planner::RankKeysOf, what ExplainJob's rank arithmetic reads), created
  // by the first call and kept with the plan like estimates(): one O(n log n)
  // ranking per plan, not one per ExplainJob. Thread-safe; the reference
  // lives as long as the snapshot. REQUIRES: as estimates().
  const planner::RankingKeys& rank_keys() const;

 private:
  mutable absl::Mutex positions_mu_;
  mutable std::unique_ptr<const PositionIndex> positions_ ABSL_GUARDED_BY(positions_mu_);
  mutable absl::Mutex estimates_mu_;
  mutable std::unique_ptr<const planner::StartEstimateTable> estimates_
      ABSL_GUARDED_BY(estimates_mu_);
  mutable absl::Mutex ranges_mu_;
  mutable std::unique_ptr<const PlanRanges> ranges_ ABSL_GUARDED_BY(ranges_mu_);
  mutable absl::Mutex rank_keys_mu_;
  mutable std::unique_ptr<const planner::RankingKeys> rank_keys_
      ABSL_GUARDED_BY(rank_keys_mu_);
};

// Adds to state->finished the outcome (from the store) of every dependency
// of a queued job that is neither queued nor in state->running nor already
// in state->finished. Ids the store does not know are left out (the planner
// treats them as unmet). Errors: the store's, other than NOT_FOUND.
[[nodiscard]] absl::Status AddDependencyOutcomes(const Store& store,
                                                 planner::State* state);

// Reads what the planner plans from the store into `state`: every ADMITTED
// and RUNNING job as running (dated by RunningJobOf at `now`), every QUEUED
// job as queued (in the store's order; their records in `queued_records` if
// not null, parallel to state->queued), and the outcomes of their
// dependencies (AddDependencyOutcomes, whose errors it returns). The
// readers' plans (BuildPlanSnapshot) and the pass's kept state (KeptPlan)
// read the same state this one way.
[[nodiscard]] absl::Status ReadPlannerJobs(const Store& store, absl::Time now,
                                           planner::State* state,
                                           std::vector<JobRecord>* queued_records);

// When an ADMITTED or RUNNING job started, for planning (its expected end is
// this + its expected duration): its admission (Job.admitted_at), the
// moment its capacity was taken -- not when Docker got its container
// running (Job.started_at, later by the start latency). The simulator
// (planner/simulator/simulator.h) dates a job the same way, so that berthd and
// berth-plan put the same reservations in the same places (docs/DESIGN.md
// "One definition of started"). Falls back to started_at, then `now`, for
// records without one (StoredRecord::active_since).
absl::Time PlanningStart(const StoredRecord& job, absl::Time now);

// The planner's view of a stored job, from the record's decoded fields (no
// parse), by the same rule as planner::ToQueuedJob / ToRunningJob of the
// whole job (planner::QueuedJobFrom / RunningJobFrom).
planner::QueuedJob QueuedJobOf(const StoredRecord& job);
// `now` dates a job without an admission or start (PlanningStart).
planner::RunningJob RunningJobOf(const StoredRecord& job, absl::Time now);

// Sets state's admission pause and pools in maintenance (with their
// reasons) from the operator's controls, as the store keeps them.
void ApplyControlState(const v1::ControlState& control, planner::State& state);

// The fair turns (planner::State::workspace_turns) a plan without a
// previous one starts from — a restarted berthd's first — so that a restart
// does not hand the next turn to whichever tied workspace the hash puts
// first: each workspace with a queued or active job in `state`, ordered by
// its most recent admission (active_since) among its active and finished
// jobs in the store; never-admitted workspaces get no entry (they go first,
// as in planner::CarryReservation). Reads every active and finished job
// once.
void SeedWorkspaceTurns(const Store& store, planner::State& state);

// The planner's memory (reservation holder and its promise, fair turns,
// aging's top priority: planner::PlannerMemory) around the reconcile pass's
// last plan (PlanCache::PlanAdmissions): before it, for a plan of the same
// revision, and after it (carried), for a plan of a later one.
struct PassMemory {
  uint64_t revision = 0;
  planner::PlannerMemory before;
  planner::PlannerMemory after;
};

class KeptPlan;

// Reads the store and plans. `default_budgets` apply when the store has none.
// `previous` (may be null): the last plan; its reservation holder keeps its
// reservation until it starts (planner::CarryReservation); without one the
// fair turns are seeded from the store (SeedWorkspaceTurns). `planner` (may
// be null): a Planner whose buffers the plan reuses (PlanCache keeps one;
// ~30% less time at 1M than a one-off planner::Plan). `pass` (may be null):
// the memory of the reconcile pass's plans, which then replaces `previous`'s
// (the plan shows what the pass would decide). Errors: the store's.
[[nodiscard]] absl::StatusOr<std::shared_ptr<const PlanSnapshot>>
BuildPlanSnapshot(const Store& store, const v1::Budgets& default_budgets,
                  const planner::Policy& policy, absl::Time now,
                  const PlanSnapshot* previous = nullptr,
                  const NodeBudgets* nodes = nullptr, planner::Planner* planner = nullptr,
                  const planner::ExecutorModel& executor = {},
                  const PassMemory* pass = nullptr);

class PlanCache {
 public:
  // The cache plans with `policy`; store, clock must outlive it.
  PlanCache(const Store& store, Clock& clock, v1::Budgets default_budgets,
            planner::Policy policy, absl::Duration max_age = absl::Seconds(5));
  ~PlanCache();

  // For the reconcile pass: plans the admissions at the store's current
  // revision from the planner state the cache keeps across passes
  // (KeptPlan: updated from the store's events since the last pass, read
  // whole only the first time and when the event log cannot be trusted),
  // and calls `visit` with that state and the plan
  // (planner::IncrementalPlanner::Detail::kAdmissions: every admission,
  // the reservation and, when the plan is a whole-queue one, every
  // rejection; other waiting jobs may be left out). The plan is the one the
  // next pass carries its reservation holder and fair turns from, and
  // readers' plans (Get, Refresh) plan with that memory, so that they show
  // what the pass decides. Costs about the jobs the events named and the
  // plan decides, not the queue; the whole plan is built only when a
  // reader asks. Serialised with other calls of it, never with readers.
  // Errors: the store's (the next call reads the store afresh).
  struct PassPlan {
    uint64_t revision = 0;       // the store revision planned
    uint64_t nodes_version = 0;  // NodeBudgets::version() planned with
  };
  using PassVisitor =
      std::function<void(const planner::State& state, const planner::PlanResult& plan)>;
  [[nodiscard]] absl::StatusOr<PassPlan> PlanAdmissions(const PassVisitor& visit);

  // The plan for the store's current revision: the cached one if no event
  // was written since and it is younger than max_age (ETAs move with time),
  // else a new one. While another caller is computing, callers get the
  // latest plan at once instead of waiting (reads never queue behind a
  // replan of a large queue; PlanSnapshot::revision tells its age); only
  // when there is no plan yet do they wait for that computation.
  [[nodiscard]] absl::StatusOr<std::shared_ptr<const PlanSnapshot>> Get();

  // For the reconciler: a plan at the store's current revision, computed
  // now unless the cached one is already at it (waits for a computation in
  // progress, then reuses it if it qualifies). Readers calling Get() in the
  // meantime get the previous plan instead of computing the same one again.
  [[nodiscard]] absl::StatusOr<std::shared_ptr<const PlanSnapshot>> Refresh();

  // The latest snapshot without recomputing (may be stale or null); for
  // metrics scrapes, which must not trigger planning.
  std::shared_ptr<const PlanSnapshot> Latest() const;

  // The executor's start model the ETA forecast of later plans uses
  // (planner::ForecastOptions::executor; default: none, the planner alone).
  // Thread-safe.
  void SetExecutorModel(const planner::ExecutorModel& model);


  // Tells the cache that the store's writes after `from_revision` up to and
  // including `to_revision` changed nothing a plan reads (no job record,
  // budgets, control state; e.g. a sync whose only write was its
  // SNAPSHOT_APPLIED event: SnapshotResult::job_writes == 0). If the latest
  // plan is at `from_revision`, its revision is raised to `to_revision`, so
  // Get() and Refresh() keep it instead of replanning (Get() still replans
  // once it is older than max_age). Otherwise nothing happens. The caller
  // vouches for the claim: a wrong one leaves a stale plan in use.
  void CarryForward(uint64_t from_revision, uint64_t to_revision);

  // How long the head of the queue has been blocked, by every plan computed
  // since, the passes' included (QueueHeadWatch::BlockedFor at the clock's
  // now).
  absl::Duration HeadBlockedFor() const { return head_watch_.BlockedFor(clock_.Now()); }

  // How many plans Get() computed (for tests and metrics).
  int64_t computations() const;

  const planner::Policy& policy() const { return policy_; }
  const v1::Budgets& default_budgets() const { return default_budgets_; }

  // Multi-node runtimes: plans take their nodes from `nodes` (which must
  // outlive the cache), and a plan is stale once its version changes. Call
  // before the first Get()/Refresh().
  void set_node_budgets(const NodeBudgets* nodes) { nodes_ = nodes; }
  // Applies the node budgets to `budgets` as plans do (no-op without);
  // `operator_set`: the budgets are the store's (an operator's SetBudgets),
  // not the defaults (NodeBudgets::ApplyTo).
  void ApplyNodes(v1::Budgets& budgets, bool operator_set) const {
    if (nodes_ != nullptr) nodes_->ApplyTo(budgets, operator_set);
  }
  // Each node of `budgets` (with ApplyNodes' nodes) with what `snap`'s
  // running jobs hold there and what the runtime last reported there
  // (node_use.h). Empty without nodes.
  std::vector<v1::NodeUse> NodeUsesOf(const v1::Budgets& budgets,
                                      const PlanSnapshot& snap) const {
    return NodeUses(budgets, snap.state,
                    nodes_ != nullptr ? nodes_->live_jobs() : std::nullopt);
  }
  // What the metrics and the usage sampler show of the plans: budgets (nodes
  // applied), control state, what running jobs hold, and jobs per pool —
  // of the newer of the last pass's plan and the latest whole plan (passes
  // plan after every change; whole plans are made when a reader asks).
  // Never plans; nullopt before either. From a pass: O(pools); from a
  // whole plan: O(queue).
  struct Summary {
    uint64_t revision = 0;
    v1::Budgets budgets;
    v1::ControlState control;
    planner::Usage used_before;
    std::map<std::string, int64_t> queued_by_pool, running_by_pool;
    int64_t queued = 0;
  };
  std::optional<Summary> CurrentSummary() const;

  // The same as of now, never planning: with the running jobs of the newer
  // of the last pass's plan (made after every change) and the latest whole
  // plan (made when a reader asks); none before either.
  std::vector<v1::NodeUse> NodeUsesNow(const v1::Budgets& budgets) const;

 private:
  const Store& store_;
  Clock& clock_;
  const v1::Budgets default_budgets_;
  const planner::Policy policy_;
  const absl::Duration max_age_;
  const NodeBudgets* nodes_ = nullptr;
  uint64_t NodesVersion() const { return nodes_ == nullptr ? 0 : nodes_->version(); }

  // Plans at the current revision and keeps the result as the latest.
  absl::StatusOr<std::shared_ptr<const PlanSnapshot>> ComputeLocked()
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(compute_mu_);

  // The pass's kept state (PlanAdmissions); never held with compute_mu_.
  absl::Mutex kept_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  std::unique_ptr<KeptPlan> kept_ ABSL_GUARDED_BY(kept_mu_);
  planner::PlanResult pass_result_ ABSL_GUARDED_BY(kept_mu_);
  // Serialises computations (single flight); held while planning.
  absl::Mutex compute_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  // Reused by every computation (its buffers stay sized for the queue).
  planner::Planner planner_ ABSL_GUARDED_BY(compute_mu_);
  mutable absl::Mutex mu_;
  std::shared_ptr<const PlanSnapshot> latest_ ABSL_GUARDED_BY(mu_);
  int64_t computations_ ABSL_GUARDED_BY(mu_) = 0;
  planner::ExecutorModel executor_ ABSL_GUARDED_BY(mu_);
  std::optional<PassMemory> pass_memory_ ABSL_GUARDED_BY(mu_);
  // The last pass's running jobs (only with nodes: NodeUsesNow) and its
  // revision.
  std::shared_ptr<const planner::State> pass_running_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const Summary> pass_summary_ ABSL_GUARDED_BY(mu_);
  uint64_t pass_revision_ ABSL_GUARDED_BY(mu_) = 0;
  // Observes every plan that becomes the latest, and every pass's plan.
  QueueHeadWatch head_watch_;
};

}  // namespace berth

#endif  // BERTH_EXECUTOR_RECONCILE_PLAN_SNAPSHOT_H_
