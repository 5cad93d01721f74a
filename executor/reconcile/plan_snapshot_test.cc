// PlanCache: one computation per revision; readers never queue behind one.
#include "executor/reconcile/plan_snapshot.h"

#include <thread>

#include "absl/synchronization/notification.h"
#include "executor/store/memory_store.h"
#include "planner/base/simulated_clock.h"
#include "executor/reconcile/testing/test_jobs.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

// Forwards to a MemoryStore; JobsInState(QUEUED) (what planning reads) can
// be held until the test releases it.
class GatedStore final : public Store {
 public:
  void Arm() { armed_ = true; }
  absl::Notification entered;
  absl::Notification release;

  std::vector<JobRecord> JobsInState(v1::JobState state) const override {
    if (armed_ && state == v1::JOB_STATE_QUEUED) {
      armed_ = false;
      const_cast<GatedStore*>(this)->entered.Notify();
      const_cast<GatedStore*>(this)->release.WaitForNotification();
    }
    return base_.JobsInState(state);
  }
  bool HasJob(const std::string& id) const override { return base_.HasJob(id); }
  absl::StatusOr<SnapshotResult> ApplySnapshot(const SnapshotRequest& r, absl::Time t) override {
    return base_.ApplySnapshot(r, t);
  }
  absl::StatusOr<std::vector<Decision>> RecordDecisions(const std::vector<DecisionRequest>& d,
                                                        absl::Time t) override {
    return base_.RecordDecisions(d, t);
  }
  absl::StatusOr<StoredJob> Transition(const TransitionRequest& r, absl::Time t) override {
    return base_.Transition(r, t);
  }
  absl::StatusOr<uint64_t> RecordOrphanStopped(const std::string& job, const std::string& c,
                                               const std::string& m, absl::Time t) override {
    return base_.RecordOrphanStopped(job, c, m, t);
  }
  absl::StatusOr<uint64_t> SetBudgets(const v1::Budgets& b, absl::Time t) override {
    return base_.SetBudgets(b, t);
  }
  absl::StatusOr<v1::ControlState> SetPaused(bool p, const std::string& r, absl::Time t) override {
    return base_.SetPaused(p, r, t);
  }
  absl::StatusOr<v1::ControlState> SetPoolMaintenance(const std::string& p, bool m,
                                                      const std::string& r,
                                                      absl::Time t) override {
    return base_.SetPoolMaintenance(p, m, r, t);
  }
  absl::StatusOr<v1::Budgets> GetBudgets() const override { return base_.GetBudgets(); }
  v1::ControlState GetControlState() const override { return base_.GetControlState(); }
  uint64_t LastAppliedGeneration() const override { return base_.LastAppliedGeneration(); }
  SnapshotPolicy LastSnapshotPolicy() const override { return base_.LastSnapshotPolicy(); }
  absl::StatusOr<StoredJob> GetJob(const std::string& id) const override {
    return base_.GetJob(id);
  }
  absl::StatusOr<JobPage> ListJobs(const JobFilter& f) const override { return base_.ListJobs(f); }
  absl::StatusOr<EventPage> ReadEvents(uint64_t after, int max) const override {
    return base_.ReadEvents(after, max);
  }
  uint64_t CurrentRevision() const override { return base_.CurrentRevision(); }
  uint64_t OldestRevision() const override { return base_.OldestRevision(); }
  bool AwaitRevision(uint64_t after, absl::Duration timeout) const override {
    return base_.AwaitRevision(after, timeout);
  }
  absl::StatusOr<std::vector<Decision>> DecisionsForJob(const std::string& id) const override {
    return base_.DecisionsForJob(id);
  }
  absl::StatusOr<CompactionStats> Compact(absl::Time t) override { return base_.Compact(t); }
  std::vector<UsageHistory> UsageHistories() const override { return base_.UsageHistories(); }
  absl::StatusOr<UsageHistory> UsageHistoryOf(const std::string& w,
                                              const std::string& a) const override {
    return base_.UsageHistoryOf(w, a);
  }

 private:
  MemoryStore base_;
  mutable std::atomic<bool> armed_{false};
};

void Sync(Store& store, uint64_t generation, std::vector<v1::JobSpec> jobs, absl::Time now) {
  SnapshotRequest r;
  r.generation = generation;
  r.jobs = std::move(jobs);
  ASSERT_TRUE(store.ApplySnapshot(r, now).ok());
}

TEST(PlanCacheTest, ReadersGetTheLatestPlanWhileAnotherComputes) {
  SimulatedClock clock;
  GatedStore store;
  PlanCache cache(store, clock, testing::TestBudgets(16), planner::Policy());
  Sync(store, 1, {testing::TestJob("a", 1)}, clock.Now());
  absl::StatusOr<std::shared_ptr<const PlanSnapshot>> first = cache.Get();
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(cache.computations(), 1);

  Sync(store, 2, {testing::TestJob("a", 1), testing::TestJob("b", 1)}, clock.Now());
  store.Arm();
  std::shared_ptr<const PlanSnapshot> computed;
  std::thread planner([&] { computed = *cache.Get(); });
  store.entered.WaitForNotification();  // the planner holds the computation

  // A reader now gets the previous plan at once instead of waiting.
  absl::StatusOr<std::shared_ptr<const PlanSnapshot>> during = cache.Get();
  ASSERT_TRUE(during.ok());
  EXPECT_EQ(during->get(), first->get());
  EXPECT_LT((*during)->revision, store.CurrentRevision());

  store.release.Notify();
  planner.join();
  EXPECT_EQ(computed->revision, store.CurrentRevision());
  EXPECT_NE(computed->Find("b"), nullptr);
  // Afterwards readers get the new plan without recomputing.
  EXPECT_EQ(cache.Get()->get(), computed.get());
  EXPECT_EQ(cache.computations(), 2);
}

