// ExecutorCore on MemoryStore + FakeRuntime, with the real reconciler driven
// pass by pass. The gRPC edge is tested in tests/ against a real berthd.
#include "server/core/executor_core.h"
#include "server/core/testing/test_core_options.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "executor/reconcile/reconciler.h"
#include "executor/reconcile/testing/test_jobs.h"
#include "executor/runtime/fake_runtime.h"
#include "executor/store/memory_store.h"
#include "planner/base/simulated_clock.h"
#include "server/ingest/test_snapshot.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

using testing::kGiB;

v1::JobSpec Job(const std::string& id, int64_t memory_gib, int priority = 0) {
  return testing::TestJob(id, memory_gib, priority);
}

v1::Budgets DefaultBudgets() {
  v1::Budgets b = testing::TestBudgets(16);
  (*b.mutable_pools())["database"].set_max_workers(1);
  return b;
}

ReceivedSnapshot Snapshot(uint64_t generation, std::vector<v1::JobSpec> jobs,
                          bool allow_mass_cancel = false) {
  return testing::TestSnapshot(generation, std::move(jobs), allow_mass_cancel);
}

class ExecutorCoreTest : public ::testing::Test {
 protected:
  ExecutorCoreTest()
      : plans_(store_, clock_, DefaultBudgets(), planner::Policy()),
        reconciler_(store_, runtime_, clock_, plans_, ReconcilerOptions()),
        core_(store_, plans_, clock_, reconciler_.admission_mutex(), Options()) {}

  ExecutorCoreOptions Options() {
    ExecutorCoreOptions o = testing::TestCoreOptions();
    o.trigger = [this] { ++triggers_; };
    return o;
  }

  void Pass() {
    absl::StatusOr<PassStats> s = reconciler_.RunPass();
    ASSERT_TRUE(s.ok()) << s.status();
  }

  v1::JobState StateOf(const std::string& id) {
    absl::StatusOr<v1::Job> j = core_.GetJob(id);
    return j.ok() ? j->state() : v1::JOB_STATE_UNSPECIFIED;
  }

  SimulatedClock clock_;
  MemoryStore store_;
  FakeRuntime runtime_;
  PlanCache plans_;
  Reconciler reconciler_;
  ExecutorCore core_;
  int triggers_ = 0;
};

TEST_F(ExecutorCoreTest, AnEmptyIdRejectsThatJobNotTheSnapshot) {
  std::vector<v1::JobSpec> jobs = {Job("a", 1), Job("", 1), Job("", 1),
                                   Job(std::string(200, 'x'), 1)};
  absl::StatusOr<ReceivedSnapshot> received = SnapshotAssembler::FromSnapshot([&] {
    v1::Snapshot s;
    s.set_generation(1);
    for (const v1::JobSpec& j : jobs) *s.add_jobs() = j;
    return s;
  }());
  ASSERT_TRUE(received.ok()) << received.status();
  absl::StatusOr<v1::SyncSnapshotResponse> r = core_.Sync(*std::move(received));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->added(), 1);
  EXPECT_EQ(r->rejected(), 3);
  ASSERT_EQ(r->rejections_size(), 3);
  for (const v1::JobRejection& j : r->rejections()) {
    EXPECT_EQ(j.reason(), v1::REJECT_REASON_INVALID_ID);
    EXPECT_EQ(j.field(), "id");
  }
  EXPECT_EQ(StateOf("a"), v1::JOB_STATE_QUEUED);
}

