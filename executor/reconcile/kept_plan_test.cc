// KeptPlan against the store read afresh (BuildPlanSnapshot, what PlanCache
// plans from): after every event of generated sequences written to a real
// MemoryStore — arrivals and withdrawals by snapshot, spec updates, the
// plan's admissions recorded, starts, exits (success, failure, requeue,
// cancel), budgets, pause, pool maintenance, time passing, retention
// compacting jobs and events, restarts — the kept state's whole plan equals
// the fresh one decision by decision (by job id), and its admissions-only
// plan admits exactly the same jobs with the same reservation; so do
// PlanCache's pass (PlanAdmissions) and a reader's plan after it (Get).
// Seeds are printed on failure.
#include "executor/reconcile/kept_plan.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "executor/reconcile/plan_snapshot.h"
#include "executor/reconcile/testing/test_jobs.h"
#include "executor/store/memory_store.h"
#include "gtest/gtest.h"
#include "planner/base/simulated_clock.h"
#include "planner/convert/convert.h"

namespace berth {
namespace {

using Detail = planner::IncrementalPlanner::Detail;
using testing::kGiB;

std::string Describe(const planner::Decision& d, const planner::State& s) {
  return absl::StrCat(s.queued[d.job].id, " verdict=", static_cast<int>(d.verdict),
                      " reason=", static_cast<int>(d.reason), " problem=",
                      static_cast<int>(d.problem), " dim=", static_cast<int>(d.dimension),
                      " reserved=", d.reserved, " ahead=", d.jobs_ahead, " needed=", d.needed,
                      " free=", d.free, " cap=", d.capacity, " fits=", d.fits_memory_bytes, "/",
                      d.fits_cpu_millis);
}

// "" if `got` (planned from `gs`) equals `want` (from `ws`), else the first
// difference. Decisions are compared in rank order by job id: the two
// states hold the queue in different orders.
std::string Compare(const planner::PlanResult& want, const planner::State& ws,
                    const planner::PlanResult& got, const planner::State& gs) {
  if (want.decisions.size() != got.decisions.size())
    return absl::StrCat("decisions ", want.decisions.size(), " vs ", got.decisions.size());
  for (size_t k = 0; k < want.decisions.size(); ++k) {
    const std::string a = Describe(want.decisions[k], ws), b = Describe(got.decisions[k], gs);
    if (a != b) return absl::StrCat("decision ", k, ": want ", a, " got ", b);
  }
  if (want.admitted_count != got.admitted_count) return "admitted_count";
  if (want.reserved_decision != got.reserved_decision) return "reserved_decision";
  if (want.reservation_start != got.reservation_start) return "reservation_start";
  if (!(want.used_before == got.used_before)) return "used_before";
  if (!(want.used_after == got.used_after)) return "used_after";
  if (want.pending_dependencies.size() != got.pending_dependencies.size())
    return "pending_dependencies";
  if (want.free_after.worker_slots != got.free_after.worker_slots ||
      want.free_after.memory_bytes != got.free_after.memory_bytes)
    return "free_after";
  return "";
}

std::vector<std::string> Admitted(const planner::PlanResult& r, const planner::State& s) {
  std::vector<std::string> ids;
  for (const planner::Decision& d : r.decisions) {
    if (d.verdict == planner::Verdict::kAdmit) ids.push_back(s.queued[d.job].id);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

// The jobs a pass fails (rejected because a dependency failed), sorted.
std::vector<std::string> DependencyFailed(const planner::PlanResult& r,
                                          const planner::State& s) {
  std::vector<std::string> ids;
  for (const planner::Decision& d : r.decisions) {
    if (d.verdict == planner::Verdict::kReject && d.reason == planner::Reason::kDependencyFailed)
      ids.push_back(s.queued[d.job].id);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::string ReservedId(const planner::PlanResult& r, const planner::State& s) {
  for (const planner::Decision& d : r.decisions) {
    if (d.reserved) return s.queued[d.job].id;
  }
  return "";
}

class Sequence {
 public:
  explicit Sequence(uint32_t seed) : rng_(seed) {
    RetentionOptions retention;
    // Some sequences trim events and compact finished jobs between plans.
    trims_ = Pick(3) == 0;
    if (trims_) {
      retention.max_events = 40;
      retention.terminal_job_retention = absl::Minutes(20);
    }
    store_ = std::make_unique<MemoryStore>(retention);
    defaults_ = testing::TestBudgets(16, 4);
    (*defaults_.mutable_pools())["gpu"].set_max_workers(1);
    kept_ = std::make_unique<KeptPlan>(*store_, defaults_, policy_);
    cache_ = std::make_unique<PlanCache>(*store_, clock_, defaults_, policy_);
  }

  int Pick(int n) { return static_cast<int>(rng_() % static_cast<uint32_t>(n)); }

  // One event; false if it wrote nothing worth planning for (retried).
  void Event() {
    const absl::Time now = clock_.Now();
    switch (Pick(12)) {
      case 0:
      case 1:
      case 2: {  // arrivals
        for (int i = Pick(4) + 1; i > 0; --i) {
          v1::JobSpec j = testing::TestJob(absl::StrCat("j", next_++), Pick(6) + 1, Pick(3));
          j.set_workspace(absl::StrCat("ws", Pick(3)));
          j.mutable_resources()->set_cpu_millis(250 * (Pick(4) + 1));
          if (Pick(5) == 0) j.set_pool("gpu");
          if (Pick(4) == 0) j.mutable_expected_duration()->set_seconds(0);
          j.mutable_created_at()->set_seconds(absl::ToUnixSeconds(now) - Pick(600));
          if (Pick(4) == 0 && next_ > 2) {
            j.add_depends_on(absl::StrCat("j", Pick(next_ - 1)));
          } else if (Pick(200) == 0) {
            j.add_depends_on("nobody");
          }
          if (Pick(300) == 0) j.mutable_resources()->set_memory_bytes(64 * kGiB);  // never fits
          desired_[j.id()] = j;
        }
        Sync();
        break;
      }
      case 3:  // withdrawals: queued ones cancelled, active ones asked to stop
        if (!desired_.empty()) {
          auto it = desired_.begin();
          std::advance(it, Pick(static_cast<int>(desired_.size())));
          desired_.erase(it);
          Sync();
        }
        break;
      case 4:  // a spec update
        if (!desired_.empty()) {
          auto it = desired_.begin();
          std::advance(it, Pick(static_cast<int>(desired_.size())));
          it->second.set_priority(Pick(4));
          it->second.mutable_resources()->set_memory_bytes((Pick(5) + 1) * kGiB);
          Sync();
        }
        break;
      case 5:  // a start
        Move(v1::JOB_STATE_ADMITTED, v1::JOB_STATE_RUNNING);
        break;
      case 6:
      case 7: {  // an exit
        static constexpr v1::JobState kEnds[] = {v1::JOB_STATE_SUCCEEDED, v1::JOB_STATE_SUCCEEDED,
                                                 v1::JOB_STATE_FAILED, v1::JOB_STATE_QUEUED,
                                                 v1::JOB_STATE_CANCELLED};
        Move(Pick(2) == 0 ? v1::JOB_STATE_RUNNING : v1::JOB_STATE_ADMITTED, kEnds[Pick(5)]);
        break;
      }
      case 8: {  // budgets
        v1::Budgets b = testing::TestBudgets(Pick(24) + 4, Pick(6) + 1);
        if (Pick(2) == 0) (*b.mutable_pools())["gpu"].set_max_workers(Pick(3));
        if (Pick(3) == 0) b.set_workspace_max_workers(Pick(3) + 1);
        ASSERT_TRUE(store_->SetBudgets(b, now).ok());
        break;
      }
      case 9:  // pause / resume, maintenance
        if (Pick(2) == 0) {
          ASSERT_TRUE(store_->SetPaused(Pick(6) == 0, "operator", now).ok());
        } else {
          ASSERT_TRUE(store_->SetPoolMaintenance("gpu", Pick(6) == 0, "disks", now).ok());
        }
        break;
      case 10:  // time passes; retention runs
        clock_.Advance(absl::Minutes(Pick(30) + 1));
        if (trims_) {
          ASSERT_TRUE(store_->Compact(clock_.Now()).ok());
        }
        break;
      case 11:  // berthd restarts: both sides read the store afresh
        if (Pick(4) == 0) {
          kept_ = std::make_unique<KeptPlan>(*store_, defaults_, policy_);
          cache_ = std::make_unique<PlanCache>(*store_, clock_, defaults_, policy_);
          previous_.reset();
          planned_revision_ = 0;
        }
        break;
    }
  }

  // Plans both ways; "" if they agree. Then records the admissions, as the
  // reconcile pass does.
  std::string PlanAndAdmit() {
    const absl::Time now = clock_.Now();
    // As the reconcile pass: nothing to plan at an unchanged revision (time
    // alone admits nothing).
    if (store_->CurrentRevision() == planned_revision_) return "";
    planned_revision_ = store_->CurrentRevision();
    absl::StatusOr<std::shared_ptr<const PlanSnapshot>> fresh =
        BuildPlanSnapshot(*store_, defaults_, policy_, now, previous_.get(), nullptr, &planner_);
    if (!fresh.ok()) return fresh.status().ToString();
    if (absl::Status s = kept_->Sync(now); !s.ok()) return s.ToString();
    if (kept_->revision() != (*fresh)->revision) return "revision";
    const PlanSnapshot& want = **fresh;
    planner::PlanResult whole, admissions;
    kept_->Plan(now, Detail::kWhole, /*carry=*/false, whole);
    if (std::string d = Compare(want.result, want.state, whole, kept_->state()); !d.empty())
      return "whole plan: " + d;
    kept_->Plan(now, Detail::kAdmissions, /*carry=*/true, admissions);
    const std::vector<std::string> ids = Admitted(want.result, want.state);
    if (ids != Admitted(admissions, kept_->state())) return "admissions";
    // Every job the whole plan rejects for a dependency, so that the pass
    // fails them all, whether its plan fell back to the whole queue or not.
    const std::vector<std::string> failed = DependencyFailed(want.result, want.state);
    if (failed != DependencyFailed(admissions, kept_->state())) return "dependency failures";
    failing_ += !failed.empty() && !kept_->planner().last_was_whole_queue();
    if (ReservedId(want.result, want.state) != ReservedId(admissions, kept_->state()))
      return "reservation holder";
    if (want.result.reservation_start != admissions.reservation_start) return "reservation";
    // The reconcile pass's way: PlanCache's admissions from its kept state,
    // then a reader's whole plan of the same revision.
    std::vector<std::string> pass_ids;
    absl::StatusOr<PlanCache::PassPlan> pass = cache_->PlanAdmissions(
        [&](const planner::State& state, const planner::PlanResult& plan) {
          pass_ids = Admitted(plan, state);
        });
    if (!pass.ok()) return pass.status().ToString();
    if (pass->revision != want.revision) return "pass revision";
    if (pass_ids != ids) return "the pass's admissions";
    // Get(): a plan of an earlier time at the same revision is replanned.
    absl::StatusOr<std::shared_ptr<const PlanSnapshot>> read = cache_->Get();
    if (!read.ok()) return read.status().ToString();
    if (std::string d = Compare(want.result, want.state, (*read)->result, (*read)->state);
        !d.empty())
      return "a reader's plan: " + d;
    // What the metrics show, from the pass: the same counts and use.
    const std::optional<PlanCache::Summary> summary = cache_->CurrentSummary();
    if (!summary.has_value() || summary->revision != want.revision) return "summary revision";
    std::map<std::string, int64_t> queued_by_pool;
    for (const planner::QueuedJob& q : want.state.queued) ++queued_by_pool[q.pool];
    if (summary->queued_by_pool != queued_by_pool) return "summary: queued by pool";
    if (summary->queued != static_cast<int64_t>(want.state.queued.size())) return "summary: queued";
    if (!(summary->used_before == want.result.used_before)) return "summary: used";
    if (summary->control.paused() != want.control.paused()) return "summary: paused";
    ++plans_;
    incremental_ += kept_->planner().last_was_whole_queue() ? 0 : 1;
    previous_ = *fresh;
    // Jobs whose dependency failed fail, as the pass fails them.
    for (const planner::Decision& d : want.result.decisions) {
      if (d.verdict != planner::Verdict::kReject ||
          d.reason != planner::Reason::kDependencyFailed)
        continue;
      TransitionRequest t;
      t.job_id = want.state.queued[d.job].id;
      t.expected_state = v1::JOB_STATE_QUEUED;
      t.new_state = v1::JOB_STATE_FAILED;
      t.failure_cause = v1::FAILURE_CAUSE_DEPENDENCY_FAILED;
      if (!store_->Transition(t, now).ok()) return "Transition";
    }
    if (!ids.empty()) {
      std::vector<DecisionRequest> admits;
      for (const std::string& id : ids) {
        DecisionRequest r;
        r.job_id = id;
        r.kind = DecisionKind::kAdmit;
        r.expected_state = v1::JOB_STATE_QUEUED;
        admits.push_back(r);
      }
      if (!store_->RecordDecisions(admits, now).ok()) return "RecordDecisions";
    }
    return "";
  }

  int plans() const { return plans_; }
  int incremental() const { return incremental_; }
  int failing() const { return failing_; }
  const KeptPlan& kept() const { return *kept_; }

 private:
  void Sync() {
    SnapshotRequest req;
    req.generation = ++generation_;
    for (const auto& [id, spec] : desired_) req.jobs.push_back(spec);
    req.options.allow_mass_cancel = true;
    absl::StatusOr<SnapshotResult> r = store_->ApplySnapshot(req, clock_.Now());
    ASSERT_TRUE(r.ok()) << r.status();
  }

  void Move(v1::JobState from, v1::JobState to) {
    std::vector<JobRecord> jobs = store_->JobsInState(from);
    if (jobs.empty()) return;
    TransitionRequest t;
    t.job_id = std::string(jobs[static_cast<size_t>(Pick(static_cast<int>(jobs.size())))]->id());
    t.expected_state = from;
    t.new_state = to;
    if (to == v1::JOB_STATE_FAILED) {
      t.failure_cause = v1::FAILURE_CAUSE_NONZERO_EXIT;
      t.exit_code = 1;
    }
    if (to == v1::JOB_STATE_SUCCEEDED) t.exit_code = 0;
    absl::StatusOr<StoredJob> r = store_->Transition(t, clock_.Now());
    ASSERT_TRUE(r.ok()) << r.status();
  }

  std::mt19937 rng_;
  bool trims_ = false;
  SimulatedClock clock_;
  std::unique_ptr<MemoryStore> store_;
  v1::Budgets defaults_;
  planner::Policy policy_;
  std::unique_ptr<KeptPlan> kept_;
  std::unique_ptr<PlanCache> cache_;
  planner::Planner planner_;
  std::shared_ptr<const PlanSnapshot> previous_;
  std::map<std::string, v1::JobSpec> desired_;
  uint64_t generation_ = 0;
  uint64_t planned_revision_ = 0;
  int next_ = 0;
  int plans_ = 0;
  int incremental_ = 0;
  int failing_ = 0;  // incremental plans failing jobs for a dependency
};

TEST(KeptPlanTest, EqualsTheStoreReadAfreshAfterEveryEvent) {
  const uint32_t base = static_cast<uint32_t>(std::random_device{}());
  int plans = 0, incremental = 0, failing = 0;
  int64_t updated = 0;
  for (uint32_t i = 0; i < 500; ++i) {
    const uint32_t seed = base + i;
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    Sequence s(seed);
    for (int step = 0; step < 60; ++step) {
      s.Event();
      if (::testing::Test::HasFatalFailure()) return;
      const std::string diff = s.PlanAndAdmit();
      ASSERT_EQ(diff, "") << "seed " << seed << " step " << step;
    }
    plans += s.plans();
    incremental += s.incremental();
    failing += s.failing();
    updated += s.kept().jobs_updated();
  }
  // The comparison must have covered plans made from the kept queue's
  // index, and states updated from events rather than read afresh.
  EXPECT_GT(incremental, plans / 8) << plans;
  std::printf("%d plans compared, %d of them incremental (%d failing jobs for a dependency); "
              "%lld jobs updated from events\n",
              plans, incremental, failing, static_cast<long long>(updated));
  EXPECT_GT(updated, 1000);
  // A failed dependency must not send the pass to the whole queue.
  EXPECT_GT(failing, 0);
}

TEST(KeptPlanTest, ReadsAfreshOnlyWhenItMust) {
  MemoryStore store;
  SimulatedClock clock;
  KeptPlan kept(store, testing::TestBudgets(16, 2), planner::Policy());
  SnapshotRequest req;
  req.generation = 1;
  for (int i = 0; i < 5; ++i) req.jobs.push_back(testing::TestJob(absl::StrCat("a", i), 4));
  ASSERT_TRUE(store.ApplySnapshot(req, clock.Now()).ok());
  ASSERT_TRUE(kept.Sync(clock.Now()).ok());
  EXPECT_EQ(kept.full_reads(), 1);
  EXPECT_EQ(kept.state().queued.size(), 5u);
  planner::PlanResult plan;
  kept.Plan(clock.Now(), Detail::kAdmissions, true, plan);
  EXPECT_EQ(Admitted(plan, kept.state()).size(), 2u);

  // One job admitted, one withdrawn: two jobs read, not the queue.
  DecisionRequest admit;
  admit.job_id = "a0";
  admit.expected_state = v1::JOB_STATE_QUEUED;
  ASSERT_TRUE(store.RecordDecisions({admit}, clock.Now()).ok());
  req.generation = 2;
  req.jobs.pop_back();
  ASSERT_TRUE(store.ApplySnapshot(req, clock.Now()).ok());
  ASSERT_TRUE(kept.Sync(clock.Now()).ok());
  EXPECT_EQ(kept.full_reads(), 1);
  EXPECT_EQ(kept.jobs_updated(), 2);
  EXPECT_EQ(kept.state().queued.size(), 3u);
  EXPECT_EQ(kept.state().running.size(), 1u);
  EXPECT_EQ(kept.revision(), store.CurrentRevision());
}

}  // namespace
}  // namespace berth
