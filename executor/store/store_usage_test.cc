// The usage history: runs recorded with their final transition,
// bounded per (workspace, action) and in keys, and kept across a reopen.
#include <string>

#include "executor/store/rocks_store.h"
#include "executor/store/store_contract_test.h"
#include "executor/store/store_test_util.h"
#include "gtest/gtest.h"

namespace berth::testing {
namespace {

v1::ResourceUsage Used(int64_t peak, int samples = 3) {
  v1::ResourceUsage u;
  u.set_peak_memory_bytes(peak);
  u.set_cpu_seconds(2.5);
  u.set_run_seconds(60);
  u.set_samples(samples);
  u.set_peak_exact(true);
  return u;
}

class StoreUsageTest : public StoreTest {
 protected:
  // Runs job `id` (spec `spec`) and ends it in `end` having used `used`.
  void RunAndEnd(const v1::JobSpec& spec, v1::JobState end, v1::ResourceUsage used,
                 v1::FailureCause cause = v1::FAILURE_CAUSE_UNSPECIFIED) {
    Apply(Snapshot(++generation_, {spec}));
    Run(spec.id());
    TransitionRequest t = Tr(spec.id(), v1::JOB_STATE_RUNNING, end);
    t.observed = used;
    if (cause != v1::FAILURE_CAUSE_UNSPECIFIED) t.failure_cause = cause;
    absl::StatusOr<StoredJob> done = store_->Transition(t, T0());
    ASSERT_TRUE(done.ok()) << done.status();
    EXPECT_EQ(done->job.observed().peak_memory_bytes(), used.peak_memory_bytes());
  }
  uint64_t generation_ = 0;
};

TEST_P(StoreUsageTest, FinishedRunsWithSampledMemoryAreKeptPerAction) {
  v1::JobSpec a = Spec("a1", 0, int64_t{4} << 30);  // workspace ws-a, cohort-extraction
  a.mutable_expected_duration()->set_seconds(90);  // the estimate ETA ranges learn from
  RunAndEnd(a, v1::JOB_STATE_SUCCEEDED, Used(100));
  RunAndEnd(Spec("a2"), v1::JOB_STATE_FAILED, Used(200), v1::FAILURE_CAUSE_OOM_KILLED);
  RunAndEnd(Spec("a3"), v1::JOB_STATE_CANCELLED, Used(300));    // partial run: not kept
  RunAndEnd(Spec("a4"), v1::JOB_STATE_SUCCEEDED, Used(400, 0));  // never sampled: not kept
  absl::StatusOr<UsageHistory> h = store_->UsageHistoryOf("ws-a", "cohort-extraction");
  ASSERT_TRUE(h.ok()) << h.status();
  ASSERT_EQ(h->runs.size(), 2u);
  EXPECT_EQ(h->runs[0].peak_memory_bytes, 100);
  EXPECT_EQ(h->runs[0].asked_memory_bytes, int64_t{4} << 30);
  EXPECT_EQ(h->runs[0].run_time, absl::Seconds(60));
  EXPECT_EQ(h->runs[0].asked_duration, absl::Seconds(90));
  EXPECT_EQ(h->runs[0].finished, T0());
  EXPECT_EQ(h->runs[1].state, v1::JOB_STATE_FAILED);
  EXPECT_EQ(h->runs[1].asked_duration, absl::ZeroDuration());  // it had no estimate
  EXPECT_EQ(h->runs[1].failure_cause, v1::FAILURE_CAUSE_OOM_KILLED);
  EXPECT_EQ(store_->UsageHistoryOf("ws-a", "other").status().code(),
            absl::StatusCode::kNotFound);
  // The final event carries the usage too.
  const std::vector<v1::Event> events = AllEvents();
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().observed().peak_memory_bytes(), 400);
}

TEST_P(StoreUsageTest, HistoryIsBoundedPerKeyAndInKeys) {
  RetentionOptions r;
  r.usage.runs_per_key = 3;
  r.usage.max_keys = 2;
  Reset(r);
  for (int i = 0; i < 5; ++i) {
    RunAndEnd(Spec("a" + std::to_string(i)), v1::JOB_STATE_SUCCEEDED, Used(i));
  }
  absl::StatusOr<UsageHistory> h = store_->UsageHistoryOf("ws-a", "cohort-extraction");
  ASSERT_TRUE(h.ok()) << h.status();
  ASSERT_EQ(h->runs.size(), 3u);
  EXPECT_EQ(h->runs.front().peak_memory_bytes, 2);  // the newest three
  EXPECT_EQ(h->runs.back().peak_memory_bytes, 4);
  RunAndEnd(Spec("b1"), v1::JOB_STATE_SUCCEEDED, Used(7));
  RunAndEnd(Spec("c1"), v1::JOB_STATE_SUCCEEDED, Used(8));  // a third key: ws-a goes
  std::vector<UsageHistory> all = store_->UsageHistories();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].workspace, "ws-b");
  EXPECT_EQ(all[1].workspace, "ws-c");
}

