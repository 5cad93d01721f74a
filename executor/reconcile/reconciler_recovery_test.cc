// The reconciler's recovery rules on fakes (DESIGN.md "Recovery"): a run the
// store does not know of is adopted, never started twice; a run whose
// container is gone takes its outcome from its run metadata, and is LOST
// only when nothing says how it ended, saying why.
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "executor/logs/log_archive.h"
#include "executor/logs/run_metadata.h"
#include "executor/reconcile/testing/reconciler_fixture.h"
#include "gtest/gtest.h"
#include "planner/convert/convert.h"

namespace berth {
namespace {

using ::berth::testing::Job;
using ::berth::testing::ReconcilerTest;

std::string WorkspacesRoot() {
  static int counter = 0;
  const char* base = std::getenv("TEST_TMPDIR");
  const std::string root =
      absl::StrCat(base != nullptr ? base : "/tmp", "/recovery-ws-", ++counter);
  EXPECT_EQ(mkdir(root.c_str(), 0755), 0) << root;
  EXPECT_EQ(mkdir((root + "/ws").c_str(), 0755), 0) << root;
  return root;
}

ReconcilerOptions WithRunMetadata(const std::string& root) {
  ReconcilerOptions o;
  RunMetadataOptions m;
  m.workspaces_root = root;
  o.run_metadata = m;
  return o;
}

std::unique_ptr<LogArchive> OpenArchive(const std::string& name) {
  static int counter = 0;
  const char* base = std::getenv("TEST_TMPDIR");
  absl::StatusOr<std::unique_ptr<LogArchive>> a = LogArchive::Open(
      {absl::StrCat(base != nullptr ? base : "/tmp", "/", name, "-", ++counter), 1 << 20});
  EXPECT_TRUE(a.ok()) << a.status();
  return a.ok() ? *std::move(a) : nullptr;
}

// Made before the fixture's reconciler, which is given its path.
struct WorkspacesHolder {
  std::string root_ = WorkspacesRoot();
};

class RecoveryTest : private WorkspacesHolder, public ReconcilerTest {
 protected:
  RecoveryTest() : ReconcilerTest(WithRunMetadata(root_)) {}

  // Starts `id`'s container as another berthd would have (the store knows
  // nothing of it), labelled with `attempt`.
  std::string StartBehindTheStore(const std::string& id, int attempt = 0) {
    ContainerSpec spec;
    spec.job_id = id;
    spec.image = "berth-test/busybox:1";
    spec.attempt = attempt;
    absl::StatusOr<StartResult> r = runtime_.Start(spec);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->container_id : std::string();
  }

  // The run metadata another berthd wrote when `spec`'s run ended.
  void WriteMetadata(const v1::JobSpec& spec, v1::JobState state, int exit_code,
                     absl::Time finished, int requeue_count = 0) {
    v1::Job j;
    *j.mutable_spec() = spec;
    j.set_state(state);
    j.set_requeue_count(requeue_count);
    j.set_exit_code(exit_code);
    j.set_has_exit_code(true);
    if (exit_code != 0) j.set_failure_cause(v1::FAILURE_CAUSE_NONZERO_EXIT);
    j.set_message(absl::StrCat("exited with code ", exit_code));
    *j.mutable_started_at() = planner::ToProtoTimestamp(finished - absl::Minutes(1));
    *j.mutable_finished_at() = planner::ToProtoTimestamp(finished);
    RunMetadataOptions m;
    m.workspaces_root = root_;
    ASSERT_TRUE(WriteRunMetadata(m, j, nullptr, "").ok());
  }

