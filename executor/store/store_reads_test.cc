// The Store contract, part 3: events, listings, fingerprints, records and
// concurrency.
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
using ::testing::HasSubstr;
namespace v1 = ::berth::v1;

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

// The event log is about jobs: a sync that changes none writes its
// generation (so an older one is refused) but no SNAPSHOT_APPLIED event;
// one that changes any job writes it, after the jobs' events.
TEST_P(StoreTest, SyncThatChangesNothingWritesNoEvent) {
  Apply(Snapshot(1, {Spec("a"), Spec("b")}));
  const uint64_t rev = store_->CurrentRevision();
  for (uint64_t g = 2; g <= 5; ++g) {
    SnapshotResult r = Apply(Snapshot(g, {Spec("a"), Spec("b")}));
    EXPECT_EQ(r.response.revision(), rev) << g;
    EXPECT_EQ(store_->LastAppliedGeneration(), g);
  }
  EXPECT_EQ(store_->CurrentRevision(), rev);
  EXPECT_EQ(store_->ApplySnapshot(Snapshot(4, {Spec("a"), Spec("b")}), T0()).status().code(),
            absl::StatusCode::kFailedPrecondition);

  SnapshotResult changed = Apply(Snapshot(6, {Spec("a", 7), Spec("b")}));
  EXPECT_EQ(changed.response.revision(), rev + 2);  // a's update, then the sync
  auto events = store_->ReadEvents(rev, 10);
  ASSERT_TRUE(events.ok()) << events.status();
  ASSERT_EQ(events->events.size(), 2u);
  EXPECT_EQ(events->events[0].type(), v1::EVENT_TYPE_JOB_SPEC_UPDATED);
  EXPECT_EQ(events->events[1].type(), v1::EVENT_TYPE_SNAPSHOT_APPLIED);
  EXPECT_EQ(events->events[1].generation(), 6u);

  // Dropping a job is a change (its cancellation and the sync's event).
  SnapshotResult dropped = Apply(Snapshot(7, {Spec("a", 7)}));
  EXPECT_EQ(dropped.response.revision(), rev + 4);
}

// A job-server that withdraws queued jobs leaves a CANCELLED record of each:
// within the age retention only max_terminal_jobs are kept, the most
// recently finished (the soak's growth).
TEST_P(StoreTest, TerminalJobsBeyondTheCountGoOldestFirst) {
  RetentionOptions r;
  r.max_terminal_jobs = 3;
  Reset(r);
  std::vector<v1::JobSpec> all;
  for (const char* id : {"a", "b", "c", "d", "e", "q"}) all.push_back(Spec(id));
  ASSERT_TRUE(store_->ApplySnapshot(Snapshot(1, all), T0()).ok());
  // Withdrawn one by one, a minute apart: a first, e last.
  uint64_t generation = 1;
  for (size_t n = 1; n <= 5; ++n) {
    std::vector<v1::JobSpec> left(all.begin() + static_cast<std::ptrdiff_t>(n), all.end());
    ASSERT_TRUE(store_->ApplySnapshot(Snapshot(++generation, left),
                                      T0() + absl::Minutes(static_cast<int64_t>(n)))
                    .ok());
  }
  ASSERT_EQ(store_->JobsInState(v1::JOB_STATE_CANCELLED).size(), 5u);
  auto stats = store_->Compact(T0() + absl::Hours(1));
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->jobs_deleted, 2);
  EXPECT_EQ(store_->GetJob("a").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->GetJob("b").status().code(), absl::StatusCode::kNotFound);
  for (const char* kept : {"c", "d", "e"}) EXPECT_EQ(StateOf(kept), v1::JOB_STATE_CANCELLED);
  EXPECT_EQ(StateOf("q"), v1::JOB_STATE_QUEUED);  // not terminal: never counted
  stats = store_->Compact(T0() + absl::Hours(1));
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->jobs_deleted, 0);
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
  EXPECT_EQ(q[0]->id(), "a");
  EXPECT_EQ(q[1]->id(), "c");
  std::vector<JobRecord> r = store_->JobsInState(v1::JOB_STATE_RUNNING);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0]->id(), "b");
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
  const uint64_t revision_a = before[0]->Decode().job.revision();
  Apply(Snapshot(2, {Spec("a", 7), Spec("b", 1)}));  // a's priority changes
  Run("b");                                          // b changes state
  EXPECT_EQ(before[0]->priority(), 1);
  EXPECT_EQ(before[0]->Decode().job.revision(), revision_a);
  EXPECT_EQ(before[1]->state(), v1::JOB_STATE_QUEUED);
  std::vector<JobRecord> after = store_->JobsInState(v1::JOB_STATE_QUEUED);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0]->priority(), 7);
  EXPECT_GT(after[0]->Decode().job.revision(), revision_a);
}

TEST_P(StoreTest, RecordStrayTask) {
  Apply(Snapshot(1, {Spec("a")}));
  const uint64_t before = store_->CurrentRevision();
  auto rev = store_->RecordStrayTask("a", "c0ffee", "on node n1", T0());
  ASSERT_TRUE(rev.ok()) << rev.status();
  EXPECT_EQ(*rev, before + 1);
  std::vector<v1::Event> events = AllEvents();
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().type(), v1::EVENT_TYPE_STRAY_TASK);
  EXPECT_EQ(events.back().job_id(), "a");
  EXPECT_EQ(events.back().container(), "c0ffee");
  EXPECT_EQ(events.back().message(), "on node n1");
  EXPECT_EQ(store_->GetJob("a")->job.state(), v1::JOB_STATE_QUEUED) << "changes no job";
  EXPECT_EQ(store_->RecordStrayTask("a", "", "x", T0()).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store_->CurrentRevision(), before + 1);
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

}  // namespace
}  // namespace berth
