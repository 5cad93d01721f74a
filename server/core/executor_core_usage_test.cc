// ExecutorCore's learned-estimate features on MemoryStore: RightSize, and
// the opt-in filling of missing memory estimates from the usage history.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "executor/reconcile/reconciler.h"
#include "executor/reconcile/testing/test_jobs.h"
#include "executor/runtime/fake_runtime.h"
#include "executor/store/memory_store.h"
#include "gtest/gtest.h"
#include "planner/base/simulated_clock.h"
#include "server/core/executor_core.h"
#include "server/core/testing/test_core_options.h"
#include "server/ingest/test_snapshot.h"

namespace berth {
namespace {

using testing::kGiB;
constexpr int64_t kMiB = int64_t{1} << 20;

v1::JobSpec Job(const std::string& id, int64_t memory_gib) {
  v1::JobSpec j = testing::TestJob(id, memory_gib);
  j.set_action("extract");
  return j;
}

ReceivedSnapshot Snapshot(uint64_t generation, std::vector<v1::JobSpec> jobs) {
  return testing::TestSnapshot(generation, std::move(jobs), /*allow_mass_cancel=*/true);
}

class ExecutorCoreUsageTest : public ::testing::Test {
 protected:
  ExecutorCoreUsageTest()
      : plans_(store_, clock_, testing::TestBudgets(16), planner::Policy()),
        reconciler_(store_, runtime_, clock_, plans_, ReconcilerOptions()),
        plain_(store_, plans_, clock_, reconciler_.admission_mutex(), Options(false)),
        filling_(store_, plans_, clock_, reconciler_.admission_mutex(), Options(true)) {}

  static ExecutorCoreOptions Options(bool fill) {
    ExecutorCoreOptions o = testing::TestCoreOptions();
    if (fill) o.fill_memory_pools = {"default"};
    return o;
  }

  // `n` runs of ws/extract that asked 4 GiB and peaked at 1 GiB.
  void Learn(int n) {
    std::vector<v1::JobSpec> jobs;
    for (int i = 0; i < n; ++i) jobs.push_back(Job("run-" + std::to_string(i), 4));
    ASSERT_TRUE(plain_.Sync(Snapshot(++generation_, jobs)).ok());
    for (const v1::JobSpec& j : jobs) {
      DecisionRequest d;
      d.job_id = j.id();
      d.kind = DecisionKind::kAdmit;
      d.expected_state = v1::JOB_STATE_QUEUED;
      d.reason = "test";
      ASSERT_TRUE(store_.RecordDecisions({d}, clock_.Now()).ok());
      TransitionRequest t;
      t.job_id = j.id();
      t.expected_state = v1::JOB_STATE_ADMITTED;
      t.new_state = v1::JOB_STATE_RUNNING;
      ASSERT_TRUE(store_.Transition(t, clock_.Now()).ok());
      t.expected_state = v1::JOB_STATE_RUNNING;
      t.new_state = v1::JOB_STATE_SUCCEEDED;
      v1::ResourceUsage u;
      u.set_peak_memory_bytes(kGiB);
      u.set_run_seconds(3600);
      u.set_samples(10);
      t.observed = u;
      ASSERT_TRUE(store_.Transition(t, clock_.Now()).ok());
    }
  }

  SimulatedClock clock_;
  MemoryStore store_;
  FakeRuntime runtime_;
  PlanCache plans_;
  Reconciler reconciler_;
  ExecutorCore plain_;
  ExecutorCore filling_;
  uint64_t generation_ = 0;
};

TEST_F(ExecutorCoreUsageTest, RightSizeReportsTheHistoryAndChecksItsRequest) {
  absl::StatusOr<v1::RightSizeResponse> r = plain_.RightSize({});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->actions_size(), 0);
  Learn(5);
  r = plain_.RightSize({});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->actions_size(), 1);
  EXPECT_EQ(r->actions(0).action(), "extract");
  EXPECT_EQ(r->actions(0).suggested_memory_bytes(), 1280 * kMiB);
  EXPECT_DOUBLE_EQ(r->actions(0).wasted_gib_hours(), 15);  // 5 runs x 3 GiB x 1 h
  v1::RightSizeRequest bad;
  bad.set_limit(-1);
  EXPECT_EQ(plain_.RightSize(bad).status().code(), absl::StatusCode::kInvalidArgument);
  bad = v1::RightSizeRequest();
  bad.set_workspace(std::string(129, 'w'));
  absl::Status s = plain_.RightSize(bad).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "workspace")) << s;
}

