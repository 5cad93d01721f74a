// The Store contract, part 1: snapshots (apply, dry run, generations, cancels,
// the mass-cancel guard, rejections). One parameterised suite over every
// implementation (store_contract_test.h); instantiated here.
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
#include "planner/base/human_text_testing.h"

namespace berth {
namespace {

using ::berth::testing::Snapshot;
using ::berth::testing::Spec;
using ::berth::testing::StoreTest;
using ::berth::testing::T0;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
namespace v1 = ::berth::v1;

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
  dry.options.mass_cancel_min_jobs = 0;  // 1 of 1 running is refused
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
  EXPECT_EQ(store_->CurrentRevision(), rev);  // no event
  EXPECT_EQ(r.revision_before, rev);
  EXPECT_EQ(r.response.revision(), rev);
  EXPECT_EQ(store_->LastAppliedGeneration(), 2u);
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
  // Old -> new values, in DiffJobSpecs' field order.
  EXPECT_EQ(upd.message(),
            "spec updated: image 'registry.example/job-runner:v3' -> "
            "'registry.example/job-runner:v4', priority 0 -> 3, memory 1 GiB -> 2 GiB");
  EXPECT_EQ(HumanTextProblem(upd.message(), "a"), "");
  EXPECT_EQ(a->job.revision(), upd.revision());
}

// ApplySnapshot(SnapshotRequest&&) moves the specs of added and updated jobs
// into the records (berthd's path): the records and the answer are those of
// the copying call.
TEST_P(StoreTest, AConsumedRequestStoresTheSameRecords) {
  v1::JobSpec a = Spec("a", 1);
  a.add_argv("run");
  (*a.mutable_labels())["team"] = "x";
  const std::vector<v1::JobSpec> first = {a, Spec("b", 2), Spec("c")};
  auto added = store_->ApplySnapshot(Snapshot(1, first), T0());
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_EQ(added->response.added(), 3);
  for (const v1::JobSpec& want : first) {
    auto got = store_->GetJob(want.id());
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->job.spec().SerializeAsString(), want.SerializeAsString()) << want.id();
  }
  v1::JobSpec a2 = a;
  a2.set_priority(7);
  SnapshotRequest next = Snapshot(2, {a2, Spec("b", 2), Spec("c")});
  auto updated = store_->ApplySnapshot(std::move(next), T0());
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_EQ(updated->response.updated(), 1);
  EXPECT_EQ(updated->response.unchanged(), 2);
  EXPECT_EQ(updated->job_writes, 1);
  auto got = store_->GetJob("a");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->job.spec().SerializeAsString(), a2.SerializeAsString());
  // A consumed dry run writes nothing and keeps nothing.
  SnapshotRequest dry = Snapshot(3, {Spec("d")});
  dry.dry_run = true;
  auto dried = store_->ApplySnapshot(std::move(dry), T0());
  ASSERT_TRUE(dried.ok());
  EXPECT_EQ(dried->response.added(), 1);
  EXPECT_EQ(store_->GetJob("d").status().code(), absl::StatusCode::kNotFound);
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
  const std::vector<v1::Event> ev = AllEvents();
  const v1::Event& upd = ev[ev.size() - 2];
  EXPECT_EQ(upd.type(), v1::EVENT_TYPE_JOB_SPEC_UPDATED);
  EXPECT_EQ(upd.message(), "priority updated 0 -> 7 while running");

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
  EXPECT_EQ(a->job.message(), "absent from snapshot generation 2");
  EXPECT_EQ(HumanTextProblem(a->job.message(), "a"), "");
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

// The fraction has a floor: cancelling the one running job of one (100%)
// is not a mass cancel; without the floor it is refused.
TEST_P(StoreTest, MassCancelGuardSparesASingleJob) {
  Apply(Snapshot(1, {Spec("a")}));
  Run("a");
  SnapshotRequest strict = Snapshot(2, {});
  strict.options.mass_cancel_min_jobs = 0;
  auto refused = store_->ApplySnapshot(strict, T0());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.status().message(), HasSubstr("would cancel 1 of 1"));
  SnapshotResult ok = Apply(Snapshot(2, {}));  // the default floor: 1
  EXPECT_EQ(ok.response.cancelled(), 1);
  EXPECT_EQ(ok.stop_requested_ids.size(), 1u);
}

// Writers take `now` before the write lock: a later revision stamped with an
// earlier time is raised to the last event's time.
TEST_P(StoreTest, EventTimesFollowRevisionOrder) {
  Apply(Snapshot(1, {Spec("a")}));
  ASSERT_TRUE(store_->SetPaused(true, "late", T0() + absl::Seconds(10)).ok());
  ASSERT_TRUE(store_->SetPaused(false, "", T0()).ok());  // an earlier `now`
  std::vector<v1::Event> events = AllEvents();
  ASSERT_GE(events.size(), 3u);
  auto at = [](const v1::Event& e) {
    return absl::FromUnixSeconds(e.time().seconds()) + absl::Nanoseconds(e.time().nanos());
  };
  for (size_t i = 1; i < events.size(); ++i) {
    EXPECT_GE(at(events[i]), at(events[i - 1]))
        << "revision " << events[i].revision() << " is before " << events[i - 1].revision();
  }
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

INSTANTIATE_TEST_SUITE_P(Backends, StoreTest, ::testing::ValuesIn(::berth::testing::Backends()),
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
