// The Store contract, run against every implementation (RocksStore and the
// MemoryStore fake): one parameterised suite.
#include "executor/store.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "executor/memory_store.h"
#include "executor/rocks_store.h"
#include "executor/spec_fingerprint.h"
#include "executor/store_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

using ::berth::testing::Snapshot;
using ::berth::testing::Spec;
using ::berth::testing::T0;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
namespace v1 = ::berth::v1;

struct Backend {
  std::string name;
  std::function<std::unique_ptr<Store>(const RetentionOptions&)> make;
};

void PrintTo(const Backend& b, std::ostream* os) { *os << b.name; }

class StoreTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override { store_ = GetParam().make(retention_); }

  void Reset(const RetentionOptions& retention) {
    store_.reset();
    store_ = GetParam().make(retention);
  }

  // Applies `snapshot` and expects OK.
  SnapshotResult Apply(SnapshotRequest snapshot) {
    auto r = store_->ApplySnapshot(snapshot, T0());
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : SnapshotResult{};
  }

  void Admit(const std::string& id) {
    DecisionRequest d = testing::Decide(id, DecisionKind::kAdmit,
                                        v1::JOB_STATE_QUEUED, "fits", 1);
    auto r = store_->RecordDecisions({d}, T0());
    ASSERT_TRUE(r.ok()) << r.status();
  }

  void Run(const std::string& id) {
    Admit(id);
    TransitionRequest t;
    t.job_id = id;
    t.expected_state = v1::JOB_STATE_ADMITTED;
    t.new_state = v1::JOB_STATE_RUNNING;
    t.container_id = "c-" + id;
    auto r = store_->Transition(t, T0());
    ASSERT_TRUE(r.ok()) << r.status();
  }

  v1::JobState StateOf(const std::string& id) {
    auto j = store_->GetJob(id);
    EXPECT_TRUE(j.ok()) << j.status();
    return j.ok() ? j->job.state() : v1::JOB_STATE_UNSPECIFIED;
  }

  std::vector<v1::Event> AllEvents() {
    auto p = store_->ReadEvents(store_->OldestRevision() - 1, 10000);
    EXPECT_TRUE(p.ok()) << p.status();
    return p.ok() ? p->events : std::vector<v1::Event>{};
  }

  RetentionOptions retention_;
  std::unique_ptr<Store> store_;
};

TEST_P(StoreTest, EmptyStore) {
  EXPECT_EQ(store_->CurrentRevision(), 0u);
  EXPECT_EQ(store_->OldestRevision(), 1u);
  EXPECT_EQ(store_->LastAppliedGeneration(), 0u);
  EXPECT_EQ(store_->GetJob("x").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->GetBudgets().status().code(), absl::StatusCode::kNotFound);
  EXPECT_FALSE(store_->GetControlState().paused());
  auto p = store_->ReadEvents(0, 10);
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->events.empty());
}

TEST_P(StoreTest, NewJobsAreQueuedWithOneEventEach) {
  SnapshotResult r = Apply(Snapshot(1, {Spec("a"), Spec("b", 2), Spec("c")}));
  EXPECT_EQ(r.response.added(), 3);
  EXPECT_EQ(r.response.revision(), 4u);
  EXPECT_EQ(r.job_writes, 3);
  EXPECT_FALSE(r.response.already_applied());
  EXPECT_EQ(store_->LastAppliedGeneration(), 1u);
  std::vector<v1::Event> ev = AllEvents();
  ASSERT_EQ(ev.size(), 4u);
  for (size_t i = 0; i < ev.size(); ++i) EXPECT_EQ(ev[i].revision(), i + 1);
  EXPECT_EQ(ev[0].type(), v1::EVENT_TYPE_JOB_STATE_CHANGED);
  EXPECT_EQ(ev[0].previous_state(), v1::JOB_STATE_UNSPECIFIED);
  EXPECT_EQ(ev[0].state(), v1::JOB_STATE_QUEUED);
  EXPECT_EQ(ev[3].type(), v1::EVENT_TYPE_SNAPSHOT_APPLIED);
  EXPECT_EQ(ev[3].generation(), 1u);
  auto b = store_->GetJob("b");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->job.state(), v1::JOB_STATE_QUEUED);
  EXPECT_EQ(b->job.spec().priority(), 2);
  EXPECT_EQ(b->job.revision(), 2u);
  EXPECT_EQ(b->job.last_seen_generation(), 1u);
  EXPECT_TRUE(b->job.has_queued_at());
  EXPECT_EQ(store_->JobsInState(v1::JOB_STATE_QUEUED).size(), 3u);
}

