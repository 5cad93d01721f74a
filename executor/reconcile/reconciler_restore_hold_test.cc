// A store just restored from a backup (DESIGN.md "Recovery"): a container of
// a job the backup never had (submitted after it) is held until the first
// newer sync, then adopted if that sync names the job and stopped as an
// orphan if not; while one is held, nothing is admitted.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "executor/reconcile/plan_snapshot.h"
#include "executor/reconcile/reconciler.h"
#include "executor/reconcile/testing/test_jobs.h"
#include "executor/runtime/fake_runtime.h"
#include "executor/store/memory_store.h"
#include "gtest/gtest.h"
#include "planner/base/simulated_clock.h"

namespace berth {
namespace {

using ::berth::testing::TestBudgets;
using ::berth::testing::TestJob;

class RestoreHoldTest : public ::testing::Test {
 protected:
  RestoreHoldTest() : plans_(store_, clock_, TestBudgets(16, 10), planner::Policy()) {}

  void Sync(uint64_t generation, std::vector<v1::JobSpec> jobs) {
    SnapshotRequest r;
    r.generation = generation;
    r.jobs = std::move(jobs);
    r.options.allow_mass_cancel = true;
    absl::StatusOr<SnapshotResult> applied = store_.ApplySnapshot(r, clock_.Now());
    ASSERT_TRUE(applied.ok()) << applied.status();
  }

  // berthd starting on the restored store: the store is as the backup left
  // it when the reconciler is made.
  void StartBerthd(bool restored) {
    ReconcilerOptions o;
    o.hold_orphans_until_sync = restored;
    reconciler_ = std::make_unique<Reconciler>(store_, runtime_, clock_, plans_, o);
  }

  // A container the original berthd started after the backup was cut.
  std::string StartedAfterTheBackup(const std::string& id) {
    ContainerSpec spec;
    spec.job_id = id;
    spec.image = "berth-test/busybox:1";
    spec.attempt = 0;
    spec.memory_bytes = int64_t{8} << 30;
    absl::StatusOr<StartResult> r = runtime_.Start(spec);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->container_id : std::string();
  }

  PassStats Pass() {
    absl::StatusOr<PassStats> stats = reconciler_->RunPass();
    EXPECT_TRUE(stats.ok()) << stats.status();
    return stats.ok() ? *stats : PassStats();
  }

  v1::Job Get(const std::string& id) {
    absl::StatusOr<StoredJob> j = store_.GetJob(id);
    EXPECT_TRUE(j.ok()) << id << ": " << j.status();
    return j.ok() ? j->job : v1::Job();
  }

  SimulatedClock clock_;
  MemoryStore store_;
  FakeRuntime runtime_;
  PlanCache plans_;
  std::unique_ptr<Reconciler> reconciler_;
};

TEST_F(RestoreHoldTest, AJobSubmittedAfterTheBackupIsAdoptedAtTheFirstSync) {
  Sync(1, {TestJob("old", 4)});  // the backup's last sync
  const std::string container = StartedAfterTheBackup("new");
  StartBerthd(/*restored=*/true);
  PassStats s = Pass();
  EXPECT_EQ(s.orphans_held, 1);
  EXPECT_EQ(s.orphans_stopped, 0);
  EXPECT_EQ(s.admitted, 0) << "the held container's reservation is unknown to the store";
  EXPECT_EQ(runtime_.Counters().count("stop"), 0u);
  // Passes before the sync change nothing.
  Pass();
  EXPECT_EQ(Get("old").state(), v1::JOB_STATE_QUEUED);

  Sync(2, {TestJob("old", 4), TestJob("new", 8)});  // the job-server still wants it
  s = Pass();
  EXPECT_EQ(s.adopted, 1);
  EXPECT_EQ(s.orphans_held, 0);
  EXPECT_EQ(s.orphans_stopped, 0);
  const v1::Job n = Get("new");
  EXPECT_EQ(n.state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(n.container_id(), container);
  EXPECT_TRUE(absl::StrContains(n.message(), "adopted")) << n.message();
  EXPECT_EQ(Get("old").state(), v1::JOB_STATE_RUNNING) << "admission resumes after the hold";
  EXPECT_EQ(runtime_.creates(), 2) << "'new' never created a second time";
  EXPECT_EQ(runtime_.Counters().count("stop"), 0u);
}

TEST_F(RestoreHoldTest, AJobTheFirstSyncDoesNotNameIsStoppedThen) {
  Sync(1, {TestJob("old", 4)});
  StartedAfterTheBackup("gone");
  StartBerthd(/*restored=*/true);
  EXPECT_EQ(Pass().orphans_held, 1);
  Sync(2, {TestJob("old", 4)});  // the job-server no longer wants it
  PassStats s = Pass();
  EXPECT_EQ(s.orphans_held, 0);
  EXPECT_EQ(s.orphans_stopped, 1);
  EXPECT_EQ(runtime_.Counters().count("stop"), 1u);
  EXPECT_EQ(store_.GetJob("gone").status().code(), absl::StatusCode::kNotFound);
  // Later orphans are stopped at once, as on any store.
  StartedAfterTheBackup("stray");
  EXPECT_EQ(Pass().orphans_stopped, 1);
}

TEST_F(RestoreHoldTest, AStoreNotRestoredStopsOrphansAtOnce) {
  Sync(1, {TestJob("old", 4)});
  StartedAfterTheBackup("stray");
  StartBerthd(/*restored=*/false);
  PassStats s = Pass();
  EXPECT_EQ(s.orphans_held, 0);
  EXPECT_EQ(s.orphans_stopped, 1);
  EXPECT_EQ(s.admitted, 1);
}

}  // namespace
}  // namespace berth
