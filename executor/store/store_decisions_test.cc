// The Store contract, part 2: decisions, transitions and meta changes.
#include <algorithm>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "executor/store/memory_store.h"
#include "executor/store/spec_fingerprint.h"
#include "executor/store/store.h"
#include "executor/store/store_contract_test.h"
#include "executor/store/store_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

using ::berth::testing::Snapshot;
using ::berth::testing::Spec;
using ::berth::testing::StoreTest;
using ::berth::testing::T0;
using ::testing::ElementsAre;
namespace v1 = ::berth::v1;

TEST_P(StoreTest, AdmitDecisionIsRecordedWithItsTransition) {
  Apply(Snapshot(1, {Spec("a")}));
  DecisionRequest d =
      testing::Decide("a", DecisionKind::kAdmit, v1::JOB_STATE_QUEUED,
                      "fits: 1 GiB of 8 GiB free", 42);
  auto r = store_->RecordDecisions({d}, T0());
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].sequence, 1u);
  auto a = store_->GetJob("a");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->job.state(), v1::JOB_STATE_ADMITTED);
  EXPECT_TRUE(a->job.has_admitted_at());
  EXPECT_EQ((*r)[0].revision, a->job.revision());
  auto log = store_->DecisionsForJob("a");
  ASSERT_TRUE(log.ok());
  ASSERT_EQ(log->size(), 1u);
  EXPECT_EQ((*log)[0].kind, DecisionKind::kAdmit);
  EXPECT_EQ((*log)[0].reason, "fits: 1 GiB of 8 GiB free");
  EXPECT_EQ((*log)[0].plan_generation, 42u);
  EXPECT_EQ((*log)[0].time, T0());
  EXPECT_TRUE(store_->DecisionsForJob("nobody")->empty());
}

// A job's admittedAt is its ADMITTED event's time, never before an event
// already recorded: here the finish that freed the memory it takes is
// recorded (at T0+10s) after the pass that admits it began (T0+9s).
TEST_P(StoreTest, AdmittedAtIsTheAdmittedEventsTime) {
  Apply(Snapshot(1, {Spec("a"), Spec("b")}));
  Run("a");
  TransitionRequest done;
  done.job_id = "a";
  done.expected_state = v1::JOB_STATE_RUNNING;
  done.new_state = v1::JOB_STATE_SUCCEEDED;
  done.exit_code = 0;
  ASSERT_TRUE(store_->Transition(done, T0() + absl::Seconds(10)).ok());
  DecisionRequest d = testing::Decide("b", DecisionKind::kAdmit, v1::JOB_STATE_QUEUED, "fits", 1);
  ASSERT_TRUE(store_->RecordDecisions({d}, T0() + absl::Seconds(9)).ok());
  auto b = store_->GetJob("b");
  ASSERT_TRUE(b.ok()) << b.status();
  const std::vector<v1::Event> events = AllEvents();
  ASSERT_FALSE(events.empty());
  const v1::Event& admitted = events.back();
  ASSERT_EQ(admitted.job_id(), "b");
  ASSERT_EQ(admitted.state(), v1::JOB_STATE_ADMITTED);
  EXPECT_EQ(b->job.admitted_at().seconds(), admitted.time().seconds());
  EXPECT_EQ(b->job.admitted_at().nanos(), admitted.time().nanos());
  EXPECT_EQ(b->job.admitted_at().seconds(), absl::ToUnixSeconds(T0() + absl::Seconds(10)));
}

