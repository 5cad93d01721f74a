// The real berthd with --runtime=swarm against the real three-node swarm
// (tools/swarm_cluster.sh up): jobs finish with the same outcomes as on one
// host (exit 0, exit 3, a real OOM), and kill -9 of berthd while a job runs
// loses nothing and creates nothing twice (the service is adopted by name);
// a RUNNING job's startedAt is its container's start on the node, not the
// service's creation.
// Fails without a cluster (tools/test.sh brings it up; tag "swarm").
#include <cstdio>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "executor/runtime/swarm/swarm_runtime.h"
#include "executor/runtime/swarm/testing/swarm_test_util.h"
#include "executor/store/store.h"  // IsTerminal
#include "gtest/gtest.h"
#include "tests/berthd_process.h"

namespace berth {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

absl::StatusOr<v1::Job> WaitTerminal(BerthClient& c, const std::string& id,
                                     absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    absl::StatusOr<v1::Job> j = c.GetJob(id);
    if (j.ok() && IsTerminal(j->state())) return j;
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          id, " not terminal: ", j.ok() ? v1::JobState_Name(j->state()) : j.status().ToString()));
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
}

TEST(BerthdSwarm, OutcomesAsOnOneHostAndKillNineAdoptsServices) {
  if (!testing::SwarmAvailable()) {
    FAIL() << "no swarm manager at " << testing::SwarmManagerUrl()
           << "; run: bash tools/swarm_cluster.sh up (or leave the swarm tests out"
           << " with --test_tag_filters=-swarm)";
  }
  BerthdProcessOptions o;
  o.memory = "1Gi";
  o.cpus = "2";
  o.extra_flags = {"--runtime=swarm",
                   absl::StrCat("--swarm_manager=", testing::SwarmManagerUrl())};
  absl::StatusOr<std::unique_ptr<BerthdProcess>> started = BerthdProcess::Start(o);
  ASSERT_TRUE(started.ok()) << started.status();
  BerthdProcess& b = **started;
  struct Cleanup {
    std::string instance;
    ~Cleanup() { (void)testing::RemoveInstanceServices(instance); }
  } cleanup{b.instance()};

  const std::string p = UniqueJobPrefix();
  v1::Snapshot snap;
  snap.set_generation(1);
  *snap.add_jobs() = BusyboxJob(p + "ok", "ws", 64 * kMiB, "echo fine");
  *snap.add_jobs() = BusyboxJob(p + "three", "ws", 64 * kMiB, "exit 3");
  *snap.add_jobs() = BusyboxJob(p + "oom", "ws", 32 * kMiB,
                                "x=$(head -c 100000000 /dev/zero | tr '\\0' a)");
  *snap.add_jobs() = BusyboxJob(p + "slow", "ws", 64 * kMiB, "sleep 6; echo slept");
  std::unique_ptr<BerthClient> c = b.Client(Role::kPusher);
  const absl::Time t0 = absl::Now();
  ASSERT_TRUE(c->Sync(snap).ok());

  // kill -9 while the slow job runs, then start again on the same data dir.
  ASSERT_TRUE([&] {
    for (absl::Time d = absl::Now() + absl::Seconds(30); absl::Now() < d;
         absl::SleepFor(absl::Milliseconds(100))) {
      absl::StatusOr<v1::Job> j = c->GetJob(p + "slow");
      if (j.ok() && j->state() == v1::JOB_STATE_RUNNING) return true;
    }
    return false;
  }()) << b.Log();
  const absl::Duration to_running = absl::Now() - t0;
  b.Kill9();
  ASSERT_TRUE(b.Restart().ok()) << b.Log();
  c = b.Client(Role::kPusher);

  absl::StatusOr<v1::Job> ok = WaitTerminal(*c, p + "ok", absl::Seconds(60));
  ASSERT_TRUE(ok.ok()) << ok.status() << b.Log();
  EXPECT_EQ(ok->state(), v1::JOB_STATE_SUCCEEDED);
  absl::StatusOr<v1::Job> three = WaitTerminal(*c, p + "three", absl::Seconds(60));
  ASSERT_TRUE(three.ok()) << three.status();
  EXPECT_EQ(three->state(), v1::JOB_STATE_FAILED);
  EXPECT_EQ(three->failure_cause(), v1::FAILURE_CAUSE_NONZERO_EXIT);
  EXPECT_EQ(three->exit_code(), 3);
  absl::StatusOr<v1::Job> oom = WaitTerminal(*c, p + "oom", absl::Seconds(60));
  ASSERT_TRUE(oom.ok()) << oom.status();
  EXPECT_EQ(oom->failure_cause(), v1::FAILURE_CAUSE_OOM_KILLED);
  absl::StatusOr<v1::Job> slow = WaitTerminal(*c, p + "slow", absl::Seconds(60));
  ASSERT_TRUE(slow.ok()) << slow.status();
  EXPECT_EQ(slow->state(), v1::JOB_STATE_SUCCEEDED) << b.Log();
  std::printf("swarm: queued -> RUNNING in %s; all four terminal after %s\n",
              absl::FormatDuration(to_running).c_str(),
              absl::FormatDuration(absl::Now() - t0).c_str());
  // Every job ran once: finished services are removed, none is left over.
  std::unique_ptr<SwarmRuntime> rt =
      *SwarmRuntime::Create(testing::SwarmTestOptions(b.instance()));
  ASSERT_TRUE([&] {
    for (absl::Time d = absl::Now() + absl::Seconds(20); absl::Now() < d;
         absl::SleepFor(absl::Milliseconds(200))) {
      absl::StatusOr<ContainerList> l = rt->List();
      if (l.ok() && l->empty()) return true;
    }
    return false;
  }());
  EXPECT_EQ(b.Log().find("orphan container stopped"), std::string::npos);
}