TEST_P(StoreTest, SameGenerationIsIdempotentAndWritesNothing) {
  Apply(Snapshot(1, {Spec("a")}));
  const uint64_t rev = store_->CurrentRevision();
  SnapshotResult r = Apply(Snapshot(1, {Spec("zzz")}));
  EXPECT_TRUE(r.response.already_applied());
  EXPECT_EQ(r.response.revision(), rev);
  EXPECT_EQ(r.job_writes, 0);
  EXPECT_EQ(store_->CurrentRevision(), rev);
  EXPECT_EQ(store_->GetJob("zzz").status().code(), absl::StatusCode::kNotFound);
}

TEST_P(StoreTest, DryRunReportsTheDiffAndWritesNothing) {
  Apply(Snapshot(1, {Spec("a"), Spec("b"), Spec("c")}));
  Run("c");
  const uint64_t rev = store_->CurrentRevision();
  SnapshotRequest dry = Snapshot(2, {Spec("a", 7), Spec("d")});
  dry.options.allow_mass_cancel = true;
  dry.dry_run = true;
  auto r = store_->ApplySnapshot(dry, T0());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->response.added(), 1);
  EXPECT_EQ(r->response.updated(), 1);
  EXPECT_EQ(r->response.cancelled(), 2);
  EXPECT_EQ(r->cancelled_ids, std::vector<std::string>{"b"});
  EXPECT_EQ(r->stop_requested_ids, std::vector<std::string>{"c"});
  EXPECT_EQ(r->response.revision(), rev);
  // Nothing changed.
  EXPECT_EQ(store_->CurrentRevision(), rev);
  EXPECT_EQ(store_->LastAppliedGeneration(), 1u);
  EXPECT_EQ(StateOf("b"), v1::JOB_STATE_QUEUED);
  EXPECT_EQ(store_->GetJob("d").status().code(), absl::StatusCode::kNotFound);
  auto c = store_->GetJob("c");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->stop_intent, StopIntent::kNone);
  // The same checks as a real apply: the mass-cancel guard still refuses.
  dry.options.allow_mass_cancel = false;
  dry.jobs = {Spec("a")};
  EXPECT_EQ(store_->ApplySnapshot(dry, T0()).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_P(StoreTest, OlderGenerationIsRefused) {
  Apply(Snapshot(5, {Spec("a")}));
  auto r = store_->ApplySnapshot(Snapshot(4, {}), T0());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(StateOf("a"), v1::JOB_STATE_QUEUED);
  EXPECT_EQ(store_->LastAppliedGeneration(), 5u);
}

TEST_P(StoreTest, InvalidSnapshotsAreRefused) {
  EXPECT_EQ(
      store_->ApplySnapshot(Snapshot(0, {Spec("a")}), T0()).status().code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->ApplySnapshot(Snapshot(1, {Spec("a"), Spec("a")}), T0())
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  SnapshotRequest dup = Snapshot(1, {Spec("a")});
  dup.rejected.push_back({Spec("a"), {}});
  EXPECT_EQ(store_->ApplySnapshot(dup, T0()).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->CurrentRevision(), 0u);
  // Repeated known ids too; an abandoned pass leaves no trace.
  Apply(Snapshot(1, {Spec("a"), Spec("b")}));
  const uint64_t rev = store_->CurrentRevision();
  EXPECT_EQ(
      store_
          ->ApplySnapshot(Snapshot(2, {Spec("a"), Spec("b"), Spec("a")}), T0())
          .status()
          .code(),
      absl::StatusCode::kInvalidArgument);
  SnapshotRequest known_dup = Snapshot(2, {Spec("b", 5)});
  known_dup.rejected.push_back({Spec("b"), {}});
  EXPECT_EQ(store_->ApplySnapshot(known_dup, T0()).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->CurrentRevision(), rev);
  EXPECT_EQ(store_->GetJob("b")->job.spec().priority(), 0);
  SnapshotResult ok = Apply(Snapshot(2, {Spec("b")}));
  EXPECT_EQ(ok.response.unchanged(), 1);
  EXPECT_EQ(ok.cancelled_ids, std::vector<std::string>{"a"});
}

TEST_P(StoreTest, UnchangedJobsAreNotRewritten) {
  Apply(Snapshot(1, {Spec("a"), Spec("b"), Spec("c")}));
  const uint64_t rev = store_->CurrentRevision();
  SnapshotResult r = Apply(Snapshot(2, {Spec("a"), Spec("b"), Spec("c")}));
  EXPECT_EQ(r.response.unchanged(), 3);
  EXPECT_EQ(r.response.added() + r.response.updated(), 0);
  EXPECT_EQ(r.job_writes, 0);
  EXPECT_EQ(store_->CurrentRevision(), rev + 1);  // SNAPSHOT_APPLIED only
  auto a = store_->GetJob("a");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->job.last_seen_generation(), 1u);  // not rewritten
}

TEST_P(StoreTest, QueuedJobSpecIsUpdated) {
  Apply(Snapshot(1, {Spec("a"), Spec("b")}));
  v1::JobSpec a2 = Spec("a", 3, 2LL << 30);
  a2.set_image("registry.example/job-runner:v4");
  SnapshotResult r = Apply(Snapshot(2, {a2, Spec("b")}));
  EXPECT_EQ(r.response.updated(), 1);
  EXPECT_EQ(r.response.unchanged(), 1);
  EXPECT_EQ(r.job_writes, 1);
  auto a = store_->GetJob("a");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->job.spec().priority(), 3);
  EXPECT_EQ(a->job.spec().image(), "registry.example/job-runner:v4");
  EXPECT_EQ(a->job.last_seen_generation(), 2u);
  std::vector<v1::Event> ev = AllEvents();
  ASSERT_GE(ev.size(), 2u);
  const v1::Event& upd = ev[ev.size() - 2];
  EXPECT_EQ(upd.type(), v1::EVENT_TYPE_JOB_SPEC_UPDATED);
  EXPECT_EQ(upd.job_id(), "a");
  EXPECT_THAT(upd.message(), HasSubstr("image"));
  EXPECT_EQ(a->job.revision(), upd.revision());
}

