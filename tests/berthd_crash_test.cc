// Crash recovery of the real berthd (DESIGN.md "Recovery"): berthd is
// SIGKILLed at every injected crash point (tools/base/crash_point.h) and at
// random moments, restarted on the same data dir and Docker instance label,
// and after every run the test checks, independently of berthd:
//   - no job lost: every job of every snapshot ends SUCCEEDED (they all run
//     `true` or a short sleep);
//   - none started twice: Docker's own event stream (filtered on this
//     instance) shows exactly one "create" per job, and a poller of the bulk
//     container list never sees two container ids for one job;
//   - orphans stopped: a container of this instance for a job berthd never
//     heard of, started while berthd is down, is gone after recovery;
//   - a watch client that reconnects with its last revision after every
//     restart sees contiguous revisions: no gap, no duplicate.
// One berthd (one data dir, one instance) lives through all runs, so the
// watch and the container counts span every restart.
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "executor/runtime/docker/docker_runtime.h"
#include "gtest/gtest.h"
#include "executor/store/store.h"  // IsTerminal
#include "tests/berthd_process.h"
#include "tests/crash_observers.h"
#include "tools/base/subprocess.h"

namespace berth {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

// The revision of the last event berthd wrote (its metric).
absl::StatusOr<uint64_t> EventRevision(const BerthdProcess& b) {
  absl::StatusOr<std::string> m = b.Metrics();
  if (!m.ok()) return m.status();
  for (absl::string_view line : absl::StrSplit(*m, '\n')) {
    if (absl::StartsWith(line, "berth_event_revision ")) {
      double v = 0;
      if (absl::SimpleAtod(line.substr(line.find(' ') + 1), &v)) {
        return static_cast<uint64_t>(v);
      }
    }
  }
  return absl::NotFoundError("berth_event_revision not in metrics");
}

// One run: where berthd dies.
struct CrashRun {
  std::string point;  // crash point; empty: kill -9 after `random_delay`
  int nth = 1;
  absl::Duration random_delay;
};

class BerthdCrashTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BerthdProcessOptions o;
    o.memory = "1Gi";
    o.max_workers = 8;
    o.tick = "200ms";
    o.stop_grace = "1s";
    absl::StatusOr<std::unique_ptr<BerthdProcess>> b = BerthdProcess::Start(o);
    ASSERT_TRUE(b.ok()) << b.status();
    b_ = *std::move(b);
    prefix_ = UniqueJobPrefix();  // container names are host-wide
    counter_ = std::make_unique<CreationCounter>(b_->instance());
    // Prove the Docker event stream is live before relying on it: a probe
    // container's "create" must arrive.
    ContainerSpec probe = OrphanSpec("probe-" + b_->instance());
    const auto started = counter_->docker().Start(probe);
    ASSERT_TRUE(started.ok()) << started.status();
    ASSERT_TRUE(WaitFor([&] { return counter_->Creates(probe.job_id) == 1; },
                        absl::Seconds(10)));
    ASSERT_TRUE(WaitFor([&] { return !counter_->docker().Inspect(probe.job_id).ok(); },
                        absl::Seconds(20)))
        << "berthd did not remove the probe orphan\n"
        << b_->Log();
  }

  void TearDown() override {
    counter_.reset();
    b_.reset();  // SIGTERM, then removes the instance's containers
  }

  // A container of this instance for a job berthd does not know.
  ContainerSpec OrphanSpec(const std::string& job) const {
    ContainerSpec s;
    s.job_id = job;
    s.workspace = "orphans";
    s.action = "orphan";
    s.image = "berth-test/busybox:1";
    s.argv = {"sleep", "600"};
    s.cpu_millis = 100;
    s.memory_bytes = 16 * kMiB;
    return s;
  }

  // Snapshot `generation` with `n` fresh jobs: `true` and short sleeps.
  v1::Snapshot Jobs(uint64_t generation, int n, std::vector<std::string>* ids) {
    v1::Snapshot s;
    s.set_generation(generation);
    for (int i = 0; i < n; ++i) {
      std::string id = absl::StrCat(prefix_, "crash-g", generation, "-", i);
      *s.add_jobs() = BusyboxJob(id, absl::StrCat("ws", i % 2), 32 * kMiB,
                                 i % 2 == 0 ? "true" : "sleep 0.3");
      ids->push_back(id);
    }
    return s;
  }

  // Waits until every job is terminal; returns the non-SUCCEEDED ones.
  std::vector<std::string> AwaitAllSucceeded(const std::vector<std::string>& ids) {
    std::unique_ptr<BerthClient> c = b_->Client(Role::kReader);
    std::map<std::string, v1::Job> last;
    WaitFor(
        [&] {
          for (const std::string& id : ids) {
            if (last.count(id) && IsTerminal(last[id].state())) continue;
            absl::StatusOr<v1::Job> j = c->GetJob(id);
            if (!j.ok()) return false;
            last[id] = *j;
            if (!IsTerminal(j->state())) return false;
          }
          return true;
        },
        absl::Seconds(40));
    std::vector<std::string> bad;
    for (const std::string& id : ids) {
      auto it = last.find(id);
      if (it == last.end() || it->second.state() != v1::JOB_STATE_SUCCEEDED) {
        bad.push_back(absl::StrCat(
            id, ": ",
            it == last.end() ? "never seen" : v1::JobState_Name(it->second.state()) + " " +
                                                  it->second.message()));
      }
    }
    return bad;
  }

  std::unique_ptr<BerthdProcess> b_;
  std::unique_ptr<CreationCounter> counter_;
  std::string prefix_;
};