TEST_P(StoreUsageTest, OomRequeueRaisesMemoryRecordsTheDecisionAndTheRun) {
  Apply(Snapshot(++generation_, {Spec("a1", 0, int64_t{4} << 30)}));
  Run("a1");
  // Bad requests change nothing.
  TransitionRequest failed = Tr("a1", v1::JOB_STATE_RUNNING, v1::JOB_STATE_FAILED);
  failed.raised_memory_bytes = int64_t{8} << 30;
  failed.requeue_reason = "r";
  EXPECT_EQ(store_->Transition(failed, T0()).status().code(), absl::StatusCode::kInvalidArgument);
  TransitionRequest no_reason = Tr("a1", v1::JOB_STATE_RUNNING, v1::JOB_STATE_QUEUED);
  no_reason.raised_memory_bytes = int64_t{8} << 30;
  EXPECT_EQ(store_->Transition(no_reason, T0()).status().code(),
            absl::StatusCode::kInvalidArgument);
  ASSERT_EQ(store_->GetJob("a1")->job.state(), v1::JOB_STATE_RUNNING);

  TransitionRequest t = Tr("a1", v1::JOB_STATE_RUNNING, v1::JOB_STATE_QUEUED);
  t.raised_memory_bytes = int64_t{8} << 30;
  t.requeue_reason = "OOM-killed at its 4 GiB limit: requeued once with 8 GiB";
  t.observed = Used(int64_t{4} << 30);
  absl::StatusOr<StoredJob> done = store_->Transition(t, T0());
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->job.state(), v1::JOB_STATE_QUEUED);
  EXPECT_EQ(done->job.raised_memory_bytes(), int64_t{8} << 30);
  absl::StatusOr<std::vector<Decision>> log = store_->DecisionsForJob("a1");
  ASSERT_TRUE(log.ok());
  ASSERT_EQ(log->back().kind, DecisionKind::kRequeue);
  EXPECT_EQ(log->back().reason, *t.requeue_reason);
  EXPECT_EQ(log->back().revision, done->job.revision());
  // The killed run is in the history as OOM-killed at the limit it had.
  absl::StatusOr<UsageHistory> h = store_->UsageHistoryOf("ws-a", "cohort-extraction");
  ASSERT_TRUE(h.ok()) << h.status();
  ASSERT_EQ(h->runs.size(), 1u);
  EXPECT_EQ(h->runs[0].failure_cause, v1::FAILURE_CAUSE_OOM_KILLED);
  EXPECT_EQ(h->runs[0].asked_memory_bytes, int64_t{4} << 30);
  // A re-sync of the unchanged or a changed spec keeps the raise.
  Apply(Snapshot(++generation_, {Spec("a1", 0, int64_t{4} << 30)}));
  EXPECT_EQ(store_->GetJob("a1")->job.raised_memory_bytes(), int64_t{8} << 30);
  Apply(Snapshot(++generation_, {Spec("a1", 0, int64_t{6} << 30)}));
  EXPECT_EQ(store_->GetJob("a1")->job.spec().resources().memory_bytes(), int64_t{6} << 30);
  EXPECT_EQ(store_->GetJob("a1")->job.raised_memory_bytes(), int64_t{8} << 30);
  // The next run's history entry is at its effective (raised) limit.
  Run("a1");
  TransitionRequest ok = Tr("a1", v1::JOB_STATE_RUNNING, v1::JOB_STATE_SUCCEEDED);
  ok.observed = Used(int64_t{5} << 30);
  ASSERT_TRUE(store_->Transition(ok, T0()).ok());
  h = store_->UsageHistoryOf("ws-a", "cohort-extraction");
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->runs.back().asked_memory_bytes, int64_t{8} << 30);
}

