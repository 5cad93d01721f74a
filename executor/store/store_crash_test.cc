// Crash consistency with real kills: store_crash_helper runs the store's
// operations in a loop and is SIGKILLed at random moments (mostly 0-100 ms
// into its work loop; one in ten 0-150 ms after spawn, which can land in
// Open or in the creation of the store); after each kill the
// reopened store must be consistent:
//   * event revisions are contiguous and never go backwards across kills;
//   * every job's stored state (and revision) equals its last event's;
//   * the last applied snapshot was applied completely;
//   * every decision the child acknowledged before the kill is present.
// BERTH_CRASH_ITERATIONS / BERTH_CRASH_SEED override the defaults.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "executor/store/rocks_store.h"
#include "executor/store/store_crash_util.h"
#include "executor/store/store_test_util.h"
#include "gtest/gtest.h"

extern char** environ;

namespace berth {
namespace {

namespace v1 = ::berth::v1;

int EnvInt(const char* name, int def) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::atoi(v) : def;
}

// What the test has verified so far (it only grows).
struct Verified {
  uint64_t revision = 0;
  uint64_t generation = 0;
  uint64_t last_snapshot_event_generation = 0;
  std::map<std::string, v1::JobState> state;  // from events
  std::map<std::string, uint64_t> job_revision;
  std::map<uint64_t, std::string> acked;  // decision sequence -> job
};

// Runs the helper and SIGKILLs it `delay_ms` after it reported the store
// open, or, if `from_spawn`, `delay_ms` after starting it (possibly while it
// opens or creates the store). Collects its acks. Timing from readiness keeps
// the kills inside the work loop however loaded the machine is.
void RunAndKill(const std::string& dir, int seed, int delay_ms, bool from_spawn,
                Verified* v) {
  int fds[2];
  ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  const std::string helper = "executor/store/store_crash_helper";
  const std::string seed_s = std::to_string(seed);
  std::vector<char*> argv = {const_cast<char*>(helper.c_str()),
                             const_cast<char*>(dir.c_str()),
                             const_cast<char*>(seed_s.c_str()), nullptr};
  pid_t pid = 0;
  ASSERT_EQ(
      posix_spawn(&pid, helper.c_str(), &fa, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);

  std::string out;
  char buf[4096];
  const auto delay = std::chrono::milliseconds(delay_ms);
  // Until the helper is ready (not from_spawn): a generous bound.
  auto deadline = std::chrono::steady_clock::now() +
                  (from_spawn ? delay : std::chrono::milliseconds(60'000));
  bool armed = from_spawn;
  bool eof = false;
  for (;;) {
    if (!armed && out.rfind("R\n", 0) == 0) {
      armed = true;
      deadline = std::chrono::steady_clock::now() + delay;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) break;
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    ssize_t n = read(fds[0], buf, sizeof(buf));
    if (n <= 0) {
      eof = true;  // the child died on its own: reported below
      break;
    }
    out.append(buf, static_cast<size_t>(n));
  }
  kill(pid, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      << "helper exited by itself (status " << status << ", eof " << eof
      << "); see its stderr above";
  // Everything written before the kill counts as acknowledged.
  for (ssize_t n; (n = read(fds[0], buf, sizeof(buf))) > 0;) {
    out.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    if (lines.eof()) break;  // an incomplete last line is not an ack
    std::istringstream f(line);
    std::string tag, job;
    uint64_t seq = 0;
    if (line == "R") continue;
    ASSERT_TRUE(f >> tag >> seq >> job) << line;
    v->acked[seq] = job;
  }
}

void Verify(const std::string& dir, Verified* v) {
  auto opened = RocksStore::Open(dir);
  ASSERT_TRUE(opened.ok()) << opened.status();
  const RocksStore& store = **opened;

  // Events: contiguous after what was verified, never lost.
  const uint64_t current = store.CurrentRevision();
  ASSERT_GE(current, v->revision) << "acknowledged events were lost";
  ASSERT_EQ(store.OldestRevision(), 1u);
  uint64_t next = v->revision + 1;
  while (next <= current) {
    auto page = store.ReadEvents(next - 1, 1000);
    ASSERT_TRUE(page.ok()) << page.status();
    ASSERT_FALSE(page->events.empty());
    for (const v1::Event& e : page->events) {
      ASSERT_EQ(e.revision(), next) << "revision gap";
      ++next;
      switch (e.type()) {
        case v1::EVENT_TYPE_JOB_STATE_CHANGED:
          v->state[e.job_id()] = e.state();
          v->job_revision[e.job_id()] = e.revision();
          break;
        case v1::EVENT_TYPE_JOB_SPEC_UPDATED:
          ASSERT_EQ(v->state[e.job_id()], e.state());
          v->job_revision[e.job_id()] = e.revision();
          break;
        case v1::EVENT_TYPE_SNAPSHOT_APPLIED:
          ASSERT_GT(e.generation(), v->last_snapshot_event_generation);
          v->last_snapshot_event_generation = e.generation();
          break;
        default:
          FAIL() << "unexpected event type " << e.type();
      }
    }
  }
  v->revision = current;

  // Jobs: state and revision equal their last event's; none unknown.
  size_t jobs = 0;
  for (int s = v1::JOB_STATE_QUEUED; s <= v1::JOB_STATE_REJECTED; ++s) {
    for (const JobRecord& jr : store.JobsInState(static_cast<v1::JobState>(s))) {
      const StoredJob j = jr->Decode();
      ++jobs;
      const std::string& id = j.job.spec().id();
      ASSERT_EQ(v->state.count(id), 1u) << id << " has no event";
      EXPECT_EQ(j.job.state(), v->state[id]) << id;
      EXPECT_EQ(j.job.revision(), v->job_revision[id]) << id;
    }
  }
  EXPECT_EQ(jobs, v->state.size()) << "events name jobs the store lacks";

  // The last snapshot is whole.
  const uint64_t gen = store.LastAppliedGeneration();
  ASSERT_GE(gen, v->generation);
  v->generation = gen;
  EXPECT_EQ(gen, v->last_snapshot_event_generation);
  std::set<std::string> in_snapshot;
  if (gen > 0) {
    for (const v1::JobSpec& spec : CrashSnapshot(gen)) {
      in_snapshot.insert(spec.id());
      auto j = store.GetJob(spec.id());
      ASSERT_TRUE(j.ok()) << "snapshot " << gen
                          << " half-applied: " << j.status();
      if (j->job.state() == v1::JOB_STATE_QUEUED) {
        EXPECT_EQ(j->job.spec().priority(), spec.priority()) << spec.id();
      }
    }
  }
  for (const JobRecord& jr : store.JobsInState(v1::JOB_STATE_QUEUED)) {
    const StoredJob j = jr->Decode();
    EXPECT_EQ(in_snapshot.count(j.job.spec().id()), 1u)
        << "queued job " << j.job.spec().id() << " absent from generation "
        << gen << " was not cancelled";
  }
  for (auto s : {v1::JOB_STATE_ADMITTED, v1::JOB_STATE_RUNNING}) {
    for (const JobRecord& jr : store.JobsInState(s)) {
      const StoredJob j = jr->Decode();
      if (in_snapshot.count(j.job.spec().id()) == 0) {
        EXPECT_EQ(j.stop_intent, StopIntent::kCancel) << j.job.spec().id();
      }
    }
  }

  // Every acknowledged decision is there.
  std::map<std::string, std::set<uint64_t>> by_job;
  for (const auto& [seq, job] : v->acked) by_job[job].insert(seq);
  for (const auto& [job, seqs] : by_job) {
    auto ds = store.DecisionsForJob(job);
    ASSERT_TRUE(ds.ok()) << ds.status();
    std::set<uint64_t> have;
    for (const Decision& d : *ds) have.insert(d.sequence);
    for (uint64_t seq : seqs) {
      ASSERT_EQ(have.count(seq), 1u)
          << "acknowledged decision " << seq << " of " << job << " lost";
    }
  }
}

TEST(StoreCrashTest, ConsistentAfterSigkillAtRandomMoments) {
  const int iterations = EnvInt("BERTH_CRASH_ITERATIONS", 200);
  const int seed = EnvInt("BERTH_CRASH_SEED", 20261122);
  std::mt19937 rng(static_cast<uint32_t>(seed));
  const std::string dir = testing::TempDir("crash");
  Verified v;
  for (int i = 0; i < iterations; ++i) {
    // One kill in ten counts from the spawn (it may hit Open or creation).
    const bool from_spawn = rng() % 10 == 0;
    const int delay_ms = static_cast<int>(rng() % (from_spawn ? 150 : 100));
    SCOPED_TRACE(::testing::Message()
                 << "iteration " << i << ", kill " << delay_ms << " ms after "
                 << (from_spawn ? "spawn" : "open"));
    ASSERT_NO_FATAL_FAILURE(
        RunAndKill(dir, seed + i, delay_ms, from_spawn, &v));
    ASSERT_NO_FATAL_FAILURE(Verify(dir, &v));
    if (::testing::Test::HasFailure()) break;
  }
  // The loop must have done real work, not just died while opening.
  EXPECT_GT(v.revision, 1000u);
  EXPECT_GT(v.acked.size(), 100u);
  EXPECT_GT(v.generation, 20u);
  std::printf("%d kills; revision %lu, generation %lu, %zu acked decisions\n",
              iterations, static_cast<unsigned long>(v.revision),
              static_cast<unsigned long>(v.generation), v.acked.size());
}

// Kills during the creation of a new store: whatever the moment, the next
// Open succeeds (the half-built store is never where Open looks).
TEST(StoreCrashTest, KillDuringCreationNeverLeavesAnUnopenableStore) {
  std::mt19937 rng(7);
  for (int i = 0; i < 25; ++i) {
    const std::string dir = testing::TempDir("create");
    const int delay_ms = static_cast<int>(rng() % 40);
    SCOPED_TRACE(::testing::Message()
                 << "kill " << delay_ms << " ms after spawn");
    Verified v;
    ASSERT_NO_FATAL_FAILURE(RunAndKill(dir, i, delay_ms, true, &v));
    ASSERT_NO_FATAL_FAILURE(Verify(dir, &v));
  }
}

}  // namespace
}  // namespace berth
