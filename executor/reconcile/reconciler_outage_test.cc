// The reconciler during Docker outages and start failures (transient,
// permanent, unexplained; backoff), on fakes. The rest: reconciler_test.cc.
#include <string>
#include <vector>

#include "executor/reconcile/reconciler.h"
#include "executor/reconcile/testing/reconciler_fixture.h"
#include "executor/reconcile/testing/test_jobs.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "planner/base/human_text_testing.h"
#include "planner/convert/convert.h"

namespace berth {
namespace {

using ::berth::testing::Job;
using ::berth::testing::ReconcilerTest;
using ::testing::HasSubstr;
using ::testing::Not;

TEST_F(ReconcilerTest, RuntimeOutageFailsNothingAndAdmitsNothing) {
  Sync(1, {Job("a", 1)});
  Pass();
  Sync(2, {Job("a", 1), Job("b", 1)});
  faulty_.Inject("list", absl::UnavailableError("docker is down"));
  PassStats s = Pass();
  EXPECT_FALSE(s.runtime_ok);
  EXPECT_FALSE(reconciler_.runtime_healthy());
  EXPECT_EQ(Get("a").state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(Get("b").state(), v1::JOB_STATE_QUEUED);
  faulty_.Clear();
  s = Pass();
  EXPECT_TRUE(reconciler_.runtime_healthy());
  EXPECT_EQ(Get("b").state(), v1::JOB_STATE_RUNNING);
}

TEST_F(ReconcilerTest, AJobKilledByTheEngineDuringAnOutageIsRequeuedNotFailed) {
  Sync(1, {Job("a", 1), Job("b", 1)});
  Pass();  // both run
  // The daemon went down and took the job with it (no live-restore).
  ExitDuringOutage("a", 143);
  v1::Job a = Get("a");
  EXPECT_EQ(a.state(), v1::JOB_STATE_RUNNING) << a.message();  // requeued and run again
  EXPECT_EQ(a.requeue_count(), 1);
  EXPECT_EQ(runtime_.creates(), 3);

  // The same exit code outside any outage is the job's own failure.
  clock_.Advance(absl::Seconds(60));
  runtime_.set_now(clock_.Now());
  ASSERT_TRUE(runtime_.Exit("b", 143).ok());
  Pass();
  v1::Job b = Get("b");
  EXPECT_EQ(b.state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(b.failure_cause(), v1::FAILURE_CAUSE_NONZERO_EXIT);
  EXPECT_EQ(b.exit_code(), 143);
}

// A job that ends while the runtime is unreachable keeps its outcome, and its
// message warns that its log may lack what it wrote meanwhile; a job that
// ends afterwards gets no such note.
TEST_F(ReconcilerTest, AJobEndingDuringAnOutageSaysItsLogMayBeIncomplete) {
  Sync(1, {Job("a", 1), Job("b", 1)});
  Pass();  // both run
  ExitDuringOutage("a", 0);  // ends inside the outage
  v1::Job a = Get("a");
  EXPECT_EQ(a.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_THAT(a.message(), HasSubstr(kEndedInOutageNote));

  clock_.Advance(absl::Seconds(60));
  runtime_.set_now(clock_.Now());
  ASSERT_TRUE(runtime_.Exit("b", 0).ok());  // ends after it
  Pass();
  v1::Job b = Get("b");
  EXPECT_EQ(b.state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_THAT(b.message(), Not(HasSubstr("unreachable")));
}

// A job whose node's engine was down while it ran (the runtime's log_note)
// keeps its outcome and its message says why its log may be short.
TEST_F(ReconcilerTest, ARuntimesLogNoteIsAddedToTheOutcome) {
  Sync(1, {Job("a", 1)});
  Pass();
  const std::string note = "ran while node vm (n1) was lost: output may be missing";
  ASSERT_TRUE(runtime_.SetLogNote("a", note).ok());
  ASSERT_TRUE(runtime_.Exit("a", 3).ok());
  Pass();
  v1::Job a = Get("a");
  EXPECT_EQ(a.state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(a.exit_code(), 3);
  EXPECT_EQ(a.message(), "exited with code 3; " + note);
}

// An exit seen late (the engine unreachable for most of a minute) keeps the
// engine's own exit time: the record's finished_at, the ended attempt's and
// the event's finished_at say when the job ended, not when Berth recorded it;
// the event's own time is the recording's.
TEST_F(ReconcilerTest, AnExitRecordedLateKeepsTheEnginesFinishTime) {
  Sync(1, {Job("a", 1)});
  Pass();
  ASSERT_EQ(Get("a").state(), v1::JOB_STATE_RUNNING);
  const absl::Time started = planner::FromProto(Get("a").started_at());
  faulty_.Inject("list", absl::UnavailableError("dockerd stopped"));
  clock_.Advance(absl::Seconds(5));
  runtime_.set_now(clock_.Now());
  const absl::Time exited = clock_.Now();
  ASSERT_TRUE(runtime_.Exit("a", 0).ok());
  for (int i = 0; i < 5; ++i) {  // ~55 s of failed passes
    clock_.Advance(absl::Seconds(11));
    EXPECT_FALSE(Pass().runtime_ok);
  }
  faulty_.Clear();
  Pass();
  const absl::Time recorded = clock_.Now();
  ASSERT_GE(recorded - exited, absl::Seconds(55));
  v1::Job a = Get("a");
  ASSERT_EQ(a.state(), v1::JOB_STATE_SUCCEEDED) << a.message();
  EXPECT_EQ(planner::FromProto(a.finished_at()), exited);
  ASSERT_EQ(a.attempts_size(), 1);
  EXPECT_EQ(planner::FromProto(a.attempts(0).finished_at()), exited);
  EXPECT_EQ(a.observed().run_seconds(), absl::ToDoubleSeconds(exited - started));
  absl::StatusOr<EventPage> events = store_.ReadEvents(0, 10000);
  ASSERT_TRUE(events.ok()) << events.status();
  const v1::Event* done = nullptr;
  for (const v1::Event& e : events->events) {
    if (e.job_id() == "a" && e.state() == v1::JOB_STATE_SUCCEEDED) done = &e;
  }
  ASSERT_NE(done, nullptr);
  EXPECT_EQ(planner::FromProto(done->finished_at()), exited);
  EXPECT_EQ(planner::FromProto(done->time()), recorded);
}

TEST_F(ReconcilerTest, TransientStartErrorsRetryPermanentOnesFail) {
  runtime_.AddMissingImage("berth-test/missing:1");
  v1::JobSpec missing = Job("missing", 1);
  missing.set_image("berth-test/missing:1");
  Sync(1, {missing, Job("flaky", 1)});
  faulty_.Inject("create", absl::UnavailableError("slow docker"), 2);
  Pass();
  // Both starts hit the transient fault: both stay ADMITTED.
  EXPECT_EQ(Get("flaky").state(), v1::JOB_STATE_ADMITTED);
  Pass();
  EXPECT_EQ(Get("flaky").state(), v1::JOB_STATE_RUNNING);
  v1::Job m = Get("missing");
  EXPECT_EQ(m.state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(m.failure_cause(), v1::FAILURE_CAUSE_START_FAILED);
  EXPECT_NE(m.message().find("berth-test/missing:1"), std::string::npos) << m.message();
}

TEST_F(ReconcilerTest, UnexplainedStartErrorsAreBoundedOutagesAreNot) {
  // A start refused for ever must not hold a worker slot for ever.
  Sync(1, {Job("stuck", 1)});
  faulty_.Inject("create", absl::InternalError("docker API HTTP 500: mystery"));
  const StartRetryOptions o;  // the defaults the reconciler uses
  Pass();
  int passes = 1;
  while (Get("stuck").state() == v1::JOB_STATE_ADMITTED && passes < 100) {
    Pass();
    clock_.Advance(o.max_backoff);
    ++passes;
  }
  v1::Job stuck = Get("stuck");
  EXPECT_EQ(stuck.state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(stuck.failure_cause(), v1::FAILURE_CAUSE_START_FAILED);
  EXPECT_EQ(passes, o.max_attempts);
  EXPECT_NE(stuck.message().find("mystery"), std::string::npos) << stuck.message();
  EXPECT_NE(stuck.message().find("6 attempts"), std::string::npos) << stuck.message();

  // An unreachable engine is retried without limit and fails nothing.
  Sync(2, {Job("outage", 1)});
  faulty_.Inject("create", absl::UnavailableError("engine hung"));
  for (int i = 0; i < 3 * o.max_attempts; ++i) {
    Pass();
    clock_.Advance(o.max_backoff);
  }
  EXPECT_EQ(Get("outage").state(), v1::JOB_STATE_ADMITTED);
  faulty_.Clear();
  Pass();
  EXPECT_EQ(Get("outage").state(), v1::JOB_STATE_RUNNING);
}

TEST_F(ReconcilerTest, StartBackoffSpacesTheRetries) {
  Sync(1, {Job("slow", 1)});
  faulty_.Inject("create", absl::InternalError("docker API HTTP 500: mystery"), 2);
  Pass();  // attempt 1 fails: the next pass retries
  Pass();  // attempt 2 fails: now it waits initial_backoff
  EXPECT_EQ(Get("slow").state(), v1::JOB_STATE_ADMITTED);
  Pass();
  EXPECT_EQ(Get("slow").state(), v1::JOB_STATE_ADMITTED);  // not due yet
  clock_.Advance(StartRetryOptions().initial_backoff);
  Pass();
  EXPECT_EQ(Get("slow").state(), v1::JOB_STATE_RUNNING);
}

}  // namespace
}  // namespace berth