// The job holding the reservation keeps it in the next plan, even when a job
// of the same priority that would rank ahead of it (an older one, in another
// workspace) arrives meanwhile (planner::CarryReservation through PlanCache).
TEST(PlanCacheTest, ReservationHolderKeepsItAcrossPlans) {
  SimulatedClock clock;
  MemoryStore store;
  PlanCache cache(store, clock, testing::TestBudgets(16), planner::Policy());
  auto job = [](const std::string& id, const std::string& ws, int64_t gib, int64_t created) {
    v1::JobSpec j = testing::TestJob(id, gib);
    j.set_workspace(ws);
    j.mutable_created_at()->set_seconds(created);
    return j;
  };
  const absl::Time now = clock.Now();
  Sync(store, 1, {job("running", "wa", 10, 100)}, now);
  DecisionRequest admit;
  admit.job_id = "running";
  admit.kind = DecisionKind::kAdmit;
  admit.expected_state = v1::JOB_STATE_QUEUED;
  admit.reason = "fits";
  ASSERT_TRUE(store.RecordDecisions({admit}, now).ok());
  TransitionRequest run;
  run.job_id = "running";
  run.expected_state = v1::JOB_STATE_ADMITTED;
  run.new_state = v1::JOB_STATE_RUNNING;
  run.container_id = "c-running";
  ASSERT_TRUE(store.Transition(run, now).ok());

  auto holder = [](const PlanSnapshot& snap) -> std::string {
    for (const planner::Decision& d : snap.result.decisions) {
      if (d.reserved) return std::string(snap.state.queued[d.job].id);
    }
    return "";
  };
  Sync(store, 2, {job("running", "wa", 10, 100), job("big", "wb", 12, 300)}, now);
  absl::StatusOr<std::shared_ptr<const PlanSnapshot>> first = cache.Get();
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(holder(**first), "big");

  // "older" would rank first on its own: same priority, equal (zero) share,
  // created earlier.
  Sync(store, 3,
       {job("running", "wa", 10, 100), job("big", "wb", 12, 300), job("older", "wc", 12, 200)},
       now);
  absl::StatusOr<std::shared_ptr<const PlanSnapshot>> second = cache.Get();
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(holder(**second), "big");

  // Planned afresh, without the previous plan, "older" would take it.
  absl::StatusOr<std::shared_ptr<const PlanSnapshot>> fresh =
      BuildPlanSnapshot(store, testing::TestBudgets(16), planner::Policy(), now);
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  EXPECT_EQ(holder(**fresh), "older");
}

// One definition of "started" (issue 15): a running job's expected end is
// dated from its admission, as in the simulator, not from when Docker got
// its container running.
TEST(PlanSnapshotTest, ARunningJobIsDatedFromItsAdmission) {
  MemoryStore store;
  const absl::Time t0 = absl::FromUnixSeconds(1'700'000'000);
  v1::JobSpec spec = testing::TestJob("j", 1);
  spec.mutable_expected_duration()->set_seconds(60);
  Sync(store, 1, {spec}, t0);
  DecisionRequest admit;
  admit.job_id = "j";
  admit.kind = DecisionKind::kAdmit;
  admit.expected_state = v1::JOB_STATE_QUEUED;
  admit.reason = "fits";
  ASSERT_TRUE(store.RecordDecisions({admit}, t0).ok());
  TransitionRequest run;
  run.job_id = "j";
  run.expected_state = v1::JOB_STATE_ADMITTED;
  run.new_state = v1::JOB_STATE_RUNNING;
  run.container_id = "c";
  absl::StatusOr<StoredJob> running = store.Transition(run, t0 + absl::Seconds(2));
  ASSERT_TRUE(running.ok()) << running.status();
  EXPECT_EQ(PlanningStart(running->job, t0 + absl::Seconds(9)), t0);

  absl::StatusOr<std::shared_ptr<const PlanSnapshot>> snap = BuildPlanSnapshot(
      store, testing::TestBudgets(16), planner::Policy(), t0 + absl::Seconds(10));
  ASSERT_TRUE(snap.ok()) << snap.status();
  ASSERT_EQ((*snap)->state.running.size(), 1u);
  EXPECT_EQ((*snap)->state.running[0].started_at, t0);

  v1::Job bare;  // no admission recorded: its start, then now
  EXPECT_EQ(PlanningStart(bare, t0), t0);
  *bare.mutable_started_at() = running->job.started_at();
  EXPECT_EQ(PlanningStart(bare, t0 + absl::Seconds(30)), t0 + absl::Seconds(2));
}

}  // namespace
}  // namespace berth
