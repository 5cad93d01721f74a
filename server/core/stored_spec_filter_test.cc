// StoredSpecFilter through ExecutorCore on a MemoryStore: a re-sync keeps
// only new, changed, invalid and dependent specs; the result is that of a
// sync that kept every spec; nothing is applied when a dropped job changed
// meanwhile.
#include "server/ingest/stored_spec_filter.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "executor/reconcile/reconciler.h"
#include "executor/reconcile/testing/test_jobs.h"
#include "executor/runtime/fake_runtime.h"
#include "executor/store/memory_store.h"
#include "executor/store/spec_fingerprint.h"
#include "gtest/gtest.h"
#include "planner/base/simulated_clock.h"
#include "server/core/executor_core.h"
#include "server/core/testing/test_core_options.h"

namespace berth {
namespace {

v1::JobSpec Job(const std::string& id, int64_t memory_gib, int priority = 0) {
  return testing::TestJob(id, memory_gib, priority);
}

v1::JobSpec DependsOn(v1::JobSpec job, const std::string& on) {
  job.add_depends_on(on);
  return job;
}

// Streams `jobs` in batches of two through an assembler with `filter`.
absl::StatusOr<ReceivedSnapshot> Stream(SpecFilter* filter, uint64_t generation,
                                        const std::vector<v1::JobSpec>& jobs) {
  SnapshotAssembler assembler(100, filter);
  v1::SyncSnapshotRequest header;
  header.mutable_header()->set_generation(generation);
  header.mutable_header()->set_expected_job_count(jobs.size());
  absl::Status s = assembler.Add(header);
  for (size_t i = 0; s.ok() && i < jobs.size(); i += 2) {
    v1::SyncSnapshotRequest batch;
    for (size_t k = i; k < jobs.size() && k < i + 2; ++k) *batch.mutable_batch()->add_jobs() = jobs[k];
    s = assembler.Add(batch);
  }
  v1::SyncSnapshotRequest end;
  end.mutable_end()->set_job_count(jobs.size());
  if (s.ok()) s = assembler.Add(end);
  if (!s.ok()) return s;
  return assembler.Finish();
}

std::vector<std::string> KeptIds(const ReceivedSnapshot& r) {
  std::vector<std::string> ids;
  for (const v1::JobSpec& j : r.jobs) ids.push_back(j.id());
  return ids;
}

class StoredSpecFilterTest : public ::testing::Test {
 protected:
  StoredSpecFilterTest()
      : plans_(store_, clock_, testing::TestBudgets(16), planner::Policy()),
        reconciler_(store_, runtime_, clock_, plans_, ReconcilerOptions()),
        core_(store_, plans_, clock_, reconciler_.admission_mutex(), Options()) {}

  static ExecutorCoreOptions Options() {
    ExecutorCoreOptions o = testing::TestCoreOptions();
    return o;
  }

  // Streams with a fresh filter of the core, then syncs.
  absl::StatusOr<v1::SyncSnapshotResponse> FilteredSync(uint64_t generation,
                                                        const std::vector<v1::JobSpec>& jobs,
                                                        ReceivedSnapshot* seen = nullptr) {
    absl::StatusOr<ExecutorCore::SyncSetup> setup = core_.BeginSync();
    if (!setup.ok()) return setup.status();
    std::unique_ptr<SpecFilter> filter = core_.NewSyncFilter(*setup);
    absl::StatusOr<ReceivedSnapshot> r = Stream(filter.get(), generation, jobs);
    if (!r.ok()) return r.status();
    if (seen != nullptr) {
      seen->jobs = r->jobs;
      seen->unchanged = r->unchanged;
    }
    return core_.Sync(*std::move(r), *setup);
  }