TEST_F(ExecutorCoreTest, ADependencyInsideASnapshotBuiltWithoutItsIdIndexIsAccepted) {
  // SnapshotAssembler fills ReceivedSnapshot::index as the stream arrives; a
  // snapshot built without it (as here) must validate the same.
  v1::JobSpec b = Job("b", 1);
  b.add_depends_on("a");
  absl::StatusOr<v1::SyncSnapshotResponse> r = core_.Sync(Snapshot(5, {Job("a", 1), b}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->rejected(), 0) << r->DebugString();
  EXPECT_EQ(StateOf("b"), v1::JOB_STATE_QUEUED);
}

TEST_F(ExecutorCoreTest, ReSentGenerationMustMatchWhatWasApplied) {
  ASSERT_TRUE(core_.Sync(Snapshot(5, {Job("a", 1), Job("b", 1)})).ok());
  const uint64_t revision = store_.CurrentRevision();
  // Same jobs in another order: the idempotent re-send.
  absl::StatusOr<v1::SyncSnapshotResponse> same = core_.Sync(Snapshot(5, {Job("b", 1), Job("a", 1)}));
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_TRUE(same->already_applied());
  // Same generation, a new job in it (was silently dropped).
  absl::StatusOr<v1::SyncSnapshotResponse> changed =
      core_.Sync(Snapshot(5, {Job("a", 1), Job("b", 1), Job("c", 1)}));
  EXPECT_EQ(changed.status().code(), absl::StatusCode::kFailedPrecondition) << changed.status();
  EXPECT_NE(changed.status().message().find("different content"), std::string::npos);
  EXPECT_NE(changed.status().message().find("(> 5)"), std::string::npos) << changed.status();
  absl::StatusOr<v1::DryRunResponse> dry = core_.DryRun(Snapshot(5, {Job("a", 2), Job("b", 1)}));
  EXPECT_EQ(dry.status().code(), absl::StatusCode::kFailedPrecondition) << dry.status();
  EXPECT_EQ(store_.CurrentRevision(), revision);
  EXPECT_EQ(core_.GetJob("c").status().code(), absl::StatusCode::kNotFound);
  ASSERT_TRUE(core_.Sync(Snapshot(6, {Job("a", 1), Job("b", 1), Job("c", 1)})).ok());
}

TEST_F(ExecutorCoreTest, SyncQueuesGoodJobsRejectsBadOnesAndTriggers) {
  v1::JobSpec evil = Job("evil", 1);
  evil.set_image("evil:latest");
  v1::JobSpec gpu = Job("gpu", 1);
  gpu.set_pool("gpu");
  v1::JobSpec huge = Job("huge", 17);
  absl::StatusOr<v1::SyncSnapshotResponse> r =
      core_.Sync(Snapshot(1, {Job("a", 1), evil, gpu, huge}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->added(), 1);
  EXPECT_EQ(r->rejected(), 3);
  ASSERT_EQ(r->rejections_size(), 3);
  std::map<std::string, v1::RejectReason> reasons;
  for (const auto& rej : r->rejections()) reasons[rej.job_id()] = rej.reason();
  EXPECT_EQ(reasons["evil"], v1::REJECT_REASON_IMAGE_NOT_ALLOWED);
  EXPECT_EQ(reasons["gpu"], v1::REJECT_REASON_UNKNOWN_POOL);
  EXPECT_EQ(reasons["huge"], v1::REJECT_REASON_NEVER_FITS);
  EXPECT_EQ(StateOf("a"), v1::JOB_STATE_QUEUED);
  EXPECT_EQ(StateOf("evil"), v1::JOB_STATE_REJECTED);
  EXPECT_EQ(triggers_, 1);
}

TEST_F(ExecutorCoreTest, StaleGenerationChangesNothingAndRepeatIsIdempotent) {
  ASSERT_TRUE(core_.Sync(Snapshot(5, {Job("a", 1)})).ok());
  const uint64_t rev = store_.CurrentRevision();
  absl::StatusOr<v1::SyncSnapshotResponse> stale = core_.Sync(Snapshot(4, {Job("b", 1)}));
  EXPECT_EQ(stale.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(stale.status().message(), "older than")) << stale.status();
  // The exact rule: above the last, not ">= 5" (5 with other
  // content is refused too).
  EXPECT_TRUE(absl::StrContains(stale.status().message(), "send a generation > 5"))
      << stale.status();
  EXPECT_EQ(core_.LastAppliedGeneration(), 5u);
  absl::StatusOr<v1::Plan> plan = core_.GetPlan(1);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->last_applied_generation(), 5u);
  // The same content again (different content: ReSentGenerationMustMatch...).
  absl::StatusOr<v1::SyncSnapshotResponse> again = core_.Sync(Snapshot(5, {Job("a", 1)}));
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->already_applied());
  EXPECT_EQ(store_.CurrentRevision(), rev);
  EXPECT_EQ(StateOf("b"), v1::JOB_STATE_UNSPECIFIED);
}