TEST_P(StoreTest, RunningJobTakesOnlyPriority) {
  Apply(Snapshot(1, {Spec("a"), Spec("b")}));
  Run("a");
  v1::JobSpec a2 = Spec("a", 7);
  a2.set_image("other:v1");
  a2.mutable_resources()->set_cpu_millis(4000);
  SnapshotResult r = Apply(Snapshot(2, {a2, Spec("b")}));
  EXPECT_EQ(r.response.updated(), 1);
  ASSERT_EQ(r.response.ignored_size(), 1);
  EXPECT_EQ(r.response.ignored(0).job_id(), "a");
  EXPECT_THAT(r.response.ignored(0).fields(),
              ElementsAre("image", "resources.cpu_millis"));
  auto a = store_->GetJob("a");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->job.state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(a->job.spec().priority(), 7);
  EXPECT_EQ(a->job.spec().image(), "registry.example/job-runner:v3");
  EXPECT_EQ(a->job.spec().resources().cpu_millis(), 1000);

  // Only ignored differences: reported, not written.
  a2.set_priority(7);
  r = Apply(Snapshot(3, {a2, Spec("b")}));
  EXPECT_EQ(r.response.updated(), 0);
  EXPECT_EQ(r.response.ignored_size(), 1);
  EXPECT_EQ(r.job_writes, 0);
}

TEST_P(StoreTest, AbsentQueuedJobsAreCancelledAtOnce) {
  Apply(Snapshot(1, {Spec("a"), Spec("b")}));
  SnapshotResult r = Apply(Snapshot(2, {Spec("b")}));
  EXPECT_EQ(r.response.cancelled(), 1);
  EXPECT_THAT(r.cancelled_ids, ElementsAre("a"));
  auto a = store_->GetJob("a");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->job.state(), v1::JOB_STATE_CANCELLED);
  EXPECT_THAT(a->job.message(), HasSubstr("absent from snapshot generation 2"));
  EXPECT_TRUE(a->job.has_finished_at());
  auto d = store_->DecisionsForJob("a");
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->size(), 1u);
  EXPECT_EQ((*d)[0].kind, DecisionKind::kCancel);
  EXPECT_EQ((*d)[0].plan_generation, 2u);
  EXPECT_EQ((*d)[0].revision, a->job.revision());
}

