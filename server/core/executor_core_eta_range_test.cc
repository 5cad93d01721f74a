// ExecutorCore's ETA ranges on MemoryStore: learned from the usage history
// (real run time over the duration estimate), shown in GetPlan and
// ExplainJob, and absent — saying why — without history.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "executor/reconcile/reconciler.h"
#include "executor/reconcile/testing/test_jobs.h"
#include "executor/runtime/fake_runtime.h"
#include "executor/store/memory_store.h"
#include "gtest/gtest.h"
#include "planner/base/simulated_clock.h"
#include "planner/convert/convert.h"
#include "server/core/executor_core.h"
#include "server/core/testing/test_core_options.h"
#include "server/ingest/test_snapshot.h"

namespace berth {
namespace {

v1::JobSpec Job(const std::string& id, int64_t memory_gib, const std::string& workspace,
                int priority = 0) {
  v1::JobSpec j = testing::TestJob(id, memory_gib, priority);  // 600 s estimate
  j.set_workspace(workspace);
  j.set_action("extract");
  return j;
}

ReceivedSnapshot Snapshot(uint64_t generation, std::vector<v1::JobSpec> jobs) {
  return testing::TestSnapshot(generation, std::move(jobs), /*allow_mass_cancel=*/true);
}

class ExecutorCoreEtaRangeTest : public ::testing::Test {
 protected:
  ExecutorCoreEtaRangeTest()
      : plans_(store_, clock_, testing::TestBudgets(16), planner::Policy(), absl::ZeroDuration()),
        reconciler_(store_, runtime_, clock_, plans_, ReconcilerOptions()),
        core_(store_, plans_, clock_, reconciler_.admission_mutex(), Options()) {}

  static ExecutorCoreOptions Options() {
    ExecutorCoreOptions o = testing::TestCoreOptions();
    return o;
  }

  // Finished runs of ws/extract (estimate 600 s) that ran `seconds` each.
  void Learn(const std::vector<int>& seconds) {
    std::vector<v1::JobSpec> jobs;
    for (size_t i = 0; i < seconds.size(); ++i) {
      jobs.push_back(Job("run-" + std::to_string(i), 1, "ws"));
    }
    ASSERT_TRUE(core_.Sync(Snapshot(++generation_, jobs)).ok());
    for (size_t i = 0; i < jobs.size(); ++i) {
      DecisionRequest d;
      d.job_id = jobs[i].id();
      d.kind = DecisionKind::kAdmit;
      d.expected_state = v1::JOB_STATE_QUEUED;
      d.reason = "test";
      ASSERT_TRUE(store_.RecordDecisions({d}, clock_.Now()).ok());
      TransitionRequest t;
      t.job_id = jobs[i].id();
      t.expected_state = v1::JOB_STATE_ADMITTED;
      t.new_state = v1::JOB_STATE_RUNNING;
      ASSERT_TRUE(store_.Transition(t, clock_.Now()).ok());
      t.expected_state = v1::JOB_STATE_RUNNING;
      t.new_state = v1::JOB_STATE_SUCCEEDED;
      v1::ResourceUsage u;
      u.set_peak_memory_bytes(testing::kGiB / 2);
      u.set_run_seconds(seconds[i]);
      u.set_samples(10);
      t.observed = u;
      ASSERT_TRUE(store_.Transition(t, clock_.Now()).ok());
    }
  }

  // "a" runs now for its 600 s estimate; "b" (same action) waits for its
  // 12 GiB; "c" (a workspace without history) waits behind b.
  void Queue() {
    ASSERT_TRUE(core_
                    .Sync(Snapshot(++generation_, {Job("a", 12, "ws", 2), Job("b", 12, "ws", 1),
                                                   Job("c", 12, "fresh", 0)}))
                    .ok());
  }

  SimulatedClock clock_;
  MemoryStore store_;
  FakeRuntime runtime_;
  PlanCache plans_;
  Reconciler reconciler_;
  ExecutorCore core_;
  uint64_t generation_ = 0;
};

TEST_F(ExecutorCoreEtaRangeTest, RangeFromTheObservedRatios) {
  // Ratios 0.5 .. 2.5: nearest-rank P10 0.5, median 1, P90 2.
  Learn({300, 400, 500, 550, 600, 650, 700, 800, 1200, 1500});
  Queue();
  const absl::Time now = clock_.Now();
  absl::StatusOr<v1::Explanation> b = core_.ExplainJob("b");
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_TRUE(b->has_eta_range()) << b->summary();
  // b starts when a ends: a's 600 s scaled by each ratio.
  EXPECT_EQ(planner::FromProto(b->eta_range().earliest()), now + absl::Seconds(300));
  EXPECT_EQ(planner::FromProto(b->eta_range().likely()), now + absl::Seconds(600));
  EXPECT_EQ(planner::FromProto(b->eta_range().latest()), now + absl::Seconds(1200));
  EXPECT_EQ(b->eta_range().basis(), "action");
  EXPECT_EQ(b->eta_range().runs(), 10);
  EXPECT_DOUBLE_EQ(b->eta_range().p90_ratio(), 2.0);
  EXPECT_TRUE(absl::StrContains(b->summary(), "Range from 10 runs of its action")) << b->summary();
  EXPECT_TRUE(absl::StrContains(b->summary(), "P90 2.00x")) << b->summary();

  // A workspace with no history: no range, and the text says why.
  absl::StatusOr<v1::Explanation> c = core_.ExplainJob("c");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->has_eta_range());
  EXPECT_TRUE(absl::StrContains(c->summary(), "No ETA range: fewer than 5 finished runs"))
      << c->summary();

  absl::StatusOr<v1::Plan> plan = core_.GetPlan(0);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->decisions_size(), 3);
  for (const v1::PlanDecision& d : plan->decisions()) {
    if (d.job_id() == "b") {
      ASSERT_TRUE(d.has_eta_range());
      EXPECT_EQ(d.eta_range().SerializeAsString(), b->eta_range().SerializeAsString());
    } else if (d.job_id() == "a") {
      ASSERT_TRUE(d.has_eta_range());  // admitted now: a zero-width range
      EXPECT_EQ(planner::FromProto(d.eta_range().latest()), now);
    } else {
      EXPECT_FALSE(d.has_eta_range()) << d.job_id();
    }
  }
}

TEST_F(ExecutorCoreEtaRangeTest, TooLittleHistoryGivesNoRange) {
  Learn({300, 600, 900, 1200});  // 4 runs: fewer than 5
  Queue();
  absl::StatusOr<v1::Explanation> b = core_.ExplainJob("b");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_FALSE(b->has_eta_range());
  EXPECT_TRUE(absl::StrContains(b->summary(), "No ETA range")) << b->summary();
  absl::StatusOr<v1::Plan> plan = core_.GetPlan(0);
  ASSERT_TRUE(plan.ok()) << plan.status();
  for (const v1::PlanDecision& d : plan->decisions()) EXPECT_FALSE(d.has_eta_range());
}

}  // namespace
}  // namespace berth