TEST_F(ExecutorCoreTest, MassCancelGuard) {
  ASSERT_TRUE(core_.Sync(Snapshot(1, {Job("a", 1), Job("b", 1), Job("c", 1)})).ok());
  Pass();
  ASSERT_EQ(StateOf("a"), v1::JOB_STATE_RUNNING);
  // An empty snapshot (a truncated job-server?) would cancel everything.
  absl::StatusOr<v1::SyncSnapshotResponse> r = core_.Sync(Snapshot(2, {}));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(StateOf("a"), v1::JOB_STATE_RUNNING);
  r = core_.Sync(Snapshot(2, {}, /*allow_mass_cancel=*/true));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->cancelled(), 3);
  Pass();  // stops them
  Pass();  // finalises them
  EXPECT_EQ(StateOf("a"), v1::JOB_STATE_CANCELLED);
}

TEST_F(ExecutorCoreTest, DryRunShowsThePlanAndChangesNothing) {
  ASSERT_TRUE(core_.Sync(Snapshot(1, {Job("a", 10)})).ok());
  Pass();
  const uint64_t rev = store_.CurrentRevision();
  absl::StatusOr<v1::DryRunResponse> dry =
      core_.DryRun(Snapshot(2, {Job("a", 10), Job("b", 4), Job("c", 4)}));
  ASSERT_TRUE(dry.ok()) << dry.status();
  EXPECT_EQ(dry->sync().added(), 2);
  EXPECT_EQ(dry->sync().unchanged(), 1);
  ASSERT_EQ(dry->plan().decisions_size(), 2);
  EXPECT_EQ(dry->plan().admitted_count(), 1);
  EXPECT_EQ(dry->plan().decisions(1).reason(), v1::WAITING_FOR_MEMORY);
  EXPECT_EQ(store_.CurrentRevision(), rev);
  EXPECT_EQ(StateOf("b"), v1::JOB_STATE_UNSPECIFIED);
}

TEST_F(ExecutorCoreTest, ExplainWaitingForMemoryAndTheSuggestionWorks) {
  ASSERT_TRUE(core_.Sync(Snapshot(1, {Job("a", 10, 5), Job("big", 9, 1)})).ok());
  Pass();
  absl::StatusOr<v1::Explanation> e = core_.ExplainJob("big");
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->state(), v1::JOB_STATE_QUEUED);
  EXPECT_EQ(e->reason(), v1::WAITING_FOR_MEMORY);
  EXPECT_EQ(e->shortfall().needed(), 9 * kGiB);
  EXPECT_EQ(e->shortfall().free(), 6 * kGiB);
  EXPECT_EQ(e->shortfall().shortfall(), e->shortfall().needed() - e->shortfall().free());
  EXPECT_EQ(e->queue_position(), 1);
  EXPECT_TRUE(e->has_estimated_start());
  ASSERT_TRUE(e->has_smallest_change());
  EXPECT_EQ(e->smallest_change().dimension(), v1::DIMENSION_MEMORY);
  EXPECT_LE(e->smallest_change().fits_if_at_most(), 6 * kGiB);
  EXPECT_FALSE(e->summary().empty());
  // Apply the suggestion: job-server re-sends with the smaller estimate.
  v1::JobSpec smaller = Job("big", 0, 1);
  smaller.mutable_resources()->set_memory_bytes(e->smallest_change().fits_if_at_most());
  ASSERT_TRUE(core_.Sync(Snapshot(2, {Job("a", 10, 5), smaller})).ok());
  Pass();
  EXPECT_EQ(StateOf("big"), v1::JOB_STATE_RUNNING);
  absl::StatusOr<v1::Explanation> running = core_.ExplainJob("big");
  ASSERT_TRUE(running.ok());
  EXPECT_TRUE(absl::StartsWith(running->summary(), "Running since")) << running->summary();
  EXPECT_EQ(core_.ExplainJob("nope").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(ExecutorCoreTest, GetPlanCarriesSummariesAndHonoursLimit) {
  ASSERT_TRUE(core_.Sync(Snapshot(1, {Job("a", 10), Job("b", 10), Job("c", 10)})).ok());
  absl::StatusOr<v1::Plan> plan = core_.GetPlan(0);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->queued_count(), 3);
  ASSERT_EQ(plan->decisions_size(), 3);
  EXPECT_EQ(plan->decisions(0).verdict(), v1::VERDICT_ADMIT);
  for (const auto& d : plan->decisions()) EXPECT_FALSE(d.summary().empty()) << d.job_id();
  absl::StatusOr<v1::Plan> top = core_.GetPlan(1);
  ASSERT_TRUE(top.ok());
  EXPECT_EQ(top->decisions_size(), 1);
  EXPECT_EQ(top->queued_count(), 3);
  EXPECT_EQ(core_.GetPlan(-1).status().code(), absl::StatusCode::kInvalidArgument);
}

