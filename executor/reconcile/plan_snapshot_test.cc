// PlanCache: one computation per revision; readers never queue behind one.
#include "executor/reconcile/plan_snapshot.h"

#include <thread>

#include "absl/synchronization/notification.h"
#include "executor/store/memory_store.h"
#include "planner/base/simulated_clock.h"
#include "executor/reconcile/testing/test_jobs.h"
#include "planner/convert/convert.h"
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
  absl::StatusOr<uint64_t> RecordStrayTask(const std::string& job, const std::string& c,
                                           const std::string& m, absl::Time t) override {
    return base_.RecordStrayTask(job, c, m, t);
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
  absl::StatusOr<BackupInfo> Backup(const std::string& dir) override { return base_.Backup(dir); }
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
// The start estimates are computed once per plan, on the first ask, and
// equal the plan's forecast.
TEST(PlanSnapshotTest, EstimatesAreComputedOnceOnDemand) {
  MemoryStore store;
  SimulatedClock clock;
  Sync(store, 1, {testing::TestJob("a", 3, 2), testing::TestJob("b", 3, 1),
                  testing::TestJob("c", 2)}, clock.Now());
  PlanCache cache(store, clock, testing::TestBudgets(4), planner::Policy());
  absl::StatusOr<std::shared_ptr<const PlanSnapshot>> snap = cache.Get();
  ASSERT_TRUE(snap.ok());
  const PlanSnapshot& p = **snap;
  EXPECT_EQ(p.estimates_if_computed(), nullptr);
  const planner::StartEstimateTable& table = p.estimates();
  EXPECT_EQ(p.estimates_if_computed(), &table);
  EXPECT_EQ(&p.estimates(), &table);
  const std::vector<planner::StartEstimate> walk =
      planner::EstimateStarts(p.state, p.planned_budgets, p.policy, p.result);
  ASSERT_EQ(table.size(), walk.size());
  ASSERT_EQ(walk.size(), 3u);
  for (size_t k = 0; k < walk.size(); ++k) {
    EXPECT_EQ(table[k].kind, walk[k].kind);
    EXPECT_EQ(table[k].time, walk[k].time);
  }
  EXPECT_EQ(walk[0].kind, planner::EtaKind::kNow);
  EXPECT_EQ(walk[1].kind, planner::EtaKind::kReserved);
}

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

// One definition of "started": a running job's expected end is
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
  EXPECT_EQ(PlanningStart(StoredRecord(*running), t0 + absl::Seconds(9)), t0);

  absl::StatusOr<std::shared_ptr<const PlanSnapshot>> snap = BuildPlanSnapshot(
      store, testing::TestBudgets(16), planner::Policy(), t0 + absl::Seconds(10));
  ASSERT_TRUE(snap.ok()) << snap.status();
  ASSERT_EQ((*snap)->state.running.size(), 1u);
  EXPECT_EQ((*snap)->state.running[0].started_at, t0);

  StoredJob bare;  // no admission recorded: its start, then now
  EXPECT_EQ(PlanningStart(StoredRecord(bare), t0), t0);
  *bare.job.mutable_started_at() = running->job.started_at();
  EXPECT_EQ(PlanningStart(StoredRecord(bare), t0 + absl::Seconds(30)), t0 + absl::Seconds(2));
}

void ExpectSame(const planner::QueuedJob& a, const planner::QueuedJob& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.workspace, b.workspace);
  EXPECT_EQ(a.pool, b.pool);
  EXPECT_EQ(a.priority, b.priority);
  EXPECT_EQ(a.resources.cpu_millis, b.resources.cpu_millis);
  EXPECT_EQ(a.resources.memory_bytes, b.resources.memory_bytes);
  EXPECT_EQ(a.created_at, b.created_at);
  EXPECT_EQ(a.expected_duration, b.expected_duration);
  EXPECT_EQ(a.depends_on, b.depends_on);
}