TEST_P(StoreUsageTest, TheLastSnapshotsPolicyIsKept) {
  EXPECT_FALSE(store_->LastSnapshotPolicy().requeue_oom_once);
  SnapshotRequest r = Snapshot(1, {Spec("a1")});
  r.requeue_oom_once = true;
  Apply(r);
  EXPECT_TRUE(store_->LastSnapshotPolicy().requeue_oom_once);
  Apply(Snapshot(1, {Spec("a1")}));  // a re-send of generation 1 changes nothing
  EXPECT_TRUE(store_->LastSnapshotPolicy().requeue_oom_once);
  Apply(Snapshot(2, {Spec("a1")}));
  EXPECT_FALSE(store_->LastSnapshotPolicy().requeue_oom_once);
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreUsageTest, ::testing::ValuesIn(Backends()),
                         [](const auto& info) { return info.param.name; });

TEST(RocksStoreUsageTest, HistorySurvivesReopen) {
  const std::string dir = TempDir("usage_reopen");
  {
    absl::StatusOr<std::unique_ptr<RocksStore>> s = RocksStore::Open(dir);
    ASSERT_TRUE(s.ok()) << s.status();
    Store& store = **s;
    v1::JobSpec a1 = Spec("a1");
    a1.mutable_expected_duration()->set_seconds(45);
    ASSERT_TRUE(store.ApplySnapshot(Snapshot(1, {a1}), T0()).ok());
    ASSERT_TRUE(store
                    .RecordDecisions({Decide("a1", DecisionKind::kAdmit, v1::JOB_STATE_QUEUED)},
                                     T0())
                    .ok());
    ASSERT_TRUE(store.Transition(Tr("a1", v1::JOB_STATE_ADMITTED, v1::JOB_STATE_RUNNING), T0())
                    .ok());
    TransitionRequest t = Tr("a1", v1::JOB_STATE_RUNNING, v1::JOB_STATE_SUCCEEDED);
    t.observed = Used(12345);
    ASSERT_TRUE(store.Transition(t, T0()).ok());
  }
  absl::StatusOr<std::unique_ptr<RocksStore>> s = RocksStore::Open(dir);
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<UsageHistory> h = (*s)->UsageHistoryOf("ws-a", "cohort-extraction");
  ASSERT_TRUE(h.ok()) << h.status();
  ASSERT_EQ(h->runs.size(), 1u);
  EXPECT_EQ(h->runs[0].peak_memory_bytes, 12345);
  EXPECT_DOUBLE_EQ(h->runs[0].cpu_seconds, 2.5);
  EXPECT_TRUE(h->runs[0].peak_exact);
  EXPECT_EQ(h->runs[0].asked_duration, absl::Seconds(45));
  absl::StatusOr<StoredJob> j = (*s)->GetJob("a1");
  ASSERT_TRUE(j.ok());
  EXPECT_EQ(j->job.observed().peak_memory_bytes(), 12345);
}

TEST(RocksStoreUsageTest, SnapshotPolicySurvivesReopen) {
  const std::string dir = TempDir("policy_reopen");
  {
    absl::StatusOr<std::unique_ptr<RocksStore>> s = RocksStore::Open(dir);
    ASSERT_TRUE(s.ok()) << s.status();
    SnapshotRequest r = Snapshot(1, {Spec("a1")});
    r.requeue_oom_once = true;
    ASSERT_TRUE((*s)->ApplySnapshot(r, T0()).ok());
  }
  absl::StatusOr<std::unique_ptr<RocksStore>> s = RocksStore::Open(dir);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE((*s)->LastSnapshotPolicy().requeue_oom_once);
}

}  // namespace
}  // namespace berth::testing