// Every decision GetPlan shows carries an expected start and its kind; a job
// that cannot start now is never "now".
TEST_F(ExecutorCoreTest, GetPlanGivesEveryWaitingJobAnHonestEta) {
  ASSERT_TRUE(core_.Sync(Snapshot(1, {Job("a", 10), Job("b", 10), Job("c", 10)})).ok());
  absl::StatusOr<v1::Plan> plan = core_.GetPlan(0);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->decisions_size(), 3);
  const v1::PlanDecision& a = plan->decisions(0);
  const v1::PlanDecision& b = plan->decisions(1);
  const v1::PlanDecision& c = plan->decisions(2);
  EXPECT_EQ(a.eta_kind(), v1::ETA_KIND_NOW);
  EXPECT_EQ(b.eta_kind(), v1::ETA_KIND_RESERVED) << b.summary();
  EXPECT_EQ(c.eta_kind(), v1::ETA_KIND_IF_ESTIMATES_HOLD) << c.summary();
  const int64_t now = plan->computed_at().seconds();
  ASSERT_TRUE(b.has_estimated_start());
  ASSERT_TRUE(c.has_estimated_start());
  // b after a's 10 minutes; c not before b's end.
  EXPECT_GT(b.estimated_start().seconds(), now);
  EXPECT_GT(c.estimated_start().seconds(), b.estimated_start().seconds());
}

TEST_F(ExecutorCoreTest, ListJobsFiltersAndPaginates) {
  std::vector<v1::JobSpec> jobs;
  for (int i = 0; i < 5; ++i) jobs.push_back(Job("j" + std::to_string(i), 1));
  ASSERT_TRUE(core_.Sync(Snapshot(1, jobs)).ok());
  v1::ListJobsRequest req;
  req.set_page_size(2);
  req.add_states(v1::JOB_STATE_QUEUED);
  std::vector<std::string> ids;
  for (int page = 0; page < 5; ++page) {
    absl::StatusOr<v1::ListJobsResponse> r = core_.ListJobs(req);
    ASSERT_TRUE(r.ok()) << r.status();
    for (const auto& j : r->jobs()) ids.push_back(j.spec().id());
    if (r->next_page_token().empty()) break;
    req.set_page_token(r->next_page_token());
  }
  EXPECT_EQ(ids, (std::vector<std::string>{"j0", "j1", "j2", "j3", "j4"}));
  req.set_page_token("garbage!");
  EXPECT_EQ(core_.ListJobs(req).status().code(), absl::StatusCode::kInvalidArgument);
  v1::ListJobsRequest bad;
  bad.set_page_size(-1);
  EXPECT_EQ(core_.ListJobs(bad).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(core_.GetJob("missing").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(ExecutorCoreTest, SetBudgetsValidatesMergesAndPersists) {
  v1::SetBudgetsRequest req;
  req.mutable_budgets()->set_memory_bytes(32 * kGiB);
  req.mutable_update_mask()->add_paths("memory_bytes");
  absl::StatusOr<v1::Budgets> b = core_.SetBudgets(req);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->memory_bytes(), 32 * kGiB);
  EXPECT_EQ(b->max_workers(), 10);  // kept from the defaults
  absl::StatusOr<v1::Budgets> stored = store_.GetBudgets();
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->memory_bytes(), 32 * kGiB);

  req.mutable_budgets()->set_memory_bytes(0);
  absl::StatusOr<v1::Budgets> bad = core_.SetBudgets(req);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "memory_bytes"));
  req.mutable_update_mask()->set_paths(0, "bogus");
  EXPECT_EQ(core_.SetBudgets(req).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_.GetBudgets()->memory_bytes(), 32 * kGiB);

  // The JSON names grpcurl and the docs use name the same fields.
  v1::SetBudgetsRequest camel;
  camel.mutable_budgets()->set_memory_bytes(16 * kGiB);
  camel.mutable_budgets()->set_max_workers(3);
  camel.mutable_update_mask()->add_paths("memoryBytes");
  camel.mutable_update_mask()->add_paths("maxWorkers");
  absl::StatusOr<v1::Budgets> c = core_.SetBudgets(camel);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->memory_bytes(), 16 * kGiB);
  EXPECT_EQ(c->max_workers(), 3);
  EXPECT_EQ(c->cpu_millis(), b->cpu_millis());  // not in the mask: kept
}