// The planner's input is read from the records' decoded fields: it must be
// what the planner's own conversion makes of the whole job, for every field
// and the odd values (no pool, a raise, times out of range, no times).
TEST(PlanSnapshotTest, RecordFieldsGiveThePlannersConversion) {
  std::vector<StoredJob> jobs(6);
  jobs[0].job.mutable_spec()->set_id("plain");
  {
    v1::Job& j = jobs[1].job;
    v1::JobSpec& s = *j.mutable_spec();
    s.set_id("full");
    s.set_workspace("ws-a");
    s.set_pool("gpu");
    s.set_priority(-3);
    s.mutable_resources()->set_cpu_millis(1500);
    s.mutable_resources()->set_memory_bytes(int64_t{3} << 30);
    s.mutable_created_at()->set_seconds(1'700'000'123);
    s.mutable_created_at()->set_nanos(456);
    s.mutable_expected_duration()->set_seconds(90);
    s.mutable_expected_duration()->set_nanos(7);
    s.add_depends_on("x");
    s.add_depends_on("y");
    j.set_state(v1::JOB_STATE_RUNNING);
    j.set_node("node-2");
    j.mutable_admitted_at()->set_seconds(1'700'000'200);
    j.mutable_started_at()->set_seconds(1'700'000'201);
  }
  jobs[2] = jobs[1];
  jobs[2].job.set_raised_memory_bytes(int64_t{8} << 30);  // above the estimate
  jobs[2].job.clear_admitted_at();                         // dated from its start
  jobs[3] = jobs[1];
  jobs[3].job.set_raised_memory_bytes(1);  // below: the estimate stands
  jobs[3].job.mutable_spec()->mutable_created_at()->set_seconds(int64_t{1} << 60);
  jobs[3].job.mutable_spec()->mutable_expected_duration()->set_nanos(-2'000'000'000);
  jobs[4] = jobs[1];
  jobs[4].stop_intent = StopIntent::kRequeue;
  jobs[4].job.mutable_admitted_at()->set_nanos(-1);  // invalid: the epoch
  jobs[5] = jobs[1];
  jobs[5].job.mutable_spec()->clear_created_at();  // dated from when it was queued
  jobs[5].job.mutable_queued_at()->set_seconds(1'700'000'050);

  const absl::Time now = absl::FromUnixSeconds(1'800'000'000);
  for (const StoredJob& job : jobs) {
    SCOPED_TRACE(job.job.spec().id());
    const StoredRecord record(job);
    ExpectSame(QueuedJobOf(record), planner::ToQueuedJob(job.job));
    const planner::RunningJob r = RunningJobOf(record, now);
    const planner::RunningJob want = planner::ToRunningJob(
        job.job, job.job.has_admitted_at()  ? planner::FromProto(job.job.admitted_at())
                 : job.job.has_started_at() ? planner::FromProto(job.job.started_at())
                                            : now);
    EXPECT_EQ(r.id, want.id);
    EXPECT_EQ(r.workspace, want.workspace);
    EXPECT_EQ(r.pool, want.pool);
    EXPECT_EQ(r.resources.cpu_millis, want.resources.cpu_millis);
    EXPECT_EQ(r.resources.memory_bytes, want.resources.memory_bytes);
    EXPECT_EQ(r.started_at, want.started_at);
    EXPECT_EQ(r.expected_duration, want.expected_duration);
    EXPECT_EQ(r.node, job.job.node());
    // And the record decodes back to the job it was made of.
    const StoredJob back = record.Decode();
    EXPECT_EQ(back.job.SerializeAsString(), job.job.SerializeAsString());
    EXPECT_EQ(back.stop_intent, job.stop_intent);
    EXPECT_EQ(record.stop_intent(), job.stop_intent);
    EXPECT_EQ(record.state(), job.job.state());
  }
}

// A restarted berthd's first plan (no previous plan) gives the next turn
// among tied workspaces to the one admitted least recently, as the running
// berthd would have (SeedWorkspaceTurns), not to whichever the hash puts
// first: both histories are tried, so one of them fails without the seed.
TEST(PlanSnapshotTest, AFirstPlanTakesTurnsFromTheStoredAdmissions) {
  for (const bool wa_first : {true, false}) {
    SCOPED_TRACE(wa_first ? "wa admitted longest ago" : "wb admitted longest ago");
    SimulatedClock clock;
    MemoryStore store;
    auto job = [](const std::string& id, const std::string& ws) {
      v1::JobSpec j = testing::TestJob(id, 1);
      j.set_workspace(ws);
      j.mutable_created_at()->set_seconds(1000);
      return j;
    };
    auto run_to_end = [&](const std::string& id) {
      DecisionRequest admit;
      admit.job_id = id;
      admit.kind = DecisionKind::kAdmit;
      admit.expected_state = v1::JOB_STATE_QUEUED;
      admit.reason = "fits";
      ASSERT_TRUE(store.RecordDecisions({admit}, clock.Now()).ok());
      TransitionRequest run;
      run.job_id = id;
      run.expected_state = v1::JOB_STATE_ADMITTED;
      run.new_state = v1::JOB_STATE_RUNNING;
      run.container_id = "c-" + id;
      ASSERT_TRUE(store.Transition(run, clock.Now()).ok());
      clock.Advance(absl::Minutes(1));
      TransitionRequest end;
      end.job_id = id;
      end.expected_state = v1::JOB_STATE_RUNNING;
      end.new_state = v1::JOB_STATE_SUCCEEDED;
      end.exit_code = 0;
      ASSERT_TRUE(store.Transition(end, clock.Now()).ok());
      clock.Advance(absl::Minutes(1));
    };
    Sync(store, 1, {job("a1", "wa"), job("b1", "wb")}, clock.Now());
    run_to_end(wa_first ? "a1" : "b1");
    run_to_end(wa_first ? "b1" : "a1");
    Sync(store, 2, {job("a1", "wa"), job("b1", "wb"), job("a2", "wa"), job("b2", "wb")},
         clock.Now());

    PlanCache restarted(store, clock, testing::TestBudgets(16, /*workers=*/1), planner::Policy());
    absl::StatusOr<std::shared_ptr<const PlanSnapshot>> plan = restarted.Get();
    ASSERT_TRUE(plan.ok()) << plan.status();
    const PlanSnapshot& p = **plan;
    ASSERT_EQ(p.result.decisions.size(), 2u);
    EXPECT_EQ(p.state.queued[p.result.decisions[0].job].id, wa_first ? "a2" : "b2");
    EXPECT_EQ(p.result.decisions[0].verdict, planner::Verdict::kAdmit);
    EXPECT_EQ(p.result.decisions[1].verdict, planner::Verdict::kWait);
  }
}

}  // namespace
}  // namespace berth
