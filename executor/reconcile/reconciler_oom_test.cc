// The requeue-OOM policy through the reconciler, on fakes: off by
// default; on per pool (ReconcilerOptions::requeue_oom_pools) or per
// snapshot (SnapshotRequest::requeue_oom_once); once per job; bounded by the
// budget; recorded as a decision; the raise kept by later syncs, planned
// with and given to the container.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "executor/reconcile/reconciler.h"
#include "executor/reconcile/testing/reconciler_fixture.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

using ::berth::testing::Job;
using ::berth::testing::kGiB;

class ReconcilerOomTest : public ::berth::testing::ReconcilerTest {
 protected:
  ReconcilerOomTest()
      : requeuing_(store_, faulty_, clock_, plans_, [] {
          ReconcilerOptions o;
          o.requeue_oom_pools = {"default"};
          return o;
        }()) {}

  PassStats RequeuingPass() {
    absl::StatusOr<PassStats> stats = requeuing_.RunPass();
    EXPECT_TRUE(stats.ok()) << stats.status();
    return stats.ok() ? *stats : PassStats();
  }

  void SyncWithPolicy(uint64_t generation, std::vector<v1::JobSpec> jobs, bool requeue_oom) {
    SnapshotRequest r;
    r.generation = generation;
    r.jobs = std::move(jobs);
    r.options.allow_mass_cancel = true;
    r.requeue_oom_once = requeue_oom;
    absl::StatusOr<SnapshotResult> applied = store_.ApplySnapshot(r, clock_.Now());
    ASSERT_TRUE(applied.ok()) << applied.status();
  }

  std::vector<Decision> RequeueDecisions(const std::string& id) {
    absl::StatusOr<std::vector<Decision>> all = store_.DecisionsForJob(id);
    EXPECT_TRUE(all.ok()) << all.status();
    std::vector<Decision> out;
    for (const Decision& d : all.value_or(std::vector<Decision>{})) {
      if (d.kind == DecisionKind::kRequeue) out.push_back(d);
    }
    return out;
  }

  Reconciler requeuing_;
};

