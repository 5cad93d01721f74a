// Reconcile-pass latency with live log capture, against the real
// dockerd with RocksDB and the log archive in temporary directories
// (bounded; cleans up):
//
//   bazel run -c opt //executor/reconcile:log_follow_pass_benchmark -- [runs] [passes]
//
// 20 jobs run `sleep` throughout (each pass observes them; with capture on
// each has a follow). Each run measures `passes` back-to-back passes (p50,
// p99) in three phases:
//   idle    capture on, no noisy job;
//   noisy   capture on, one job (1 core) writing 5 MiB of 100-byte lines 10
//           times a second -- 50 MB/s if Docker takes it that fast (its
//           json-file logger is the limit: the measured rate is printed) --
//           its log followed, capped at 64 MiB per stream;
//   nofollow the same noisy job with capture off (what Docker's own work
//           costs the pass, Berth reading nothing).
// Prints each run and the medians over runs, and what the follow delivered
// of the noisy job (bytes in all from the kept log's marker, over its run
// time): Docker 20.10's follow skips whole rotated files when dockerd's
// re-reading lags, so this is less than the job printed under load.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "executor/logs/live_log_capture.h"
#include "executor/logs/log_archive.h"
#include "executor/reconcile/plan_snapshot.h"
#include "executor/reconcile/reconciler.h"
#include "executor/reconcile/testing/test_jobs.h"
#include "executor/runtime/docker/docker_runtime.h"
#include "executor/runtime/docker/testing/docker_test_util.h"
#include "executor/store/rocks_store.h"
#include "planner/base/clock.h"

namespace berth {
namespace {

using ::berth::testing::InstanceCleanup;
using ::berth::testing::TestOptions;
using ::berth::testing::UniqueName;

constexpr int kIdleJobs = 20;
// 5 MiB of 100-byte lines, written 10 times a second.
constexpr char kNoisy[] =
    "yes 0123456789012345678901234567890123456789012345678901234567890123456789"
    "01234567890123456789012345678 | head -c 5242800 > /tmp/c; "
    "while :; do cat /tmp/c; usleep 100000; done";

v1::JobSpec Job(const std::string& id, const std::string& shell, int64_t cpu_millis = 100) {
  v1::JobSpec j = testing::TestJob(id, 0);
  j.mutable_resources()->set_memory_bytes(64 << 20);
  j.mutable_resources()->set_cpu_millis(cpu_millis);
  j.clear_argv();
  j.add_argv("sh");
  j.add_argv("-c");
  j.add_argv(shell);
  return j;
}

struct Bench {
  std::unique_ptr<DockerRuntime> runtime;
  std::unique_ptr<RocksStore> store;
  std::unique_ptr<LogArchive> archive;
  std::unique_ptr<LiveLogCapture> live;
  std::unique_ptr<PlanCache> plans;
  std::unique_ptr<Reconciler> follow;  // capture on
  std::unique_ptr<Reconciler> plain;   // capture off
  uint64_t generation = 0;
  std::vector<v1::JobSpec> idle;

  bool Sync(std::vector<v1::JobSpec> jobs) {
    SnapshotRequest r;
    r.generation = ++generation;
    r.jobs = std::move(jobs);
    r.options.allow_mass_cancel = true;
    absl::StatusOr<SnapshotResult> s = store->ApplySnapshot(r, absl::Now());
    if (!s.ok()) std::fprintf(stderr, "sync: %s\n", s.status().ToString().c_str());
    return s.ok();
  }
  v1::JobState State(const std::string& id) {
    absl::StatusOr<StoredJob> j = store->GetJob(id);
    return j.ok() ? j->job.state() : v1::JOB_STATE_UNSPECIFIED;
  }
  // Passes until `done` or 60 s.
  bool PassUntil(Reconciler& r, const std::function<bool()>& done) {
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    while (absl::Now() < deadline) {
      if (!r.RunPass().ok()) return false;
      if (done()) return true;
      absl::SleepFor(absl::Milliseconds(50));
    }
    return false;
  }
};

// p50 and p99 of `passes` back-to-back passes, in milliseconds.
std::pair<double, double> MeasurePasses(Reconciler& r, int passes) {
  std::vector<double> ms;
  for (int i = 0; i < passes; ++i) {
    const absl::Time t0 = absl::Now();
    if (!r.RunPass().ok()) return {-1, -1};
    ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - t0));
  }
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms[std::min(ms.size() - 1, ms.size() * 99 / 100)]};
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? -1 : v[v.size() / 2];
}