TEST_F(BerthdCrashTest, KillNineAtEveryPointLosesNothingAndStartsNothingTwice) {
  std::vector<CrashRun> runs;
  // Each point, at its 1st hit and (for the per-job points) a later one.
  for (const char* point : {"sync.before_apply", "sync.after_apply", "reconcile.after_admit"}) {
    runs.push_back({point, 1, {}});
    runs.push_back({point, 1, {}});
  }
  for (const char* point : {"runtime.after_create", "reconcile.after_start",
                            "reconcile.before_finalise", "reconcile.after_finalise"}) {
    for (int n : {1, 2, 3}) runs.push_back({point, n, {}});
  }
  absl::BitGen gen;
  for (int i = 0; i < 6; ++i) {
    runs.push_back({"", 0, absl::Milliseconds(absl::Uniform(gen, 0, 1500))});
  }
  ASSERT_GE(runs.size(), 20u);

  ResumingWatcher watcher(*b_);
  std::vector<std::string> all_ids;
  std::vector<std::string> orphans;
  uint64_t generation = 0;
  const absl::Time started = absl::Now();

  for (size_t r = 0; r < runs.size(); ++r) {
    const CrashRun& run = runs[r];
    const std::string what =
        run.point.empty() ? absl::StrCat("random kill after ", absl::FormatDuration(run.random_delay))
                          : absl::StrCat(run.point, ":", run.nth);
    SCOPED_TRACE(absl::StrCat("run ", r, ": ", what));

    // berthd armed with the crash point (or not, for a random kill).
    b_->Kill9();
    std::map<std::string, std::string> env;
    if (!run.point.empty()) env["BERTH_CRASH_POINT"] = absl::StrCat(run.point, ":", run.nth);
    ASSERT_TRUE(b_->Restart(env).ok()) << b_->Log();

    std::vector<std::string> ids;
    v1::Snapshot snapshot = Jobs(++generation, 4, &ids);
    all_ids.insert(all_ids.end(), ids.begin(), ids.end());
    absl::StatusOr<v1::SyncSnapshotResponse> synced;
    std::thread pusher([&] { synced = b_->Client(Role::kPusher)->Sync(snapshot); });
    if (run.point.empty()) {
      absl::SleepFor(run.random_delay);  // the random moment itself
      b_->Kill9();
    } else {
      int status = b_->WaitExit(absl::Seconds(30));
      ASSERT_NE(status, -1) << "crash point " << what << " never fired\n" << b_->Log();
      ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
    }
    pusher.join();

    // While berthd is down: an orphan appears (a container of this instance
    // for a job berthd never heard of).
    std::string orphan = absl::StrCat(prefix_, "orphan-", r);
    ASSERT_TRUE(counter_->docker().Start(OrphanSpec(orphan)).ok());
    orphans.push_back(orphan);

    ASSERT_TRUE(b_->Restart().ok()) << b_->Log();
    // The job-server did not get an answer if berthd died during the sync:
    // it sends the same snapshot again (idempotent if it was applied).
    if (!synced.ok()) {
      absl::StatusOr<v1::SyncSnapshotResponse> again = b_->Client(Role::kPusher)->Sync(snapshot);
      ASSERT_TRUE(again.ok()) << again.status();
      if (run.point == "sync.after_apply") {
        EXPECT_TRUE(again->already_applied());
      }
      if (run.point == "sync.before_apply") {
        EXPECT_FALSE(again->already_applied());
        EXPECT_EQ(again->added(), 4);
      }
    } else {
      EXPECT_TRUE(run.point.empty() || !absl::StartsWith(run.point, "sync."))
          << "the sync was answered although berthd died in it";
    }

    std::vector<std::string> bad = AwaitAllSucceeded(ids);
    EXPECT_TRUE(bad.empty()) << absl::StrJoin(bad, "\n") << "\n" << b_->Log();
    EXPECT_TRUE(WaitFor([&] { return !counter_->docker().Inspect(orphan).ok(); },
                        absl::Seconds(20)))
        << orphan << " still exists after recovery";
    // ...and reported to watchers (before the next kill can interrupt it).
    EXPECT_TRUE(WaitFor([&] { return watcher.orphan_reports(orphan) >= 1; },
                        absl::Seconds(20)))
        << orphan << " stopped but no ORPHAN_STOPPED event seen";
    if (HasFatalFailure()) return;
  }
  const absl::Duration elapsed = absl::Now() - started;

  // None started twice, counted by Docker.
  for (const std::string& id : all_ids) {
    EXPECT_TRUE(WaitFor([&] { return counter_->Creates(id) >= 1; }, absl::Seconds(5))) << id;
    EXPECT_EQ(counter_->Creates(id), 1) << id << " created more than once";
    EXPECT_LE(counter_->DistinctIds(id), 1u) << id << " had several containers";
  }
  for (const std::string& o : orphans) {
    EXPECT_EQ(counter_->Creates(o), 1) << o;
    EXPECT_EQ(watcher.orphan_reports(o), 1) << o << " reported more than once";
  }

  // The watch saw everything, once, in order, across every restart.
  absl::StatusOr<uint64_t> current = EventRevision(*b_);
  ASSERT_TRUE(current.ok()) << current.status();
  EXPECT_TRUE(WaitFor([&] { return watcher.last() >= *current; }, absl::Seconds(10)))
      << "watcher at " << watcher.last() << ", berthd at " << *current;
  EXPECT_EQ(watcher.gaps(), 0) << absl::StrJoin(watcher.problems(), "\n");
  EXPECT_EQ(watcher.duplicates(), 0) << absl::StrJoin(watcher.problems(), "\n");
  EXPECT_GE(watcher.reconnects(), static_cast<int>(runs.size()));
  std::map<std::string, std::vector<v1::JobState>> transitions = watcher.transitions();
  for (const std::string& id : all_ids) {
    const std::vector<v1::JobState>& states = transitions[id];
    ASSERT_FALSE(states.empty()) << id;
    EXPECT_EQ(states.front(), v1::JOB_STATE_QUEUED) << id;
    EXPECT_EQ(states.back(), v1::JOB_STATE_SUCCEEDED) << id;
    EXPECT_LE(std::count(states.begin(), states.end(), v1::JOB_STATE_RUNNING), 1) << id;
  }
  std::cerr << "crash test: " << runs.size() << " runs, " << all_ids.size() << " jobs, "
            << orphans.size() << " orphans, " << watcher.reconnects()
            << " watch reconnects, docker event resyncs " << counter_->resyncs() << ", "
            << absl::FormatDuration(elapsed) << "\n";
}

}  // namespace
}  // namespace berth
