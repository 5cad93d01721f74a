// KeptPlan: the planner's view of the store kept across plans and brought
// up to date from what changed since the last one, instead of read afresh.
//
// BuildPlanSnapshot reads every queued and active job into a new
// planner::State for every plan: at 1M queued jobs that read costs more
// than the plan. A KeptPlan holds the state in a planner::IncrementalPlanner
// (planner/plan/incremental.h) and Sync() applies only the store's events
// since the revision it last read: for each job an event names (a state
// change or a spec update) it reads the job's current record and puts it
// where it now belongs (queued, running, or gone; a terminal job's outcome
// is kept while a queued job depends on it); budgets, node budgets and the
// control state (pause, pools in maintenance) are read again every time
// (one record each). A plan then costs about the jobs it decides
// (IncrementalPlanner::Detail), not the queue.
//
// The store stays the source of truth: the first Sync() reads the whole
// state from it (as BuildPlanSnapshot does, fair turns seeded by
// SeedWorkspaceTurns), and so does any Sync() that cannot trust the event
// log — events trimmed away since the last revision (OUT_OF_RANGE), an
// event type it does not know, more changed jobs than the queue holds
// (reading afresh is then cheaper), or a failed read in the middle of an
// update. Plans made here equal BuildPlanSnapshot's at the same revision
// (kept_plan_test checks it after every event of generated sequences): the
// same decisions by job id, the same reservation, the same admissions.
//
// Writes that are not events change nothing a plan reads: a sync that
// changed no job, stop intents (the planner does not read them), retention
// (a compacted dependency is forgotten: its id is checked with HasJob on
// every Sync while a queued job depends on it, as a fresh read would not
// find it).
//
// Not thread-safe: one caller at a time.
#ifndef BERTH_EXECUTOR_RECONCILE_KEPT_PLAN_H_
#define BERTH_EXECUTOR_RECONCILE_KEPT_PLAN_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/time/time.h"
#include "berth/v1/budgets.pb.h"
#include "executor/reconcile/node_budgets.h"
#include "executor/store/store.h"
#include "planner/model/model.h"
#include "planner/plan/incremental.h"
#include "planner/plan/plan.h"
#include "planner/ranking/policy.h"

namespace berth {

class KeptPlan {
 public:
  // `store` (and `nodes`, may be null) must outlive this object.
  // `default_budgets` apply while the store has none.
  KeptPlan(const Store& store, v1::Budgets default_budgets, planner::Policy policy,
           const NodeBudgets* nodes = nullptr);
  ~KeptPlan();
  KeptPlan(const KeptPlan&) = delete;
  KeptPlan& operator=(const KeptPlan&) = delete;

  // Brings the state up to the store's current revision (read first: a
  // later write makes the state stale, never wrongly fresh). `now` dates an
  // active job that has neither an admission nor a start (PlanningStart).
  // Errors: the store's; the next Sync() then reads the state afresh.
  [[nodiscard]] absl::Status Sync(absl::Time now);

  // Plans the state at `now` into `out` (IncrementalPlanner::Plan: with
  // Detail::kAdmissions every admission and the reservation, not every
  // waiting job's reason). With `carry` the plan is the one the next plan
  // carries its reservation holder and fair turns from (as a PlanCache
  // plan carries from the one before it): the plan acted on. REQUIRES: a
  // successful Sync().
  void Plan(absl::Time now, planner::IncrementalPlanner::Detail detail, bool carry,
            planner::PlanResult& out);

  // The kept state (State::queued in no particular order).
  const planner::State& state() const { return planner_->state(); }
  const planner::IncrementalPlanner& planner() const { return *planner_; }
  // The store revision the state reflects every change up to.
  uint64_t revision() const { return revision_; }
  // NodeBudgets::version() of the budgets' nodes (0: none).
  uint64_t nodes_version() const { return nodes_version_; }
  // The budgets plans use (the store's or the defaults, nodes applied).
  const v1::Budgets& budgets() const { return budgets_; }
  const planner::Budgets& planned_budgets() const { return planned_budgets_; }
  const planner::Policy& policy() const { return policy_; }
  // The control state (pause, pools in maintenance) as last read.
  const v1::ControlState& control() const { return control_; }

  // Queued jobs per pool (State::queued's pools), kept with the state.
  const std::map<std::string, int64_t>& queued_by_pool() const { return queued_by_pool_; }

  // Whole reads of the store (the first and every fallback), and jobs
  // updated from events.
  int64_t full_reads() const { return full_reads_; }
  int64_t jobs_updated() const { return jobs_updated_; }

 private:
  absl::Status ReadBudgets();
  absl::Status ReadAll(uint64_t revision, absl::Time now);
  absl::Status Apply(const absl::flat_hash_set<std::string>& touched, absl::Time now);
  void ApplyControls();
  // Running jobs without a date are dated `now` by every plan, as a fresh
  // read dates them.
  void RedateUndated(absl::Time now);
  // Forgets outcomes of dependencies no queued job depends on any more, or
  // that the store no longer holds.
  void PruneFinished();
  absl::Status AddOutcomesOfDependencies(const std::string& id);

  const Store& store_;
  const v1::Budgets default_budgets_;
  const planner::Policy policy_;
  const NodeBudgets* nodes_;

  std::unique_ptr<planner::IncrementalPlanner> planner_;
  bool built_ = false;
  uint64_t revision_ = 0;
  uint64_t nodes_version_ = 0;
  v1::Budgets budgets_;
  planner::Budgets planned_budgets_;
  v1::ControlState control_;
  std::string control_applied_;  // control_ serialized, as last applied
  absl::flat_hash_set<std::string> undated_;
  std::map<std::string, int64_t> queued_by_pool_;
  int64_t full_reads_ = 0;
  int64_t jobs_updated_ = 0;
};

}  // namespace berth

#endif  // BERTH_EXECUTOR_RECONCILE_KEPT_PLAN_H_