TEST_F(ExecutorCoreTest, PauseMaintenanceAndDrainRequeueNotFail) {
  v1::JobSpec db = Job("db", 1);
  db.set_pool("database");
  ASSERT_TRUE(core_.Sync(Snapshot(1, {Job("a", 1), db})).ok());
  Pass();
  ASSERT_EQ(StateOf("db"), v1::JOB_STATE_RUNNING);

  v1::SetPoolMaintenanceRequest unknown;
  unknown.set_pool("gpu");
  unknown.set_in_maintenance(true);
  EXPECT_EQ(core_.SetPoolMaintenance(unknown).status().code(), absl::StatusCode::kNotFound);

  v1::SetPoolMaintenanceRequest m;
  m.set_pool("database");
  m.set_in_maintenance(true);
  m.set_reason("db upgrade");
  absl::StatusOr<v1::SetPoolMaintenanceResponse> r = core_.SetPoolMaintenance(m);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->requeued_job_ids_size(), 1);
  EXPECT_EQ(r->requeued_job_ids(0), "db");
  Pass();
  Pass();
  EXPECT_EQ(StateOf("db"), v1::JOB_STATE_QUEUED);
  EXPECT_EQ(StateOf("a"), v1::JOB_STATE_RUNNING);
  // The ended attempt says what requeued it, with the operator's reason.
  absl::StatusOr<v1::Job> dbj = core_.GetJob("db");
  ASSERT_TRUE(dbj.ok()) << dbj.status();
  EXPECT_EQ(dbj->attempt(), 1);
  EXPECT_EQ(dbj->message(), "requeued: pool 'database' in maintenance: db upgrade");
  ASSERT_EQ(dbj->attempts_size(), 1);
  EXPECT_EQ(dbj->attempts(0).number(), 1);
  EXPECT_EQ(dbj->attempts(0).outcome(), v1::JOB_STATE_QUEUED);
  EXPECT_EQ(dbj->attempts(0).requeue_cause(), v1::REQUEUE_CAUSE_POOL_MAINTENANCE);
  EXPECT_EQ(dbj->attempts(0).message(), dbj->message());
  EXPECT_TRUE(dbj->attempts(0).has_started_at());
  EXPECT_TRUE(dbj->attempts(0).has_finished_at());
  absl::StatusOr<v1::Explanation> e = core_.ExplainJob("db");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->reason(), v1::POOL_IN_MAINTENANCE);

  v1::DrainRequest drain;
  drain.set_reason("reboot");
  absl::StatusOr<v1::DrainResponse> d = core_.Drain(drain);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->state().paused());
  EXPECT_EQ(d->requeued_job_ids_size(), 1);
  Pass();
  Pass();
  EXPECT_EQ(StateOf("a"), v1::JOB_STATE_QUEUED);
  absl::StatusOr<v1::Job> aj = core_.GetJob("a");
  ASSERT_TRUE(aj.ok()) << aj.status();
  ASSERT_EQ(aj->attempts_size(), 1);
  EXPECT_EQ(aj->attempts(0).requeue_cause(), v1::REQUEUE_CAUSE_DRAIN);
  EXPECT_EQ(aj->attempts(0).message(), "requeued: drain: reboot");
  e = core_.ExplainJob("a");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->reason(), v1::PAUSED);
  EXPECT_EQ(e->summary(), "Admission is paused: reboot.");
  absl::StatusOr<v1::Plan> plan = core_.GetPlan(0);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->pause_reason(), "reboot");
  // A second Pause replaces the reason (and says so in an event).
  const uint64_t before = store_.CurrentRevision();
  absl::StatusOr<v1::ControlState> again = core_.Pause("kernel update");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->pause_reason(), "kernel update");
  EXPECT_EQ(store_.CurrentRevision(), before + 1);
  Pass();
  e = core_.ExplainJob("a");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->summary(), "Admission is paused: kernel update.");
  ASSERT_TRUE(core_.Pause("kernel update").ok());  // the same again: no event
  EXPECT_EQ(store_.CurrentRevision(), before + 1);
  ASSERT_TRUE(core_.Resume().ok());
  Pass();
  EXPECT_EQ(StateOf("a"), v1::JOB_STATE_RUNNING);
  aj = core_.GetJob("a");
  ASSERT_TRUE(aj.ok()) << aj.status();
  EXPECT_EQ(aj->attempt(), 2);         // the second run
  EXPECT_EQ(aj->attempts_size(), 1);   // only ended attempts
}