TEST_F(ExecutorCoreUsageTest, MissingMemoryIsFilledFromHistoryOnlyWhenAskedAndKnown) {
  Learn(5);
  v1::JobSpec missing = Job("new", 0);
  v1::JobSpec unknown = Job("other", 0);
  unknown.set_action("never-ran");
  // Off by default: rejected as before.
  absl::StatusOr<v1::SyncSnapshotResponse> r =
      plain_.Sync(Snapshot(++generation_, {missing, unknown}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->rejections_size(), 2);
  // On for the default pool: filled from the history; without history still
  // rejected, naming the field.
  missing.set_id("new-2");
  unknown.set_id("other-2");
  r = filling_.Sync(Snapshot(++generation_, {missing, unknown}));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rejections_size(), 1);
  EXPECT_EQ(r->rejections(0).job_id(), "other-2");
  absl::StatusOr<v1::Job> filled = filling_.GetJob("new-2");
  ASSERT_TRUE(filled.ok()) << filled.status();
  EXPECT_EQ(filled->state(), v1::JOB_STATE_QUEUED);
  EXPECT_EQ(filled->spec().resources().memory_bytes(), 1280 * kMiB);
  // A job of another pool is not filled.
  v1::JobSpec db = Job("db", 0);
  db.set_pool("database");
  r = filling_.Sync(Snapshot(++generation_, {missing, db}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->rejections_size(), 1);
}

TEST_F(ExecutorCoreUsageTest, ASnapshotCanAskForTheFillItself) {
  Learn(5);
  // berthd's pools are off (plain_); the snapshot's header switches it on
  // for its jobs.
  v1::JobSpec missing = Job("new", 0);
  ReceivedSnapshot s = Snapshot(++generation_, {missing});
  absl::StatusOr<v1::SyncSnapshotResponse> r = plain_.Sync(std::move(s));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->rejections_size(), 1);
  missing.set_id("new-2");
  s = Snapshot(++generation_, {missing});
  s.fill_memory_from_history = true;
  r = plain_.Sync(std::move(s));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->rejections_size(), 0);
  absl::StatusOr<v1::Job> filled = plain_.GetJob("new-2");
  ASSERT_TRUE(filled.ok()) << filled.status();
  EXPECT_EQ(filled->spec().resources().memory_bytes(), 1280 * kMiB);
}

TEST_F(ExecutorCoreUsageTest, ExplainJobSaysWhenMemoryWasRaisedAfterAnOomKill) {
  ASSERT_TRUE(plain_.Sync(Snapshot(++generation_, {Job("big", 4)})).ok());
  DecisionRequest d;
  d.job_id = "big";
  d.kind = DecisionKind::kAdmit;
  d.expected_state = v1::JOB_STATE_QUEUED;
  d.reason = "test";
  ASSERT_TRUE(store_.RecordDecisions({d}, clock_.Now()).ok());
  TransitionRequest t;
  t.job_id = "big";
  t.expected_state = v1::JOB_STATE_ADMITTED;
  t.new_state = v1::JOB_STATE_QUEUED;
  t.raised_memory_bytes = 8 * kGiB;
  t.requeue_reason = "OOM-killed";
  ASSERT_TRUE(store_.Transition(t, clock_.Now()).ok());
  absl::StatusOr<v1::Explanation> e = plain_.ExplainJob("big");
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_TRUE(absl::StrContains(
      e->summary(), "Its memory reservation was raised to 8 GiB after an OOM kill (it asks 4 GiB)"))
      << e->summary();
  absl::StatusOr<v1::Job> j = plain_.GetJob("big");
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ(j->raised_memory_bytes(), 8 * kGiB);

  // DryRun plans the re-sent job at its raise too: 8 + 9 GiB do not both fit
  // the 16 GiB budget (at its 4 GiB estimate they would).
  absl::StatusOr<v1::DryRunResponse> dry =
      plain_.DryRun(Snapshot(++generation_, {Job("big", 4), Job("other", 9)}));
  ASSERT_TRUE(dry.ok()) << dry.status();
  int admitted = 0;
  for (const v1::PlanDecision& d : dry->plan().decisions()) {
    admitted += d.verdict() == v1::VERDICT_ADMIT;
  }
  EXPECT_EQ(admitted, 1) << dry->plan().DebugString();
}

}  // namespace
}  // namespace berth