  SimulatedClock clock_;
  MemoryStore store_;
  FakeRuntime runtime_;
  PlanCache plans_;
  Reconciler reconciler_;
  ExecutorCore core_;
};

const std::vector<v1::JobSpec>& Base() {
  static const auto* jobs = new std::vector<v1::JobSpec>{
      Job("a", 1), Job("b", 2), DependsOn(Job("c", 1), "a"), Job("d", 1)};
  return *jobs;
}

TEST_F(StoredSpecFilterTest, FirstSyncKeepsEverySpec) {
  ReceivedSnapshot seen;
  absl::StatusOr<v1::SyncSnapshotResponse> r = FilteredSync(1, Base(), &seen);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->added(), 4);
  EXPECT_EQ(seen.jobs.size(), 4u);
  EXPECT_TRUE(seen.unchanged.empty());
}

TEST_F(StoredSpecFilterTest, UnchangedReSyncKeepsOnlyDependentSpecs) {
  ASSERT_TRUE(FilteredSync(1, Base()).ok());
  const uint64_t revision = store_.CurrentRevision();
  ReceivedSnapshot seen;
  absl::StatusOr<v1::SyncSnapshotResponse> r = FilteredSync(2, Base(), &seen);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(KeptIds(seen), std::vector<std::string>{"c"});  // depends on a
  ASSERT_EQ(seen.unchanged.size(), 3u);
  EXPECT_EQ(seen.unchanged[0].id, "a");
  EXPECT_EQ(seen.unchanged[0].fingerprint, SpecFingerprint(Base()[0]));
  EXPECT_EQ(r->unchanged(), 4);
  EXPECT_EQ(r->added() + r->updated() + r->cancelled() + r->rejected(), 0);
  EXPECT_EQ(store_.CurrentRevision(), revision);  // a sync that changes nothing: no event
}

TEST_F(StoredSpecFilterTest, NewChangedAndAbsentJobsAsWithoutTheFilter) {
  ASSERT_TRUE(FilteredSync(1, Base()).ok());
  std::vector<v1::JobSpec> next = {Job("a", 1), Job("b", 2, /*priority=*/5), Job("e", 1)};
  ReceivedSnapshot seen;
  absl::StatusOr<v1::SyncSnapshotResponse> r = FilteredSync(2, next, &seen);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(KeptIds(seen), (std::vector<std::string>{"b", "e"}));
  EXPECT_EQ(r->added(), 1);
  EXPECT_EQ(r->updated(), 1);
  EXPECT_EQ(r->unchanged(), 1);
  EXPECT_EQ(r->cancelled(), 2);  // c and d
  EXPECT_EQ(store_.GetJob("b")->job.spec().priority(), 5);
  EXPECT_EQ(store_.GetJob("d")->job.state(), v1::JOB_STATE_CANCELLED);
}

TEST_F(StoredSpecFilterTest, AStoredJobThatNoLongerValidatesIsKeptAndListed) {
  ASSERT_TRUE(FilteredSync(1, Base()).ok());
  ASSERT_TRUE(store_.SetBudgets(testing::TestBudgets(1), clock_.Now()).ok());
  ReceivedSnapshot seen;
  absl::StatusOr<v1::SyncSnapshotResponse> r = FilteredSync(2, Base(), &seen);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(KeptIds(seen), (std::vector<std::string>{"b", "c"}));
  ASSERT_EQ(r->rejections_size(), 1);
  EXPECT_EQ(r->rejections(0).job_id(), "b");
  EXPECT_EQ(r->rejections(0).reason(), v1::REJECT_REASON_NEVER_FITS);
  EXPECT_EQ(store_.GetJob("b")->job.state(), v1::JOB_STATE_QUEUED);  // known: left as it is
}

TEST_F(StoredSpecFilterTest, AJobDependingOnADroppedOneIsAccepted) {
  ASSERT_TRUE(FilteredSync(1, {Job("a", 1)}).ok());
  absl::StatusOr<v1::SyncSnapshotResponse> r =
      FilteredSync(2, {Job("a", 1), DependsOn(Job("n", 1), "a")});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->added(), 1);
  EXPECT_EQ(r->rejected(), 0);
}

TEST_F(StoredSpecFilterTest, ARepeatedIdNamesBothPositionsAcrossDroppedAndKept) {
  ASSERT_TRUE(FilteredSync(1, Base()).ok());
  absl::StatusOr<ExecutorCore::SyncSetup> setup = core_.BeginSync();
  ASSERT_TRUE(setup.ok()) << setup.status();
  std::unique_ptr<SpecFilter> filter = core_.NewSyncFilter(*setup);
  absl::StatusOr<ReceivedSnapshot> r =
      Stream(filter.get(), 2, {Job("x", 1), Job("a", 1), Job("a", 3)});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(r.status().message(), "jobs[2].id: job id 'a' repeats jobs[1]"))
      << r.status();
}

TEST_F(StoredSpecFilterTest, AJobChangedMeanwhileAbortsTheSyncAndChangesNothing) {
  ASSERT_TRUE(FilteredSync(1, Base()).ok());
  absl::StatusOr<ExecutorCore::SyncSetup> setup = core_.BeginSync();
  ASSERT_TRUE(setup.ok()) << setup.status();
  std::unique_ptr<SpecFilter> filter = core_.NewSyncFilter(*setup);
  absl::StatusOr<ReceivedSnapshot> late = Stream(filter.get(), 3, Base());
  ASSERT_TRUE(late.ok()) << late.status();
  ASSERT_EQ(late->unchanged.size(), 3u);
  // Another sync changes the dropped job a before `late` is applied.
  std::vector<v1::JobSpec> changed = Base();
  changed[0].set_priority(7);
  ASSERT_TRUE(FilteredSync(2, changed).ok());
  const uint64_t revision = store_.CurrentRevision();
  absl::StatusOr<v1::SyncSnapshotResponse> r = core_.Sync(*std::move(late), *setup);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kAborted) << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), "job 'a' changed")) << r.status();
  EXPECT_EQ(store_.CurrentRevision(), revision);
  EXPECT_EQ(store_.LastAppliedGeneration(), 2u);
  EXPECT_EQ(store_.GetJob("a")->job.spec().priority(), 7);
}