TEST_P(StoreTest, AbsentRunningJobsGetAStopIntent) {
  Apply(Snapshot(1, {Spec("a"), Spec("b"), Spec("c")}));
  Run("a");
  Run("b");
  SnapshotResult r = Apply(Snapshot(2, {Spec("b"), Spec("c")}));
  EXPECT_EQ(r.response.cancelled(), 1);
  EXPECT_THAT(r.stop_requested_ids, ElementsAre("a"));
  EXPECT_TRUE(r.cancelled_ids.empty());
  auto a = store_->GetJob("a");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->job.state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(a->stop_intent, StopIntent::kCancel);
  // The reconciler stops it and finalises it; the intent is cleared.
  TransitionRequest t;
  t.job_id = "a";
  t.expected_state = v1::JOB_STATE_RUNNING;
  t.new_state = v1::JOB_STATE_CANCELLED;
  t.exit_code = 137;
  t.logs_tail = "bye";
  auto done = store_->Transition(t, T0());
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->stop_intent, StopIntent::kNone);
  EXPECT_EQ(done->job.logs_tail(), "bye");
  // A later snapshot without it does not ask again.
  r = Apply(Snapshot(3, {Spec("b"), Spec("c")}));
  EXPECT_EQ(r.response.cancelled(), 0);
  EXPECT_EQ(r.job_writes, 0);
}

TEST_P(StoreTest, MassCancelGuard) {
  Apply(Snapshot(1, {Spec("a"), Spec("b"), Spec("c")}));
  Run("a");
  Run("b");
  const uint64_t rev = store_->CurrentRevision();
  auto r = store_->ApplySnapshot(Snapshot(2, {Spec("c")}), T0());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(r.status().message(), HasSubstr("allow_mass_cancel"));
  EXPECT_EQ(store_->CurrentRevision(), rev);
  EXPECT_EQ(store_->LastAppliedGeneration(), 1u);
  EXPECT_EQ(store_->GetJob("a")->stop_intent, StopIntent::kNone);

  SnapshotRequest allowed = Snapshot(2, {Spec("c")});
  allowed.options.allow_mass_cancel = true;
  SnapshotResult ok = Apply(allowed);
  EXPECT_EQ(ok.response.cancelled(), 2);

  // A higher fraction lets the same shape through.
  Apply(Snapshot(3, {Spec("c"), Spec("d"), Spec("e")}));
  Run("d");
  Run("e");
  SnapshotRequest loose = Snapshot(4, {Spec("c")});
  loose.options.max_cancel_fraction = 1.0;
  EXPECT_EQ(Apply(loose).stop_requested_ids.size(), 2u);
}

TEST_P(StoreTest, TerminalJobsAreNotRerun) {
  Apply(Snapshot(1, {Spec("a")}));
  Run("a");
  TransitionRequest t =
      testing::Tr("a", v1::JOB_STATE_RUNNING, v1::JOB_STATE_SUCCEEDED);
  t.exit_code = 0;
  ASSERT_TRUE(store_->Transition(t, T0()).ok());
  v1::JobSpec changed = Spec("a", 9);
  SnapshotResult r = Apply(Snapshot(2, {changed}));
  EXPECT_EQ(r.response.terminal_unchanged(), 1);
  EXPECT_EQ(r.response.added() + r.response.updated(), 0);
  EXPECT_EQ(r.job_writes, 0);
  EXPECT_EQ(StateOf("a"), v1::JOB_STATE_SUCCEEDED);
  // Absent terminal jobs are not cancelled either.
  r = Apply(Snapshot(3, {}));
  EXPECT_EQ(r.response.cancelled(), 0);
  EXPECT_EQ(StateOf("a"), v1::JOB_STATE_SUCCEEDED);
}