TEST_F(ExecutorCoreTest, WatchReplaysFromARevisionThenStops) {
  ASSERT_TRUE(core_.Sync(Snapshot(1, {Job("a", 1), Job("b", 1)})).ok());
  std::vector<uint64_t> seen;
  absl::Status s = core_.Watch(
      1, [&](const v1::Event& e) { seen.push_back(e.revision()); return true; },
      [&] { return seen.size() >= 2; });
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(seen, (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(core_.Watch(99, [](const v1::Event&) { return true; }, [] { return false; }).code(),
            absl::StatusCode::kInvalidArgument);
}

// Revisions are never reused: a watch names its epoch, and another epoch or
// a revision beyond the head is refused with where to resume.
TEST_F(ExecutorCoreTest, CheckWatchRefusesAnotherEpochAndRevisionsAhead) {
  ASSERT_TRUE(core_.Sync(Snapshot(1, {Job("a", 1)})).ok());
  const std::string epoch = core_.Epoch();
  ASSERT_EQ(epoch.size(), 16u);
  absl::StatusOr<EventPage> page = core_.ReadEvents(0, 10);
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_FALSE(page->events.empty());
  for (const v1::Event& e : page->events) EXPECT_EQ(e.epoch(), epoch);
  const uint64_t head = core_.CurrentRevisions().current;

  struct Case {
    const char* name;
    uint64_t from;
    std::string epoch;
    absl::StatusCode code;
    uint64_t resume;
  };
  const std::vector<Case> cases = {
      {"no epoch, at the head", head, "", absl::StatusCode::kOk, 0},
      {"this epoch", 1, epoch, absl::StatusCode::kOk, 0},
      {"another epoch", 1, "0123456789abcdef", absl::StatusCode::kFailedPrecondition, 0},
      {"ahead, no epoch", head + 5, "", absl::StatusCode::kFailedPrecondition, 0},
      {"ahead, this epoch", head + 5, epoch, absl::StatusCode::kFailedPrecondition, head},
  };
  for (const Case& c : cases) {
    v1::WatchEventsRequest r;
    r.set_from_revision(c.from);
    r.set_epoch(c.epoch);
    ExecutorCore::WatchResume resume;
    absl::Status s = core_.CheckWatch(r, &resume);
    EXPECT_EQ(s.code(), c.code) << c.name << ": " << s;
    if (s.ok()) continue;
    EXPECT_EQ(resume.epoch, epoch) << c.name;
    EXPECT_EQ(resume.resume_revision, c.resume) << c.name;
    EXPECT_EQ(resume.current_revision, head) << c.name;
    EXPECT_TRUE(absl::StrContains(s.message(), epoch)) << c.name << ": " << s;
  }
}

}  // namespace
}  // namespace berth
