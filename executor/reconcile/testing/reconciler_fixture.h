// The reconciler tests' fixture: a Reconciler over fakes (MemoryStore,
// FakeRuntime behind a FaultyRuntime, SimulatedClock) with a 16 GiB budget.
// Test-only; shared by reconciler_test.cc and reconciler_outage_test.cc.
#ifndef BERTH_EXECUTOR_RECONCILE_TESTING_RECONCILER_FIXTURE_H_
#define BERTH_EXECUTOR_RECONCILE_TESTING_RECONCILER_FIXTURE_H_

#include <string>
#include <utility>
#include <vector>

#include "executor/reconcile/plan_snapshot.h"
#include "executor/reconcile/reconciler.h"
#include "executor/reconcile/testing/test_jobs.h"
#include "executor/runtime/fake_runtime.h"
#include "executor/runtime/faulty_runtime.h"
#include "executor/store/memory_store.h"
#include "gtest/gtest.h"
#include "planner/base/simulated_clock.h"

namespace berth::testing {

inline v1::JobSpec Job(const std::string& id, int64_t memory_gib, int priority = 0) {
  return TestJob(id, memory_gib, priority);
}

inline v1::Budgets Budgets(int64_t memory_gib, int workers = 10) {
  return TestBudgets(memory_gib, workers);
}

class ReconcilerTest : public ::testing::Test {
 protected:
  explicit ReconcilerTest(ReconcilerOptions options = ReconcilerOptions())
      : faulty_(runtime_),
        plans_(store_, clock_, Budgets(16), planner::Policy()),
        reconciler_(store_, faulty_, clock_, plans_, std::move(options)) {}

  void Sync(uint64_t generation, std::vector<v1::JobSpec> jobs) {
    SnapshotRequest r;
    r.generation = generation;
    r.jobs = std::move(jobs);
    r.options.allow_mass_cancel = true;
    absl::StatusOr<SnapshotResult> applied = store_.ApplySnapshot(r, clock_.Now());
    ASSERT_TRUE(applied.ok()) << applied.status();
  }

  PassStats Pass() {
    absl::StatusOr<PassStats> stats = reconciler_.RunPass();
    EXPECT_TRUE(stats.ok()) << stats.status();
    return stats.ok() ? *stats : PassStats();
  }

  // Docker becomes unreachable for a pass, job `id`'s container exits with
  // `code` meanwhile, and Docker answers again for the next pass.
  void ExitDuringOutage(const std::string& id, int code) {
    faulty_.Inject("list", absl::UnavailableError("dockerd stopped"));
    clock_.Advance(absl::Seconds(2));
    EXPECT_FALSE(Pass().runtime_ok);
    runtime_.set_now(clock_.Now());
    ASSERT_TRUE(runtime_.Exit(id, code).ok());
    faulty_.Clear();
    clock_.Advance(absl::Seconds(2));
    Pass();
  }

  v1::Job Get(const std::string& id) {
    absl::StatusOr<StoredJob> j = store_.GetJob(id);
    EXPECT_TRUE(j.ok()) << id << ": " << j.status();
    return j.ok() ? j->job : v1::Job();
  }

  int64_t RunningMemory() {
    int64_t sum = 0;
    for (auto s : {v1::JOB_STATE_ADMITTED, v1::JOB_STATE_RUNNING}) {
      for (const JobRecord& jr : store_.JobsInState(s)) sum += jr->memory_bytes();
    }
    return sum;
  }

  SimulatedClock clock_;
  MemoryStore store_;
  FakeRuntime runtime_;
  FaultyRuntime faulty_;
  PlanCache plans_;
  Reconciler reconciler_;
};

}  // namespace berth::testing

#endif  // BERTH_EXECUTOR_RECONCILE_TESTING_RECONCILER_FIXTURE_H_