TEST_P(StoreTest, RejectedJobsAreRecorded) {
  SnapshotRequest s = Snapshot(1, {Spec("a")});
  v1::JobRejection rej;
  rej.set_reason(v1::REJECT_REASON_IMAGE_NOT_ALLOWED);
  rej.set_field("image");
  rej.set_message("image 'evil:latest' does not match the allow-list");
  s.rejected.push_back({Spec("x"), rej});
  SnapshotResult r = Apply(s);
  EXPECT_EQ(r.response.rejected(), 1);
  ASSERT_EQ(r.response.rejections_size(), 1);
  EXPECT_EQ(r.response.rejections(0).job_id(), "x");
  EXPECT_EQ(r.response.rejections(0).field(), "image");
  auto x = store_->GetJob("x");
  ASSERT_TRUE(x.ok());
  EXPECT_EQ(x->job.state(), v1::JOB_STATE_REJECTED);
  EXPECT_EQ(x->job.reject_reason(), v1::REJECT_REASON_IMAGE_NOT_ALLOWED);
  EXPECT_THAT(x->job.message(), HasSubstr("allow-list"));
  auto d = store_->DecisionsForJob("x");
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->size(), 1u);
  EXPECT_EQ((*d)[0].kind, DecisionKind::kReject);
  // A known queued job whose new spec is invalid keeps its old spec and is
  // not cancelled.
  SnapshotRequest s2 = Snapshot(2, {});
  s2.rejected.push_back({Spec("a", 5), rej});
  r = Apply(s2);
  EXPECT_EQ(r.response.rejections_size(), 1);
  EXPECT_EQ(r.response.rejected(), 0);
  EXPECT_EQ(r.response.cancelled(), 0);
  EXPECT_EQ(StateOf("a"), v1::JOB_STATE_QUEUED);
  EXPECT_EQ(store_->GetJob("a")->job.spec().priority(), 0);
}

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
  ASSERT_TRUE(store_->SetPaused(true, "again", T0()).ok());  // idempotent
  EXPECT_EQ(store_->CurrentRevision(), 2u);
  EXPECT_EQ(store_->GetControlState().pause_reason(), "reboot");
  cs = store_->SetPoolMaintenance("database", true, "upgrade", T0());
  ASSERT_TRUE(cs.ok());
  EXPECT_THAT(cs->pools_in_maintenance(), ElementsAre("database"));
  EXPECT_EQ(store_->SetPoolMaintenance("", true, "", T0()).status().code(),
            absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(store_->SetPoolMaintenance("database", false, "", T0()).ok());
  ASSERT_TRUE(store_->SetPaused(false, "", T0()).ok());
  std::vector<v1::Event> ev = AllEvents();
  ASSERT_EQ(ev.size(), 5u);
  EXPECT_EQ(ev[0].type(), v1::EVENT_TYPE_BUDGETS_CHANGED);
  EXPECT_EQ(ev[0].budgets().max_workers(), 24);
  EXPECT_EQ(ev[1].type(), v1::EVENT_TYPE_PAUSED);
  EXPECT_EQ(ev[2].type(), v1::EVENT_TYPE_POOL_MAINTENANCE_CHANGED);
  EXPECT_TRUE(ev[2].in_maintenance());
  EXPECT_EQ(ev[3].pool(), "database");
  EXPECT_FALSE(ev[3].in_maintenance());
  EXPECT_EQ(ev[4].type(), v1::EVENT_TYPE_RESUMED);
  EXPECT_FALSE(store_->GetControlState().paused());
}

TEST_P(StoreTest, ReadEventsPagesAndBounds) {
  std::vector<v1::JobSpec> jobs;
  for (int i = 0; i < 25; ++i) jobs.push_back(Spec("j" + std::to_string(i)));
  Apply(Snapshot(1, jobs));  // revisions 1..26
  auto p = store_->ReadEvents(0, 10);
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(p->events.size(), 10u);
  EXPECT_EQ(p->events.front().revision(), 1u);
  EXPECT_EQ(p->current_revision, 26u);
  p = store_->ReadEvents(20, 10);
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(p->events.size(), 6u);
  EXPECT_EQ(p->events.front().revision(), 21u);
  p = store_->ReadEvents(26, 10);
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->events.empty());
  EXPECT_EQ(store_->ReadEvents(27, 10).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->ReadEvents(0, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_P(StoreTest, EventRetentionByCountGivesOutOfRange) {
  RetentionOptions r;
  r.max_events = 5;
  Reset(r);
  std::vector<v1::JobSpec> jobs;
  for (int i = 0; i < 9; ++i) jobs.push_back(Spec("j" + std::to_string(i)));
  Apply(Snapshot(1, jobs));  // revisions 1..10
  auto stats = store_->Compact(T0());
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->events_deleted, 5);
  EXPECT_EQ(store_->OldestRevision(), 6u);
  EXPECT_EQ(store_->CurrentRevision(), 10u);
  auto below = store_->ReadEvents(4, 10);
  EXPECT_EQ(below.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(below.status().message(),
              HasSubstr("oldest retained revision is 6"));
  EXPECT_THAT(below.status().message(), HasSubstr("current revision is 10"));
  auto at = store_->ReadEvents(5, 100);
  ASSERT_TRUE(at.ok()) << at.status();
  ASSERT_EQ(at->events.size(), 5u);
  EXPECT_EQ(at->events.front().revision(), 6u);
  // New events continue the sequence.
  ASSERT_TRUE(store_->SetPaused(true, "", T0()).ok());
  EXPECT_EQ(store_->CurrentRevision(), 11u);
}

TEST_P(StoreTest, EventRetentionByAge) {
  RetentionOptions r;
  r.max_event_age = absl::Hours(1);
  Reset(r);
  ASSERT_TRUE(store_->SetPaused(true, "", T0()).ok());
  ASSERT_TRUE(store_->SetPaused(false, "", T0() + absl::Minutes(30)).ok());
  ASSERT_TRUE(store_->SetPaused(true, "", T0() + absl::Minutes(90)).ok());
  auto stats = store_->Compact(T0() + absl::Minutes(100));
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->events_deleted, 2);  // T0 and T0+30m are > 1h old
  EXPECT_EQ(store_->OldestRevision(), 3u);
  stats = store_->Compact(T0() + absl::Hours(10));
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->events_deleted, 1);
  EXPECT_EQ(store_->OldestRevision(), 4u);  // none retained
  EXPECT_EQ(store_->ReadEvents(3, 10)->events.size(), 0u);
  EXPECT_EQ(store_->ReadEvents(2, 10).status().code(),
            absl::StatusCode::kOutOfRange);
}