  using WorkspacesHolder::root_;
};

// The reconciler keeps logs on its log threads (berthd's way) in this
// archive; another berthd's archive wrote the run metadata's log.
struct ArchivesHolder {
  std::unique_ptr<LogArchive> kept_ = OpenArchive("recovery-kept");
  std::unique_ptr<LogArchive> theirs_ = OpenArchive("recovery-theirs");
};

class BackgroundRecoveryTest : private WorkspacesHolder,
                               private ArchivesHolder,
                               public ReconcilerTest {
 protected:
  BackgroundRecoveryTest() : ReconcilerTest(Options()) {}
  ReconcilerOptions Options() {
    ReconcilerOptions o = WithRunMetadata(root_);
    o.log_archive = kept_.get();
    o.background_log_capture = true;
    return o;
  }

  // The run metadata and log another berthd wrote when `spec`'s first run
  // ended with `exit_code`, having printed `out`.
  void WriteRun(const v1::JobSpec& spec, int exit_code, const std::string& out) {
    ASSERT_TRUE(theirs_->Capture(spec.id(), 1, [&](const LogSink& sink) {
      (void)sink(LogStream::kStdout, out);
      return absl::OkStatus();
    }).ok());
    v1::Job j;
    *j.mutable_spec() = spec;
    j.set_state(exit_code == 0 ? v1::JOB_STATE_SUCCEEDED : v1::JOB_STATE_FAILED);
    j.set_exit_code(exit_code);
    j.set_has_exit_code(true);
    if (exit_code != 0) j.set_failure_cause(v1::FAILURE_CAUSE_NONZERO_EXIT);
    *j.mutable_started_at() = planner::ToProtoTimestamp(clock_.Now() - absl::Minutes(1));
    *j.mutable_finished_at() = planner::ToProtoTimestamp(clock_.Now());
    RunMetadataOptions m;
    m.workspaces_root = root_;
    ASSERT_TRUE(WriteRunMetadata(m, j, theirs_.get(), "").ok());
  }
  std::string Kept(const std::string& id) {
    bool eof = false;
    return kept_->Read(id, 1, LogStream::kStdout, 0, 1 << 20, &eof).value_or("<none>");
  }

  using ArchivesHolder::kept_;
  using WorkspacesHolder::root_;
};

TEST_F(RecoveryTest, AQueuedJobsRunningContainerIsAdoptedNotStartedAgain) {
  runtime_.set_now(clock_.Now() - absl::Minutes(5));  // started before this berthd
  const std::string container = StartBehindTheStore("a");
  Sync(1, {Job("a", 4)});
  PassStats s = Pass();
  EXPECT_EQ(s.adopted, 1);
  const v1::Job a = Get("a");
  EXPECT_EQ(a.state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(a.container_id(), container);
  EXPECT_EQ(planner::FromProto(a.started_at()), clock_.Now() - absl::Minutes(5))
      << "the engine's start, not the adoption's";
  EXPECT_EQ(runtime_.creates(), 1) << "never created a second time";
  EXPECT_EQ(runtime_.Counters().count("stop"), 0u);
  EXPECT_TRUE(absl::StrContains(a.message(), "adopted")) << a.message();
  // It ends as any run does.
  ASSERT_TRUE(runtime_.Exit("a", 0).ok());
  Pass();
  EXPECT_EQ(Get("a").state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(runtime_.creates(), 1);
}

TEST_F(RecoveryTest, AQueuedJobsExitedContainerGivesItsOutcome) {
  StartBehindTheStore("a");
  ASSERT_TRUE(runtime_.Exit("a", 3).ok());
  Sync(1, {Job("a", 4)});
  Pass();
  const v1::Job a = Get("a");
  EXPECT_EQ(a.state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(a.failure_cause(), v1::FAILURE_CAUSE_NONZERO_EXIT);
  EXPECT_EQ(a.exit_code(), 3);
  EXPECT_EQ(runtime_.creates(), 1);
}

TEST_F(RecoveryTest, AnEarlierAttemptsLeftoverIsRemovedAndTheJobRuns) {
  StartBehindTheStore("a", /*attempt=*/3);  // not the attempt the store would run
  ASSERT_TRUE(runtime_.Exit("a", 0).ok());
  Sync(1, {Job("a", 4)});
  PassStats s = Pass();
  EXPECT_EQ(s.adopted, 0);
  Pass();
  EXPECT_EQ(Get("a").state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(runtime_.creates(), 2);
}

TEST_F(RecoveryTest, AVanishedRunTakesItsOutcomeFromTheRunMetadata) {
  Sync(1, {Job("a", 4), Job("b", 4)});
  Pass();
  ASSERT_EQ(Get("a").state(), v1::JOB_STATE_RUNNING);
  clock_.Advance(absl::Minutes(1));
  runtime_.Vanish("a");
  runtime_.Vanish("b");
  WriteMetadata(Get("a").spec(), v1::JOB_STATE_SUCCEEDED, 0, clock_.Now());
  clock_.Advance(absl::Minutes(1));
  Pass();
  const v1::Job a = Get("a");
  EXPECT_EQ(a.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_TRUE(a.has_exit_code());
  EXPECT_EQ(a.exit_code(), 0);
  EXPECT_EQ(planner::FromProto(a.finished_at()), clock_.Now() - absl::Minutes(1));
  EXPECT_TRUE(absl::StrContains(a.message(), "run metadata")) << a.message();
  // b has no evidence: LOST, saying what was looked at.
  const v1::Job b = Get("b");
  EXPECT_EQ(b.state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(b.failure_cause(), v1::FAILURE_CAUSE_LOST);
  EXPECT_FALSE(b.has_exit_code());
  EXPECT_TRUE(absl::StrContains(b.message(), "nothing says how it ended")) << b.message();
  EXPECT_TRUE(absl::StrContains(b.message(), "not written")) << b.message();
  EXPECT_TRUE(absl::StrContains(b.message(), "no log of the attempt was kept")) << b.message();
}

TEST_F(RecoveryTest, AQueuedJobWhoseRunMetadataShowsItRanIsNotRunAgain) {
  Sync(1, {Job("a", 4)});
  clock_.Advance(absl::Minutes(2));
  WriteMetadata(Get("a").spec(), v1::JOB_STATE_FAILED, 2, clock_.Now());
  clock_.Advance(absl::Minutes(1));
  Pass();
  const v1::Job a = Get("a");
  EXPECT_EQ(a.state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(a.failure_cause(), v1::FAILURE_CAUSE_NONZERO_EXIT);
  EXPECT_EQ(a.exit_code(), 2);
  EXPECT_EQ(runtime_.creates(), 0);
}

TEST_F(RecoveryTest, RunMetadataOfAnEarlierRunIsNotThisRunsOutcome) {
  // Written before the job was queued (an earlier job of the same id), or
  // for another attempt: the job runs.
  v1::JobSpec spec = Job("a", 4);
  WriteMetadata(spec, v1::JOB_STATE_SUCCEEDED, 0, clock_.Now() - absl::Hours(1));
  Sync(1, {spec});
  Pass();
  EXPECT_EQ(Get("a").state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(runtime_.creates(), 1);
  v1::JobSpec b = Job("b", 4);
  Sync(2, {spec, b});
  clock_.Advance(absl::Minutes(1));
  WriteMetadata(b, v1::JOB_STATE_SUCCEEDED, 0, clock_.Now(), /*requeue_count=*/1);
  Pass();
  EXPECT_EQ(Get("b").state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(runtime_.creates(), 2);
}

// The run's log beside its metadata is imported on the log threads, not by
// the pass, and the outcome is recorded only once it is kept: for a run
// whose container vanished and for a queued job whose run the store missed.
TEST_F(BackgroundRecoveryTest, ARunsLogIsImportedOffThePassBeforeItsOutcome) {
  Sync(1, {Job("a", 4)});
  Pass();
  ASSERT_EQ(Get("a").state(), v1::JOB_STATE_RUNNING);
  clock_.Advance(absl::Minutes(1));
  runtime_.Vanish("a");
  WriteRun(Get("a").spec(), 0, "a's output\n");
  Pass();
  EXPECT_EQ(Get("a").state(), v1::JOB_STATE_RUNNING) << "recorded before its log was kept";
  reconciler_.AwaitStarts();  // the import too
  EXPECT_TRUE(kept_->Has("a", 1));
  Pass();
  const v1::Job a = Get("a");
  EXPECT_EQ(a.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_TRUE(absl::StrContains(a.message(), "run metadata")) << a.message();
  EXPECT_EQ(Kept("a"), "a's output\n");
}

TEST_F(BackgroundRecoveryTest, AQueuedJobsRunIsRecordedOnceItsLogIsKept) {
  Sync(1, {Job("a", 4)});
  clock_.Advance(absl::Minutes(2));
  WriteRun(Get("a").spec(), 2, "a ran\n");
  clock_.Advance(absl::Minutes(1));
  Pass();
  EXPECT_EQ(Get("a").state(), v1::JOB_STATE_QUEUED) << "recorded before its log was kept";
  reconciler_.AwaitStarts();
  Pass();
  const v1::Job a = Get("a");
  EXPECT_EQ(a.state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(a.exit_code(), 2);
  EXPECT_EQ(Kept("a"), "a ran\n");
  EXPECT_EQ(runtime_.creates(), 0) << "never run again";
}

// A log that cannot be imported (its file gone) does not hold the outcome:
// recorded without it, once the import said so.
TEST_F(BackgroundRecoveryTest, AnUnimportableLogDoesNotHoldTheOutcome) {
  Sync(1, {Job("a", 4)});
  Pass();
  clock_.Advance(absl::Minutes(1));
  runtime_.Vanish("a");
  WriteRun(Get("a").spec(), 0, "lost\n");
  ASSERT_EQ(std::remove(absl::StrCat(root_, "/ws/metadata/", LogArchive::JobDirName("a"), ".log")
                            .c_str()),
            0);
  Pass();
  reconciler_.AwaitStarts();
  Pass();
  EXPECT_EQ(Get("a").state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_FALSE(kept_->Has("a", 1));
}

}  // namespace
}  // namespace berth