int Main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 5;
  const int passes = argc > 2 ? std::atoi(argv[2]) : 200;
  const std::string instance = UniqueName("passbench");
  InstanceCleanup cleanup(instance);
  char tmpl[] = "/tmp/berth-pass-bench-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return 1;
  const std::string dir = tmpl;
  Bench b;
  b.runtime = *DockerRuntime::Create(TestOptions(instance));
  b.store = *RocksStore::Open(dir + "/store");
  b.archive = *LogArchive::Open({dir + "/logs", int64_t{64} << 20});
  b.live = std::make_unique<LiveLogCapture>(*b.archive, *b.runtime);
  b.plans = std::make_unique<PlanCache>(*b.store, *Clock::Real(), testing::TestBudgets(64, 40),
                                        planner::Policy());
  ReconcilerOptions o;
  o.stop_grace = absl::Seconds(1);
  o.log_archive = b.archive.get();
  ReconcilerOptions with_follow = o;
  with_follow.live_logs = b.live.get();
  b.follow = std::make_unique<Reconciler>(*b.store, *b.runtime, *Clock::Real(), *b.plans,
                                          with_follow);
  b.plain = std::make_unique<Reconciler>(*b.store, *b.runtime, *Clock::Real(), *b.plans, o);
  for (int i = 0; i < kIdleJobs; ++i) {
    b.idle.push_back(Job(absl::StrCat("idle-", i), "sleep 3600"));
  }
  if (!b.Sync(b.idle) || !b.PassUntil(*b.follow, [&] {
        for (const auto& j : b.idle) {
          if (b.State(j.id()) != v1::JOB_STATE_RUNNING) return false;
        }
        return true;
      })) {
    std::fprintf(stderr, "idle jobs did not start\n");
    return 1;
  }
  std::printf("%d idle jobs running; %d passes per phase, %d runs\n", kIdleJobs, passes, runs);
  std::printf("run  idle p50/p99 ms   noisy p50/p99 ms   nofollow p50/p99 ms   followed MB/s\n");
  std::vector<double> i50, i99, n50, n99, f50, f99, rates;
  for (int run = 1; run <= runs; ++run) {
    auto idle = MeasurePasses(*b.follow, passes);
    std::pair<double, double> phases[2];
    double rate = -1;
    for (int k = 0; k < 2; ++k) {
      Reconciler& r = k == 0 ? *b.follow : *b.plain;
      const std::string id = absl::StrCat("noisy-", run, "-", k);
      std::vector<v1::JobSpec> jobs = b.idle;
      jobs.push_back(Job(id, kNoisy, 1000));  // a whole core: prints as fast as Docker takes
      const absl::Time t0 = absl::Now();
      if (!b.Sync(jobs) ||
          !b.PassUntil(r, [&] { return b.State(id) == v1::JOB_STATE_RUNNING; })) {
        return 1;
      }
      absl::SleepFor(absl::Seconds(1));  // printing at full rate
      phases[k] = MeasurePasses(r, passes);
      if (!b.Sync(b.idle) ||
          !b.PassUntil(r, [&] { return b.State(id) == v1::JOB_STATE_CANCELLED; })) {
        return 1;
      }
      const double secs = absl::ToDoubleSeconds(absl::Now() - t0);
      if (k == 0) {
        // "[berth: N bytes cut here; TOTAL bytes in all]" in the kept stdout.
        bool eof = false;
        absl::StatusOr<std::string> head =
            b.archive->Read(id, 1, LogStream::kStdout, (int64_t{32} << 20) - 200, 400, &eof);
        if (head.ok()) {
          const size_t at = head->find("bytes cut here; ");
          int64_t total = 0;
          if (at != std::string::npos &&
              absl::SimpleAtoi(head->substr(at + 16, head->find(' ', at + 16) - at - 16),
                               &total)) {
            rate = static_cast<double>(total) / (1 << 20) / secs;
          }
        }
        std::optional<AttemptLogInfo> info = b.archive->Info(id, 1);
        if (std::getenv("BENCH_DEBUG") != nullptr && info.has_value()) {
          std::fprintf(stderr, "noisy: kept %lld bytes in %.1f s, rate %.1f\n",
                       static_cast<long long>(info->stdout_bytes), secs, rate);
        }
        if (rate < 0 && info.has_value()) {  // nothing cut: the file is all
          rate = static_cast<double>(info->stdout_bytes) / (1 << 20) / secs;
        }
      }
    }
    std::printf("%3d  %6.2f / %6.2f    %6.2f / %6.2f     %6.2f / %6.2f        %.1f\n", run,
                idle.first, idle.second, phases[0].first, phases[0].second, phases[1].first,
                phases[1].second, rate);
    std::fflush(stdout);
    i50.push_back(idle.first);
    i99.push_back(idle.second);
    n50.push_back(phases[0].first);
    n99.push_back(phases[0].second);
    f50.push_back(phases[1].first);
    f99.push_back(phases[1].second);
    rates.push_back(rate);
  }
  std::printf("med  %6.2f / %6.2f    %6.2f / %6.2f     %6.2f / %6.2f        %.1f\n", Median(i50),
              Median(i99), Median(n50), Median(n99), Median(f50), Median(f99), Median(rates));
  b.follow.reset();
  b.plain.reset();
  b.live.reset();
  b.store.reset();
  if (std::system(absl::StrCat("rm -rf ", dir).c_str()) != 0) {
    std::fprintf(stderr, "could not remove %s\n", dir.c_str());
  }
  return 0;
}

}  // namespace
}  // namespace berth

int main(int argc, char** argv) { return berth::Main(argc, argv); }