TEST_P(StoreTest, TerminalJobsAreCompactedAfterRetention) {
  RetentionOptions r;
  r.terminal_job_retention = absl::Hours(24);
  Reset(r);
  Apply(Snapshot(1, {Spec("a"), Spec("b")}));
  Apply(Snapshot(2, {Spec("b")}));  // a cancelled at T0
  ASSERT_EQ(StateOf("a"), v1::JOB_STATE_CANCELLED);
  auto stats = store_->Compact(T0() + absl::Hours(23));
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->jobs_deleted, 0);
  stats = store_->Compact(T0() + absl::Hours(25));
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->jobs_deleted, 1);
  EXPECT_EQ(store_->GetJob("a").status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(store_->DecisionsForJob("a")->empty());
  EXPECT_EQ(StateOf("b"), v1::JOB_STATE_QUEUED);  // not terminal: kept
  EXPECT_TRUE(store_->JobsInState(v1::JOB_STATE_CANCELLED).empty());
}

TEST_P(StoreTest, ListJobsFiltersAndPages) {
  std::vector<v1::JobSpec> jobs;
  for (int i = 0; i < 30; ++i) {
    v1::JobSpec s =
        Spec("j" + std::string(i < 10 ? "0" : "") + std::to_string(i));
    s.set_workspace(i % 2 == 0 ? "even" : "odd");
    if (i % 3 == 0) s.set_pool("database");
    if (i % 5 == 0) s.clear_pool();  // "" means default
    jobs.push_back(s);
  }
  Apply(Snapshot(1, jobs));
  for (const char* id : {"j01", "j04", "j17", "j22"}) Run(id);

  JobFilter f;
  f.page_size = 7;
  std::vector<std::string> ids;
  for (int pages = 0; pages < 10; ++pages) {
    auto p = store_->ListJobs(f);
    ASSERT_TRUE(p.ok()) << p.status();
    for (const auto& j : p->jobs) ids.push_back(j.job.spec().id());
    if (p->next_page_token.empty()) break;
    f.page_token = p->next_page_token;
  }
  ASSERT_EQ(ids.size(), 30u);
  EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));

  JobFilter running;
  running.states = {v1::JOB_STATE_RUNNING};
  running.page_size = 3;
  auto p = store_->ListJobs(running);
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(p->jobs.size(), 3u);
  EXPECT_EQ(p->jobs[2].job.spec().id(), "j17");
  running.page_token = p->next_page_token;
  p = store_->ListJobs(running);
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(p->jobs.size(), 1u);
  EXPECT_EQ(p->jobs[0].job.spec().id(), "j22");
  EXPECT_TRUE(p->next_page_token.empty());

  JobFilter mixed;
  mixed.states = {v1::JOB_STATE_RUNNING, v1::JOB_STATE_QUEUED};
  mixed.workspace = "even";
  mixed.pool = "default";
  p = store_->ListJobs(mixed);
  ASSERT_TRUE(p.ok());
  for (const auto& j : p->jobs) {
    EXPECT_EQ(j.job.spec().workspace(), "even");
    EXPECT_NE(j.job.spec().pool(), "database");
  }
  // even & default-or-empty pool: i in {0,2,4,8,10,14,16,20,22,26,28} minus
  // multiples of 3 not of 5: 6,12,18,24 excluded; 0 is both (cleared => "").
  EXPECT_EQ(p->jobs.size(), 11u);

  JobFilter bad;
  bad.page_token = "garbage";
  EXPECT_EQ(store_->ListJobs(bad).status().code(),
            absl::StatusCode::kInvalidArgument);
  bad.page_token = "";
  bad.page_size = -1;
  EXPECT_EQ(store_->ListJobs(bad).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_P(StoreTest, JobsInStateUsesTheIndex) {
  Apply(Snapshot(1, {Spec("c"), Spec("a"), Spec("b")}));
  Run("b");
  std::vector<JobRecord> q = store_->JobsInState(v1::JOB_STATE_QUEUED);
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(q[0]->job.spec().id(), "a");
  EXPECT_EQ(q[1]->job.spec().id(), "c");
  std::vector<JobRecord> r = store_->JobsInState(v1::JOB_STATE_RUNNING);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0]->job.spec().id(), "b");
  EXPECT_TRUE(store_->JobsInState(v1::JOB_STATE_ADMITTED).empty());
}