// RUNNING only once the task runs, with the task's own start: the job's
// startedAt equals its container's State.StartedAt on the node (read from
// that node's engine) within the tolerance of the agent's report, not the
// service's creation (which used to be 1-1.5 s earlier).
TEST(BerthdSwarm, RunningStartedAtIsTheContainersStartOnItsNode) {
  ASSERT_TRUE(testing::SwarmAvailable()) << "no swarm manager at " << testing::SwarmManagerUrl();
  BerthdProcessOptions o;
  o.extra_flags = {"--runtime=swarm",
                   absl::StrCat("--swarm_manager=", testing::SwarmManagerUrl())};
  absl::StatusOr<std::unique_ptr<BerthdProcess>> started = BerthdProcess::Start(o);
  ASSERT_TRUE(started.ok()) << started.status();
  BerthdProcess& b = **started;
  struct Cleanup {
    std::string instance;
    ~Cleanup() { (void)testing::RemoveInstanceServices(instance); }
  } cleanup{b.instance()};
  // The test swarm runs Debian 12's engine (20.10): berthd's start-up check
  // says it keeps finished tasks, with this instance's prune command.
  EXPECT_TRUE(absl::StrContains(b.Log(), "swarm keeps finished jobs' tasks and containers"))
      << b.Log();
  EXPECT_TRUE(absl::StrContains(
      b.Log(), absl::StrCat("docker container prune --force --filter label=berth.instance=",
                            b.instance())))
      << b.Log();
  const std::string id = UniqueJobPrefix() + "started";
  v1::Snapshot snap;
  snap.set_generation(1);
  *snap.add_jobs() = BusyboxJob(id, "ws", 64 * kMiB, "sleep 20");
  std::unique_ptr<BerthClient> c = b.Client(Role::kPusher);
  ASSERT_TRUE(c->Sync(snap).ok());
  absl::StatusOr<v1::Job> j;
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  do {
    j = c->GetJob(id);
    if (j.ok() && j->state() == v1::JOB_STATE_RUNNING) break;
    absl::SleepFor(absl::Milliseconds(100));
  } while (absl::Now() < deadline);
  ASSERT_TRUE(j.ok() && j->state() == v1::JOB_STATE_RUNNING) << b.Log();
  ASSERT_TRUE(j->has_started_at());
  const absl::Time job_started =
      absl::FromUnixSeconds(j->started_at().seconds()) + absl::Nanoseconds(j->started_at().nanos());
  absl::StatusOr<testing::TaskStart> task = testing::RunningTaskStart(b.instance(), id);
  ASSERT_TRUE(task.ok()) << task.status();
  EXPECT_EQ(task->node_id, j->node());
  // The agent reports "running" just after the container started.
  const absl::Duration off = job_started - task->container_started_at;
  EXPECT_GE(off, -absl::Milliseconds(50)) << "startedAt before the container started";
  EXPECT_LE(off, absl::Milliseconds(500)) << "startedAt well after the container started";
  std::printf("swarm startedAt: %s after the container's start, which was %s after the "
              "service's creation\n",
              absl::FormatDuration(off).c_str(),
              absl::FormatDuration(task->container_started_at - task->service_created_at)
                  .c_str());
}

}  // namespace
}  // namespace berth