TEST_P(StoreTest, DecisionErrorsChangeNothing) {
  Apply(Snapshot(1, {Spec("a"), Spec("b")}));
  Run("b");
  const uint64_t rev = store_->CurrentRevision();
  DecisionRequest ok =
      testing::Decide("a", DecisionKind::kAdmit, v1::JOB_STATE_QUEUED, "", 1);
  DecisionRequest stale =
      testing::Decide("b", DecisionKind::kAdmit, v1::JOB_STATE_QUEUED, "", 1);
  DecisionRequest unknown =
      testing::Decide("z", DecisionKind::kAdmit, v1::JOB_STATE_QUEUED, "", 1);
  DecisionRequest wrong =
      testing::Decide("b", DecisionKind::kAdmit, v1::JOB_STATE_RUNNING, "", 1);
  EXPECT_EQ(store_->RecordDecisions({ok, stale}, T0()).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(store_->RecordDecisions({ok, unknown}, T0()).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->RecordDecisions({wrong}, T0()).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(store_->RecordDecisions({ok, ok}, T0()).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->RecordDecisions({}, T0()).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->CurrentRevision(), rev);
  EXPECT_EQ(StateOf("a"), v1::JOB_STATE_QUEUED);
  EXPECT_TRUE(store_->DecisionsForJob("a")->empty());
}

TEST_P(StoreTest, StopDecisionsRecordIntents) {
  Apply(Snapshot(1, {Spec("a"), Spec("b"), Spec("c"), Spec("q")}));
  Run("a");
  Run("b");
  Run("c");
  const uint64_t rev = store_->CurrentRevision();
  auto r = store_->RecordDecisions(
      {testing::Decide("a", DecisionKind::kRequeue, v1::JOB_STATE_RUNNING,
                       "drain", 3),
       testing::Decide("b", DecisionKind::kTimeout, v1::JOB_STATE_RUNNING,
                       "max_duration", 3),
       testing::Decide("c", DecisionKind::kCancel, v1::JOB_STATE_RUNNING,
                       "operator", 3),
       testing::Decide("q", DecisionKind::kReject, v1::JOB_STATE_QUEUED,
                       "never fits", 3, v1::REJECT_REASON_NEVER_FITS)},
      T0());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(store_->GetJob("a")->stop_intent, StopIntent::kRequeue);
  EXPECT_EQ(store_->GetJob("b")->stop_intent, StopIntent::kTimeout);
  EXPECT_EQ(store_->GetJob("c")->stop_intent, StopIntent::kCancel);
  EXPECT_EQ(StateOf("q"), v1::JOB_STATE_REJECTED);
  EXPECT_EQ(store_->GetJob("q")->job.reject_reason(),
            v1::REJECT_REASON_NEVER_FITS);
  EXPECT_EQ(store_->CurrentRevision(), rev + 1);  // only q changed state
  EXPECT_EQ((*r)[0].revision, 0u);
  // Requeue from QUEUED makes no sense.
  Apply(Snapshot(2, {Spec("a"), Spec("b"), Spec("c"), Spec("n")}));
  EXPECT_EQ(store_
                ->RecordDecisions({testing::Decide("n", DecisionKind::kRequeue,
                                                   v1::JOB_STATE_QUEUED)},
                                  T0())
                .status()
                .code(),
            absl::StatusCode::kFailedPrecondition);
  // The requeue completes: back to QUEUED, counted, intent cleared.
  TransitionRequest t =
      testing::Tr("a", v1::JOB_STATE_RUNNING, v1::JOB_STATE_QUEUED);
  auto q = store_->Transition(t, T0());
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(q->job.requeue_count(), 1);
  EXPECT_EQ(q->stop_intent, StopIntent::kNone);
  EXPECT_TRUE(q->job.container_id().empty());
}

// Each ended attempt is kept in the record (Job.attempts) with what ended
// it; the requeue decision keeps its cause.
TEST_P(StoreTest, EndedAttemptsAreKeptWithTheirCause) {
  Apply(Snapshot(1, {Spec("a")}));
  Run("a");  // admitted and running
  EXPECT_EQ(store_->GetJob("a")->job.attempt(), 1);
  DecisionRequest d = testing::Decide("a", DecisionKind::kRequeue, v1::JOB_STATE_RUNNING,
                                      "drain: kernel upgrade");
  d.requeue_cause = v1::REQUEUE_CAUSE_DRAIN;
  ASSERT_TRUE(store_->RecordDecisions({d}, T0()).ok());
  auto log = store_->DecisionsForJob("a");
  ASSERT_TRUE(log.ok());
  EXPECT_EQ(log->back().requeue_cause, v1::REQUEUE_CAUSE_DRAIN);
  TransitionRequest t = testing::Tr("a", v1::JOB_STATE_RUNNING, v1::JOB_STATE_QUEUED);
  t.exit_code = 143;
  t.message = "requeued: drain: kernel upgrade";
  t.requeue_cause = v1::REQUEUE_CAUSE_DRAIN;
  t.container_id = "c1";
  t.stdout_log_bytes = 12;
  t.stderr_log_bytes = 3;
  auto q = store_->Transition(t, T0() + absl::Seconds(5));
  ASSERT_TRUE(q.ok()) << q.status();
  ASSERT_EQ(q->job.attempts_size(), 1);
  const v1::Attempt& first = q->job.attempts(0);
  EXPECT_EQ(first.number(), 1);
  EXPECT_EQ(first.outcome(), v1::JOB_STATE_QUEUED);
  EXPECT_EQ(first.requeue_cause(), v1::REQUEUE_CAUSE_DRAIN);
  EXPECT_EQ(first.exit_code(), 143);
  EXPECT_TRUE(first.has_exit_code());
  EXPECT_EQ(first.message(), "requeued: drain: kernel upgrade");
  EXPECT_EQ(first.container_id(), "c1");
  EXPECT_TRUE(first.has_admitted_at());
  EXPECT_TRUE(first.has_started_at());
  EXPECT_EQ(first.finished_at().seconds(), absl::ToUnixSeconds(T0()) + 5);
  EXPECT_TRUE(first.log_kept());
  EXPECT_EQ(first.stdout_log_bytes(), 12);
  EXPECT_EQ(first.stderr_log_bytes(), 3);
  EXPECT_EQ(q->job.attempt(), 1);  // until admitted again
  // The second attempt fails; both are kept, as read back.
  Admit("a");
  EXPECT_EQ(store_->GetJob("a")->job.attempt(), 2);
  TransitionRequest f = testing::Tr("a", v1::JOB_STATE_ADMITTED, v1::JOB_STATE_FAILED);
  f.failure_cause = v1::FAILURE_CAUSE_START_FAILED;
  ASSERT_TRUE(store_->Transition(f, T0()).ok());
  auto a = store_->GetJob("a");
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(a->job.attempts_size(), 2);
  EXPECT_EQ(a->job.attempts(1).number(), 2);
  EXPECT_EQ(a->job.attempts(1).outcome(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(a->job.attempts(1).failure_cause(), v1::FAILURE_CAUSE_START_FAILED);
  EXPECT_FALSE(a->job.attempts(1).has_started_at());
  EXPECT_FALSE(a->job.attempts(1).log_kept());
}

TEST_P(StoreTest, TransitionIsCompareAndSet) {
  Apply(Snapshot(1, {Spec("a")}));
  Admit("a");
  TransitionRequest t =
      testing::Tr("a", v1::JOB_STATE_ADMITTED, v1::JOB_STATE_RUNNING);
  t.container_id = "abc123";
  auto r = store_->Transition(t, T0() + absl::Seconds(1));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->job.container_id(), "abc123");
  EXPECT_EQ(r->job.started_at().seconds(), absl::ToUnixSeconds(T0()) + 1);
  // The same transition again is stale.
  const uint64_t rev = store_->CurrentRevision();
  EXPECT_EQ(store_->Transition(t, T0()).status().code(),
            absl::StatusCode::kFailedPrecondition);
  TransitionRequest unknown =
      testing::Tr("nope", v1::JOB_STATE_ADMITTED, v1::JOB_STATE_RUNNING);
  EXPECT_EQ(store_->Transition(unknown, T0()).status().code(),
            absl::StatusCode::kNotFound);
  TransitionRequest illegal =
      testing::Tr("a", v1::JOB_STATE_RUNNING, v1::JOB_STATE_ADMITTED);
  EXPECT_EQ(store_->Transition(illegal, T0()).status().code(),
            absl::StatusCode::kInvalidArgument);
  TransitionRequest from_terminal =
      testing::Tr("a", v1::JOB_STATE_SUCCEEDED, v1::JOB_STATE_RUNNING);
  EXPECT_EQ(store_->Transition(from_terminal, T0()).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->CurrentRevision(), rev);

  TransitionRequest fail =
      testing::Tr("a", v1::JOB_STATE_RUNNING, v1::JOB_STATE_FAILED);
  fail.failure_cause = v1::FAILURE_CAUSE_OOM_KILLED;
  fail.exit_code = 137;
  fail.message = "OOM killed";
  fail.logs_tail = "Killed";
  r = store_->Transition(fail, T0() + absl::Seconds(2));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->job.failure_cause(), v1::FAILURE_CAUSE_OOM_KILLED);
  EXPECT_TRUE(r->job.has_exit_code());
  EXPECT_EQ(r->job.exit_code(), 137);
  EXPECT_EQ(r->job.container_id(), "abc123");
  std::vector<v1::Event> ev = AllEvents();
  const v1::Event& last = ev.back();
  EXPECT_EQ(last.revision(), r->job.revision());
  EXPECT_EQ(last.previous_state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(last.state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(last.failure_cause(), v1::FAILURE_CAUSE_OOM_KILLED);
  EXPECT_EQ(last.exit_code(), 137);
  EXPECT_EQ(last.message(), "OOM killed");
  EXPECT_EQ(store_->GetJob("a")->job.SerializeAsString(),
            r->job.SerializeAsString());
}

// A requeued job's next attempt does not carry the killed attempt's exit
// code: ADMITTED and RUNNING have none.
TEST_P(StoreTest, RequeuedAttemptDropsTheOldExitCode) {
  Apply(Snapshot(1, {Spec("a")}));
  Run("a");
  TransitionRequest requeue = testing::Tr("a", v1::JOB_STATE_RUNNING, v1::JOB_STATE_QUEUED);
  requeue.exit_code = 143;
  ASSERT_TRUE(store_->Transition(requeue, T0()).ok());
  EXPECT_EQ(store_->GetJob("a")->job.exit_code(), 143);  // the QUEUED record says why
  const uint64_t before = store_->CurrentRevision();
  Run("a");
  auto job = store_->GetJob("a");
  ASSERT_TRUE(job.ok());
  EXPECT_FALSE(job->job.has_exit_code());
  EXPECT_EQ(job->job.exit_code(), 0);
  int seen = 0;
  for (const v1::Event& e : AllEvents()) {
    if (e.revision() <= before || e.job_id() != "a") continue;
    ++seen;
    EXPECT_FALSE(e.has_exit_code()) << e.DebugString();
    EXPECT_EQ(e.exit_code(), 0) << e.DebugString();
  }
  EXPECT_EQ(seen, 2);  // ADMITTED, RUNNING
}

TEST_P(StoreTest, MetaChangesAreEvents) {
  v1::Budgets b;
  b.set_memory_bytes(128LL << 30);
  b.set_cpu_millis(32000);
  b.set_max_workers(24);
  (*b.mutable_pools())["database"].set_max_workers(2);
  auto rev = store_->SetBudgets(b, T0());
  ASSERT_TRUE(rev.ok());
  EXPECT_EQ(*rev, 1u);
  auto got = store_->GetBudgets();
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->SerializeAsString(), b.SerializeAsString());

  auto cs = store_->SetPaused(true, "reboot", T0());
  ASSERT_TRUE(cs.ok());
  EXPECT_TRUE(cs->paused());
  EXPECT_EQ(cs->pause_reason(), "reboot");
  EXPECT_EQ(store_->CurrentRevision(), 2u);
  ASSERT_TRUE(store_->SetPaused(true, "reboot", T0()).ok());  // idempotent
  EXPECT_EQ(store_->CurrentRevision(), 2u);
  // Another reason replaces the old one, with an event saying so.
  ASSERT_TRUE(store_->SetPaused(true, "again", T0()).ok());
  EXPECT_EQ(store_->CurrentRevision(), 3u);
  EXPECT_EQ(store_->GetControlState().pause_reason(), "again");
  cs = store_->SetPoolMaintenance("database", true, "upgrade", T0());
  ASSERT_TRUE(cs.ok());
  EXPECT_THAT(cs->pools_in_maintenance(), ElementsAre("database"));
  EXPECT_EQ(cs->maintenance_reasons().at("database"), "upgrade");
  // The same reason again changes nothing; a new one replaces it, with an
  // event saying so.
  const uint64_t before = store_->CurrentRevision();
  ASSERT_TRUE(store_->SetPoolMaintenance("database", true, "upgrade", T0()).ok());
  EXPECT_EQ(store_->CurrentRevision(), before);
  cs = store_->SetPoolMaintenance("database", true, "db upgrade", T0());
  ASSERT_TRUE(cs.ok());
  EXPECT_EQ(cs->maintenance_reasons().at("database"), "db upgrade");
  EXPECT_EQ(store_->CurrentRevision(), before + 1);
  EXPECT_EQ(store_->SetPoolMaintenance("", true, "", T0()).status().code(),
            absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(store_->SetPoolMaintenance("database", false, "", T0()).ok());
  EXPECT_TRUE(store_->GetControlState().maintenance_reasons().empty());
  ASSERT_TRUE(store_->SetPaused(false, "", T0()).ok());
  std::vector<v1::Event> ev = AllEvents();
  ASSERT_EQ(ev.size(), 7u);
  EXPECT_EQ(ev[0].type(), v1::EVENT_TYPE_BUDGETS_CHANGED);
  EXPECT_EQ(ev[0].budgets().max_workers(), 24);
  EXPECT_EQ(ev[1].type(), v1::EVENT_TYPE_PAUSED);
  EXPECT_EQ(ev[1].message(), "reboot");
  EXPECT_EQ(ev[2].type(), v1::EVENT_TYPE_PAUSED);
  EXPECT_EQ(ev[2].message(), "again");
  EXPECT_EQ(ev[3].type(), v1::EVENT_TYPE_POOL_MAINTENANCE_CHANGED);
  EXPECT_TRUE(ev[3].in_maintenance());
  EXPECT_EQ(ev[3].message(), "upgrade");
  EXPECT_EQ(ev[4].type(), v1::EVENT_TYPE_POOL_MAINTENANCE_CHANGED);
  EXPECT_TRUE(ev[4].in_maintenance());
  EXPECT_EQ(ev[4].message(), "db upgrade");
  EXPECT_EQ(ev[5].pool(), "database");
  EXPECT_FALSE(ev[5].in_maintenance());
  EXPECT_EQ(ev[6].type(), v1::EVENT_TYPE_RESUMED);
  EXPECT_FALSE(store_->GetControlState().paused());
}

}  // namespace
}  // namespace berth