TEST_F(StoredSpecFilterTest, ReSendDropsEverySpecAndIsCheckedByDigest) {
  ASSERT_TRUE(FilteredSync(1, Base()).ok());
  ReceivedSnapshot seen;
  absl::StatusOr<v1::SyncSnapshotResponse> same = FilteredSync(1, Base(), &seen);
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_TRUE(same->already_applied());
  EXPECT_TRUE(seen.jobs.empty());
  std::vector<v1::JobSpec> other = Base();
  other[1].set_priority(9);
  absl::StatusOr<v1::SyncSnapshotResponse> differs = FilteredSync(1, other);
  EXPECT_EQ(differs.status().code(), absl::StatusCode::kFailedPrecondition) << differs.status();
  EXPECT_EQ(store_.GetJob("b")->job.spec().priority(), 0);
}

// The budgets change while a sync streams: the specs the filter dropped and
// those it kept are both judged by the budgets the sync began with.
TEST_F(StoredSpecFilterTest, OneSetupValidatesTheWholeSync) {
  ASSERT_TRUE(FilteredSync(1, Base()).ok());
  absl::StatusOr<ExecutorCore::SyncSetup> setup = core_.BeginSync();
  ASSERT_TRUE(setup.ok()) << setup.status();
  std::unique_ptr<SpecFilter> filter = core_.NewSyncFilter(*setup);
  std::vector<v1::JobSpec> jobs = Base();
  jobs.push_back(Job("big", 12));
  absl::StatusOr<ReceivedSnapshot> r = Stream(filter.get(), 2, jobs);
  ASSERT_TRUE(r.ok()) << r.status();
  v1::SetBudgetsRequest shrink;
  shrink.mutable_budgets()->set_memory_bytes(int64_t{8} << 30);
  shrink.mutable_update_mask()->add_paths("memory_bytes");
  ASSERT_TRUE(core_.SetBudgets(shrink).ok());
  absl::StatusOr<v1::SyncSnapshotResponse> applied = core_.Sync(*std::move(r), *setup);
  ASSERT_TRUE(applied.ok()) << applied.status();
  EXPECT_EQ(applied->rejected(), 0);
  EXPECT_EQ(applied->added(), 1);
  // A sync that begins after the change judges its specs, new or stored, by
  // the new budgets.
  jobs.push_back(Job("bigger", 12));
  absl::StatusOr<v1::SyncSnapshotResponse> later = FilteredSync(3, jobs);
  ASSERT_TRUE(later.ok()) << later.status();
  std::vector<std::string> rejected;
  for (const v1::JobRejection& j : later->rejections()) rejected.push_back(j.job_id());
  EXPECT_EQ(rejected, (std::vector<std::string>{"big", "bigger"})) << later->DebugString();
}

TEST_F(StoredSpecFilterTest, DryRunRefusesAFilteredSnapshot) {
  ASSERT_TRUE(FilteredSync(1, Base()).ok());
  absl::StatusOr<ExecutorCore::SyncSetup> setup = core_.BeginSync();
  ASSERT_TRUE(setup.ok()) << setup.status();
  std::unique_ptr<SpecFilter> filter = core_.NewSyncFilter(*setup);
  absl::StatusOr<ReceivedSnapshot> r = Stream(filter.get(), 2, Base());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(core_.DryRun(*std::move(r)).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(StoredSpecFilterTest, TheStoreRefusesAnUnknownUnchangedJob) {
  ASSERT_TRUE(FilteredSync(1, Base()).ok());
  const uint64_t revision = store_.CurrentRevision();
  SnapshotRequest request;
  request.generation = 2;
  for (const v1::JobSpec& j : Base()) request.unchanged.push_back({j.id(), SpecFingerprint(j)});
  request.unchanged.push_back({"gone", 1});
  absl::StatusOr<SnapshotResult> r = store_.ApplySnapshot(request, clock_.Now());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kAborted) << r.status();
  EXPECT_EQ(store_.CurrentRevision(), revision);
  request.unchanged.pop_back();
  r = store_.ApplySnapshot(request, clock_.Now());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->response.unchanged(), 4);
  EXPECT_EQ(r->job_writes, 0);
}

}  // namespace
}  // namespace berth