// Fingerprints computed by the caller give the same diff as the store's own.
TEST_P(StoreTest, CallerFingerprints) {
  Apply(Snapshot(1, {Spec("a", 1), Spec("b", 1), Spec("c", 1)}));
  SnapshotRequest next = Snapshot(2, {Spec("a", 1), Spec("b", 5), Spec("d")});
  for (const v1::JobSpec& spec : next.jobs) {
    next.fingerprints.push_back(SpecFingerprint(spec));
  }
  SnapshotResult r = Apply(next);
  EXPECT_EQ(r.response.unchanged(), 1);
  EXPECT_EQ(r.response.updated(), 1);
  EXPECT_EQ(r.response.added(), 1);
  EXPECT_EQ(r.response.cancelled(), 1);
  EXPECT_EQ(store_->GetJob("b")->job.spec().priority(), 5);
}

TEST_P(StoreTest, FingerprintsOfTheWrongSizeChangeNothing) {
  Apply(Snapshot(1, {Spec("a")}));
  const uint64_t revision = store_->CurrentRevision();
  SnapshotRequest next = Snapshot(2, {Spec("a", 3), Spec("b")});
  next.fingerprints = {SpecFingerprint(next.jobs[0])};
  auto r = store_->ApplySnapshot(next, T0());
  ASSERT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("1 fingerprints for 2 jobs"));
  EXPECT_EQ(store_->CurrentRevision(), revision);
  EXPECT_EQ(store_->LastAppliedGeneration(), 1u);
  EXPECT_FALSE(store_->HasJob("b"));
}

#ifndef NDEBUG
// Debug builds check every given fingerprint: a stale one would hide a change.
TEST_P(StoreTest, WrongFingerprintIsCaughtInDebugBuilds) {
  Apply(Snapshot(1, {Spec("a", 1)}));
  SnapshotRequest next = Snapshot(2, {Spec("a", 2)});
  next.fingerprints = {SpecFingerprint(Spec("a", 1))};  // the old spec's
  auto r = store_->ApplySnapshot(next, T0());
  ASSERT_EQ(r.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(store_->GetJob("a")->job.spec().priority(), 1);
  EXPECT_EQ(store_->LastAppliedGeneration(), 1u);
}
#endif

// A record handed out is never modified: later changes publish new records.
TEST_P(StoreTest, HeldRecordsDoNotChange) {
  Apply(Snapshot(1, {Spec("a", 1), Spec("b", 1)}));
  std::vector<JobRecord> before = store_->JobsInState(v1::JOB_STATE_QUEUED);
  ASSERT_EQ(before.size(), 2u);
  const uint64_t revision_a = before[0]->job.revision();
  Apply(Snapshot(2, {Spec("a", 7), Spec("b", 1)}));  // a's priority changes
  Run("b");                                          // b changes state
  EXPECT_EQ(before[0]->job.spec().priority(), 1);
  EXPECT_EQ(before[0]->job.revision(), revision_a);
  EXPECT_EQ(before[1]->job.state(), v1::JOB_STATE_QUEUED);
  std::vector<JobRecord> after = store_->JobsInState(v1::JOB_STATE_QUEUED);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0]->job.spec().priority(), 7);
  EXPECT_GT(after[0]->job.revision(), revision_a);
}