TEST_F(ReconcilerOomTest, OffByDefaultAnOomKillFails) {
  Sync(1, {Job("a", 4)});
  Pass();
  ASSERT_TRUE(runtime_.OomKill("a").ok());
  Pass();
  const v1::Job a = Get("a");
  EXPECT_EQ(a.state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(a.failure_cause(), v1::FAILURE_CAUSE_OOM_KILLED);
  EXPECT_EQ(a.raised_memory_bytes(), 0);
  EXPECT_TRUE(RequeueDecisions("a").empty());
}

TEST_F(ReconcilerOomTest, PoolPolicyRequeuesOnceWithTwiceTheMemory) {
  Sync(1, {Job("a", 4)});
  RequeuingPass();
  ASSERT_EQ(Get("a").state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(runtime_.last_spec("a").memory_bytes, 4 * kGiB);
  ASSERT_TRUE(runtime_.OomKill("a").ok());
  RequeuingPass();  // finalised QUEUED with 8 GiB, planned and started again
  v1::Job a = Get("a");
  EXPECT_EQ(a.raised_memory_bytes(), 8 * kGiB);
  EXPECT_EQ(a.spec().resources().memory_bytes(), 4 * kGiB) << "the spec is the job-server's";
  EXPECT_EQ(a.requeue_count(), 1);
  ASSERT_EQ(a.attempts_size(), 1);
  EXPECT_EQ(a.attempts(0).requeue_cause(), v1::REQUEUE_CAUSE_OOM_RETRY);
  EXPECT_EQ(a.attempts(0).outcome(), v1::JOB_STATE_QUEUED);
  std::vector<Decision> requeues = RequeueDecisions("a");
  ASSERT_EQ(requeues.size(), 1u);
  EXPECT_EQ(requeues[0].requeue_cause, v1::REQUEUE_CAUSE_OOM_RETRY);
  EXPECT_TRUE(absl::StrContains(requeues[0].reason,
                                "OOM-killed at its 4 GiB limit: requeued once with 8 GiB"))
      << requeues[0].reason;
  EXPECT_NE(requeues[0].revision, 0u);
  if (a.state() != v1::JOB_STATE_RUNNING) RequeuingPass();
  a = Get("a");
  ASSERT_EQ(a.state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(runtime_.last_spec("a").memory_bytes, 8 * kGiB) << "the container runs at the raise";
  absl::StatusOr<std::vector<Decision>> all = store_.DecisionsForJob("a");
  ASSERT_TRUE(all.ok() && !all->empty());
  EXPECT_EQ(all->back().kind, DecisionKind::kAdmit);
  EXPECT_TRUE(absl::StrContains(all->back().reason, "8 GiB memory (raised after an OOM kill)"))
      << all->back().reason;

  // Only once: a second kill fails it, saying why.
  ASSERT_TRUE(runtime_.OomKill("a").ok());
  RequeuingPass();
  a = Get("a");
  EXPECT_EQ(a.state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(a.failure_cause(), v1::FAILURE_CAUSE_OOM_KILLED);
  EXPECT_TRUE(absl::StrContains(a.message(), "reservation of 8 GiB; not requeued: it was "
                                             "already requeued once"))
      << a.message();
  EXPECT_EQ(RequeueDecisions("a").size(), 1u);
}

TEST_F(ReconcilerOomTest, AJobBeingCancelledIsNotRequeued) {
  Sync(1, {Job("a", 4)});
  RequeuingPass();
  ASSERT_EQ(Get("a").state(), v1::JOB_STATE_RUNNING);
  Sync(2, {});  // withdrawn: a stop is requested
  ASSERT_TRUE(runtime_.OomKill("a").ok());  // and it is killed before the stop
  RequeuingPass();
  const v1::Job a = Get("a");
  EXPECT_EQ(a.state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(a.raised_memory_bytes(), 0);
  EXPECT_TRUE(RequeueDecisions("a").empty());
}

TEST_F(ReconcilerOomTest, PoolPolicyCoversOnlyItsPools) {
  v1::JobSpec db = Job("db", 4);
  db.set_pool("database");
  v1::Budgets b = ::berth::testing::Budgets(16);
  (*b.mutable_pools())["database"].set_max_workers(2);
  ASSERT_TRUE(store_.SetBudgets(b, clock_.Now()).ok());
  Sync(1, {db});
  RequeuingPass();
  ASSERT_EQ(Get("db").state(), v1::JOB_STATE_RUNNING);
  ASSERT_TRUE(runtime_.OomKill("db").ok());
  RequeuingPass();
  EXPECT_EQ(Get("db").state(), v1::JOB_STATE_FAILED);
}

TEST_F(ReconcilerOomTest, SnapshotPolicyHoldsUntilTheNextSnapshot) {
  SyncWithPolicy(1, {Job("a", 4), Job("b", 4)}, /*requeue_oom=*/true);
  EXPECT_TRUE(store_.LastSnapshotPolicy().requeue_oom_once);
  Pass();  // the plain reconciler: no pool policy
  ASSERT_TRUE(runtime_.OomKill("a").ok());
  Pass();
  EXPECT_EQ(Get("a").raised_memory_bytes(), 8 * kGiB);
  EXPECT_NE(Get("a").state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(RequeueDecisions("a").size(), 1u);
  // The next snapshot does not ask: b's kill fails it.
  SyncWithPolicy(2, {Job("a", 4), Job("b", 4)}, /*requeue_oom=*/false);
  EXPECT_FALSE(store_.LastSnapshotPolicy().requeue_oom_once);
  ASSERT_TRUE(runtime_.OomKill("b").ok());
  Pass();
  EXPECT_EQ(Get("b").state(), v1::JOB_STATE_FAILED);
}

TEST_F(ReconcilerOomTest, BoundedByTheBudgetAndFailsAtIt) {
  Sync(1, {Job("a", 12), Job("full", 16)});
  RequeuingPass();
  ASSERT_EQ(Get("a").state(), v1::JOB_STATE_RUNNING);
  ASSERT_TRUE(runtime_.OomKill("a").ok());
  RequeuingPass();
  EXPECT_EQ(Get("a").raised_memory_bytes(), 16 * kGiB) << "never beyond the 16 GiB budget";
  ASSERT_EQ(RequeueDecisions("a").size(), 1u);
  EXPECT_TRUE(absl::StrContains(RequeueDecisions("a")[0].reason,
                                "capped at the memory budget, 16 GiB"));
  // A job already at the budget cannot be raised: it fails as before.
  for (int i = 0; i < 5 && Get("full").state() != v1::JOB_STATE_RUNNING; ++i) {
    if (Get("a").state() == v1::JOB_STATE_RUNNING) {
      ASSERT_TRUE(runtime_.Exit("a", 0).ok());
    }
    RequeuingPass();
  }
  ASSERT_EQ(Get("full").state(), v1::JOB_STATE_RUNNING);
  ASSERT_TRUE(runtime_.OomKill("full").ok());
  RequeuingPass();
  const v1::Job full = Get("full");
  EXPECT_EQ(full.state(), v1::JOB_STATE_FAILED);
  EXPECT_TRUE(absl::StrContains(full.message(), "not requeued: its limit of 16 GiB cannot be "
                                                "raised: it is already the memory budget"))
      << full.message();
}

TEST_F(ReconcilerOomTest, TheRaiseSurvivesSyncsAndIsPlannedWith) {
  Sync(1, {Job("a", 4)});
  RequeuingPass();
  // Admission paused: the requeued job stays queued while syncs change it.
  ASSERT_TRUE(runtime_.OomKill("a").ok());
  ASSERT_TRUE(store_.SetPaused(true, "test", clock_.Now()).ok());
  RequeuingPass();
  ASSERT_EQ(Get("a").state(), v1::JOB_STATE_QUEUED);
  ASSERT_EQ(Get("a").raised_memory_bytes(), 8 * kGiB);
  // The job-server re-sends the unchanged spec, then a changed one.
  Sync(2, {Job("a", 4)});
  EXPECT_EQ(Get("a").raised_memory_bytes(), 8 * kGiB);
  v1::JobSpec changed = Job("a", 4, /*priority=*/3);
  changed.mutable_resources()->set_memory_bytes(6 * kGiB);
  Sync(3, {changed});
  EXPECT_EQ(Get("a").raised_memory_bytes(), 8 * kGiB) << "effective: max(6 GiB, 8 GiB)";
  EXPECT_EQ(Get("a").spec().resources().memory_bytes(), 6 * kGiB);
  ASSERT_TRUE(store_.SetPaused(false, "", clock_.Now()).ok());
  // The planner counts the raise: with a (8 GiB) and b (9 GiB) only one of
  // them fits the 16 GiB budget; at a's 6 GiB estimate both would.
  Sync(4, {changed, Job("b", 9)});
  RequeuingPass();
  int running = 0;
  for (const char* id : {"a", "b"}) {
    const v1::JobState s = Get(id).state();
    running += s == v1::JOB_STATE_RUNNING || s == v1::JOB_STATE_ADMITTED;
  }
  EXPECT_EQ(running, 1);
  if (Get("a").state() == v1::JOB_STATE_RUNNING) {
    EXPECT_EQ(runtime_.last_spec("a").memory_bytes, 8 * kGiB);
  }
}

}  // namespace
}  // namespace berth