TEST_P(StoreTest, RecordOrphanStopped) {
  Apply(Snapshot(1, {Spec("a")}));
  const uint64_t before = store_->CurrentRevision();
  auto rev = store_->RecordOrphanStopped("ghost", "c0ffee", "stopped", T0());
  ASSERT_TRUE(rev.ok()) << rev.status();
  EXPECT_EQ(*rev, before + 1);
  std::vector<v1::Event> events = AllEvents();
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().type(), v1::EVENT_TYPE_ORPHAN_STOPPED);
  EXPECT_EQ(events.back().job_id(), "ghost");
  EXPECT_EQ(events.back().container(), "c0ffee");
  EXPECT_FALSE(store_->HasJob("ghost"));
  auto bad = store_->RecordOrphanStopped("ghost", "", "", T0());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->CurrentRevision(), before + 1);
}

TEST_P(StoreTest, HasJob) {
  EXPECT_FALSE(store_->HasJob("a"));
  Apply(Snapshot(1, {Spec("a")}));
  EXPECT_TRUE(store_->HasJob("a"));
  EXPECT_FALSE(store_->HasJob("b"));
  Apply(Snapshot(2, {}));  // a is cancelled by absence: still known
  EXPECT_TRUE(store_->HasJob("a"));
}

TEST_P(StoreTest, AwaitRevision) {
  EXPECT_FALSE(store_->AwaitRevision(0, absl::ZeroDuration()));
  ASSERT_TRUE(store_->SetPaused(true, "", T0()).ok());
  EXPECT_TRUE(store_->AwaitRevision(0, absl::ZeroDuration()));
  EXPECT_FALSE(store_->AwaitRevision(1, absl::Milliseconds(1)));
  // A watcher blocks until another thread writes.
  bool woke = false;
  std::thread watcher(
      [&] { woke = store_->AwaitRevision(1, absl::Seconds(60)); });
  ASSERT_TRUE(store_->SetPaused(false, "", T0()).ok());
  watcher.join();
  EXPECT_TRUE(woke);
}

TEST_P(StoreTest, ConcurrentDecisionsOnOneJobExactlyOneWins) {
  Apply(Snapshot(1, {Spec("a")}));
  constexpr int kThreads = 8;
  std::vector<absl::StatusCode> codes(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      codes[i] =
          store_
              ->RecordDecisions({testing::Decide("a", DecisionKind::kAdmit,
                                                 v1::JOB_STATE_QUEUED)},
                                T0())
              .status()
              .code();
    });
  }
  for (auto& t : threads) t.join();
  int ok = 0;
  for (absl::StatusCode c : codes) {
    if (c == absl::StatusCode::kOk) {
      ++ok;
    } else {
      EXPECT_EQ(c, absl::StatusCode::kFailedPrecondition);
    }
  }
  EXPECT_EQ(ok, 1);
  EXPECT_EQ(store_->DecisionsForJob("a")->size(), 1u);
  EXPECT_EQ(store_->CurrentRevision(), 3u);  // QUEUED, SNAPSHOT, ADMITTED
}

std::vector<Backend> Backends() {
  return {
      {"Memory",
       [](const RetentionOptions& r) -> std::unique_ptr<Store> {
         return std::make_unique<MemoryStore>(r);
       }},
      {"Rocks",
       [](const RetentionOptions& r) -> std::unique_ptr<Store> {
         RocksStoreOptions o;
         o.retention = r;
         auto s = RocksStore::Open(testing::TempDir("store_test"), o);
         EXPECT_TRUE(s.ok()) << s.status();
         return s.ok() ? std::move(*s) : nullptr;
       }},
  };
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreTest, ::testing::ValuesIn(Backends()),
                         [](const auto& info) { return info.param.name; });

// Fault injection (fake only): a failed write changes nothing.
TEST(MemoryStoreTest, FailedWriteChangesNothing) {
  MemoryStore store;
  ASSERT_TRUE(store.ApplySnapshot(Snapshot(1, {Spec("a")}), T0()).ok());
  store.FailNextWrites(1, absl::ResourceExhaustedError("disk full"));
  auto r = store.ApplySnapshot(Snapshot(2, {Spec("b")}), T0());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(store.LastAppliedGeneration(), 1u);
  EXPECT_EQ(store.GetJob("b").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store.CurrentRevision(), 2u);
  EXPECT_TRUE(store.ApplySnapshot(Snapshot(2, {Spec("b")}), T0()).ok());
}

}  // namespace
}  // namespace berth
