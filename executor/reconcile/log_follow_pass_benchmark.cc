// Reconcile-pass latency with live log capture, against the real
// dockerd with RocksDB and the log archive in temporary directories
// (bounded; cleans up):
//
//   bazel run -c opt //executor/reconcile:log_follow_pass_benchmark -- [runs] [passes] [end]
//
// ("end": the job's end only.)
//
// 20 jobs run `sleep` throughout (each pass observes them; with capture on
// each has a follow). Each run measures `passes` back-to-back passes (p50,
// p99) in these phases, one after the other:
//   idle      capture on, no noisy job (the reference);
//   follow    capture on (write buffer, follow threads in the idle
//             scheduling class, SCHED_IDLE: berthd's default), one
//             job (1 core) writing 5 MiB of 100-byte lines 10 times a
//             second -- 50 MB/s if Docker takes it that fast (the measured
//             rate is printed) --, its log followed, capped at 64 MiB per
//             stream;
//   nice0     the same, the follow threads at berthd's own priority;
//   unbuf     the same, nice 0 and no write buffer (a write per line: the
//             follow before the buffer);
//   nofollow  the same noisy job with capture off (what Docker's own work
//             costs the pass, Berth reading nothing);
//   cpu       the CPU peer: a job burning a whole core that prints
//             nothing, capture off (what any busy job costs the pass on
//             this machine's cores, the floor for a noisy one).
// Prints each run, the medians over runs and each phase's p50 over the
// same run's idle p50 and over its cpu p50 (medians of the runs' ratios),
// the pass's own CPU time per pass (is a slower pass doing more work, or
// waiting for a core?), and what the follow
// delivered of the noisy job (bytes in all from the kept log's marker, over
// its run time): Docker 20.10's follow can skip output when it lags.
//
// Then, per run, a job's end: a job prints 10 MiB as fast as it can and
// exits, and passes run back to back from its sync until it is SUCCEEDED
// (capture off, so the whole log is read at the end; starts off the pass,
// as in berthd, so that no pass waits for Docker's create), twice:
//   inline      the pass that sees the exit reads the whole log;
//   background  the read runs on the reconciler's two log threads
//               (ReconcilerOptions::background_log_capture, berthd's way).
// Prints the p50 and the longest pass of that window, and its length.
#include <time.h>

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
// A whole core, no output.
constexpr char kBusy[] = "while :; do :; done";

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
  std::unique_ptr<LogArchive> archive;           // buffered (the default)
  std::unique_ptr<LogArchive> unbuffered_archive;  // a write per piece
  std::unique_ptr<LiveLogCapture> live;            // SCHED_IDLE
  std::unique_ptr<LiveLogCapture> live_nice0;
  std::unique_ptr<LiveLogCapture> live_unbuffered;  // nice 0
  std::unique_ptr<PlanCache> plans;
  std::unique_ptr<Reconciler> follow;  // capture on
  std::unique_ptr<Reconciler> follow_nice0;
  std::unique_ptr<Reconciler> follow_unbuffered;
  std::unique_ptr<Reconciler> plain;  // capture off
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

double ThreadCpuMs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

struct Passes {
  double p50 = -1, p99 = -1;
  double cpu_ms = -1;  // the calling thread's CPU time per pass, mean
};

// p50 and p99 of `passes` back-to-back passes, in milliseconds, and the
// pass's own CPU time (the calling thread: the pass runs on it).
Passes MeasurePasses(Reconciler& r, int passes) {
  std::vector<double> ms;
  const double cpu0 = ThreadCpuMs();
  for (int i = 0; i < passes; ++i) {
    const absl::Time t0 = absl::Now();
    if (!r.RunPass().ok()) return Passes();
    ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - t0));
  }
  Passes out;
  out.cpu_ms = (ThreadCpuMs() - cpu0) / passes;
  std::sort(ms.begin(), ms.end());
  out.p50 = ms[ms.size() / 2];
  out.p99 = ms[std::min(ms.size() - 1, ms.size() * 99 / 100)];
  return out;
}

// A job's end: 10 MiB of 100-byte lines, then exit 0.
constexpr char kEnding[] =
    "yes 0123456789012345678901234567890123456789012345678901234567890123456789"
    "01234567890123456789012345678 | head -c 10485700";

struct EndPasses {
  double p50 = -1, max = -1, seconds = -1;
};

// Passes back to back from the sync of `id` (printing kEnding) until it is
// SUCCEEDED (at most 120 s).
EndPasses MeasureEnd(Bench& b, Reconciler& r, const std::string& id) {
  std::vector<v1::JobSpec> jobs = b.idle;
  jobs.push_back(Job(id, kEnding, 1000));
  EndPasses out;
  if (!b.Sync(jobs)) return out;
  const absl::Time t0 = absl::Now();
  std::vector<double> ms;
  while (b.State(id) != v1::JOB_STATE_SUCCEEDED && absl::Now() - t0 < absl::Seconds(120)) {
    const absl::Time p0 = absl::Now();
    if (!r.RunPass().ok()) return out;
    ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - p0));
  }
  if (b.State(id) != v1::JOB_STATE_SUCCEEDED) return out;
  out.seconds = absl::ToDoubleSeconds(absl::Now() - t0);
  std::sort(ms.begin(), ms.end());
  out.p50 = ms[ms.size() / 2];
  out.max = ms.back();
  return out;
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
  LogArchiveOptions unbuffered{dir + "/logs-unbuffered", int64_t{64} << 20};
  unbuffered.write_buffer_bytes = 0;
  b.unbuffered_archive = *LogArchive::Open(unbuffered);
  LiveLogCaptureOptions idle_class;
  idle_class.idle_class = true;
  b.live = std::make_unique<LiveLogCapture>(*b.archive, *b.runtime, idle_class);
  const LiveLogCaptureOptions nice0;  // the follow threads at berthd's own priority
  b.live_nice0 = std::make_unique<LiveLogCapture>(*b.archive, *b.runtime, nice0);
  b.live_unbuffered =
      std::make_unique<LiveLogCapture>(*b.unbuffered_archive, *b.runtime, nice0);
  b.plans = std::make_unique<PlanCache>(*b.store, *Clock::Real(), testing::TestBudgets(64, 40),
                                        planner::Policy());
  ReconcilerOptions o;
  o.stop_grace = absl::Seconds(1);
  o.log_archive = b.archive.get();
  auto with_live = [&](LiveLogCapture* live, LogArchive* archive) {
    ReconcilerOptions r = o;
    r.live_logs = live;
    r.log_archive = archive;
    return std::make_unique<Reconciler>(*b.store, *b.runtime, *Clock::Real(), *b.plans, r);
  };
  b.follow = with_live(b.live.get(), b.archive.get());
  b.follow_nice0 = with_live(b.live_nice0.get(), b.archive.get());
  b.follow_unbuffered = with_live(b.live_unbuffered.get(), b.unbuffered_archive.get());
  b.plain = std::make_unique<Reconciler>(*b.store, *b.runtime, *Clock::Real(), *b.plans, o);
  ReconcilerOptions inline_logs = o;
  inline_logs.background_starts = true;
  auto inline_reads = std::make_unique<Reconciler>(*b.store, *b.runtime, *Clock::Real(), *b.plans,
                                                   inline_logs);
  ReconcilerOptions in_background = inline_logs;
  in_background.background_log_capture = true;
  auto background = std::make_unique<Reconciler>(*b.store, *b.runtime, *Clock::Real(), *b.plans,
                                                 in_background);
  const bool end_only = argc > 3 && std::string(argv[3]) == "end";
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
  struct Phase {
    const char* name;
    Reconciler* r;
    LogArchive* archive;  // null: no follow
    const char* shell;
  };
  const Phase phases[] = {{"follow", b.follow.get(), b.archive.get(), kNoisy},
                          {"nice0", b.follow_nice0.get(), b.archive.get(), kNoisy},
                          {"unbuf", b.follow_unbuffered.get(), b.unbuffered_archive.get(), kNoisy},
                          {"nofollow", b.plain.get(), nullptr, kNoisy},
                          {"cpu", b.plain.get(), nullptr, kBusy}};
  constexpr int kPhases = 5;
  constexpr int kCpuPeer = 4;
  std::printf("%d idle jobs running; %d passes per phase, %d runs\n", kIdleJobs, passes, runs);
  std::printf("run   idle p50/p99 ms");
  for (const Phase& p : phases) std::printf("   %8s p50/p99 (xidle)", p.name);
  std::printf("   followed MB/s (follow, nice0, unbuf)\n");
  std::vector<double> i50, i99, icpu, p50[kPhases], p99[kPhases], ratio[kPhases], rates[kPhases];
  std::vector<double> cpu[kPhases], peer_ratio[kPhases];
  for (int run = 1; run <= (end_only ? 0 : runs); ++run) {
    const Passes idle = MeasurePasses(*b.follow, passes);
    i50.push_back(idle.p50);
    i99.push_back(idle.p99);
    icpu.push_back(idle.cpu_ms);
    std::printf("%3d   %6.2f / %6.2f", run, idle.p50, idle.p99);
    std::string rate_text;
    for (int k = 0; k < kPhases; ++k) {
      Reconciler& r = *phases[k].r;
      const std::string id = absl::StrCat("noisy-", run, "-", k);
      std::vector<v1::JobSpec> jobs = b.idle;
      jobs.push_back(Job(id, phases[k].shell, 1000));  // a whole core
      const absl::Time t0 = absl::Now();
      if (!b.Sync(jobs) ||
          !b.PassUntil(r, [&] { return b.State(id) == v1::JOB_STATE_RUNNING; })) {
        return 1;
      }
      absl::SleepFor(absl::Seconds(1));  // printing at full rate
      const auto m = MeasurePasses(r, passes);
      if (!b.Sync(b.idle) ||
          !b.PassUntil(r, [&] { return b.State(id) == v1::JOB_STATE_CANCELLED; })) {
        return 1;
      }
      const double secs = absl::ToDoubleSeconds(absl::Now() - t0);
      p50[k].push_back(m.p50);
      p99[k].push_back(m.p99);
      cpu[k].push_back(m.cpu_ms);
      ratio[k].push_back(m.p50 / idle.p50);
      std::printf("   %8.2f / %6.2f (%4.2f)", m.p50, m.p99, m.p50 / idle.p50);
      if (phases[k].archive == nullptr) continue;
      double rate = -1;
      // "[berth: N bytes cut here; TOTAL bytes in all]" in the kept stdout.
      bool eof = false;
      absl::StatusOr<std::string> head = phases[k].archive->Read(
          id, 1, LogStream::kStdout, (int64_t{32} << 20) - 200, 400, &eof);
      if (head.ok()) {
        const size_t at = head->find("bytes cut here; ");
        int64_t total = 0;
        if (at != std::string::npos &&
            absl::SimpleAtoi(head->substr(at + 16, head->find(' ', at + 16) - at - 16), &total)) {
          rate = static_cast<double>(total) / (1 << 20) / secs;
        }
      }
      std::optional<AttemptLogInfo> info = phases[k].archive->Info(id, 1);
      if (rate < 0 && info.has_value()) {  // nothing cut: the file is all
        rate = static_cast<double>(info->stdout_bytes) / (1 << 20) / secs;
      }
      rates[k].push_back(rate);
      rate_text += absl::StrCat(" ", static_cast<int>(rate * 10) / 10.0);
    }
    for (int k = 0; k < kPhases; ++k) peer_ratio[k].push_back(p50[k].back() / p50[kCpuPeer].back());
    std::printf("  %s\n", rate_text.c_str());
    std::fflush(stdout);
  }
  if (!end_only) {
    std::printf("med   %6.2f / %6.2f", Median(i50), Median(i99));
    for (int k = 0; k < kPhases; ++k) {
      std::printf("   %8.2f / %6.2f (%4.2f)", Median(p50[k]), Median(p99[k]), Median(ratio[k]));
    }
    std::printf("   %.1f %.1f %.1f\n", Median(rates[0]), Median(rates[1]), Median(rates[2]));
    std::printf("\nphase     p50 x idle   p50 x cpu peer   pass CPU ms/pass (idle %.2f)\n",
                Median(icpu));
    for (int k = 0; k < kPhases; ++k) {
      std::printf("%-8s  %10.2f   %14.2f   %16.2f\n", phases[k].name, Median(ratio[k]),
                  Median(peer_ratio[k]), Median(cpu[k]));
    }
  }
  std::printf("\na job's end (10 MiB, read whole): pass p50 / longest ms, seconds to SUCCEEDED\n");
  std::printf("run  inline                   background\n");
  std::vector<double> e50[2], emax[2], esec[2];
  for (int run = 1; run <= runs; ++run) {
    EndPasses e[2];
    for (int k = 0; k < 2; ++k) {
      e[k] = MeasureEnd(b, k == 0 ? *inline_reads : *background,
                        absl::StrCat("ending-", run, "-", k));
      if (e[k].seconds < 0) {
        std::fprintf(stderr, "the ending job did not succeed\n");
        return 1;
      }
      e50[k].push_back(e[k].p50);
      emax[k].push_back(e[k].max);
      esec[k].push_back(e[k].seconds);
    }
    std::printf("%3d  %6.2f / %7.1f  %5.1f s  %6.2f / %7.1f  %5.1f s\n", run, e[0].p50, e[0].max,
                e[0].seconds, e[1].p50, e[1].max, e[1].seconds);
    std::fflush(stdout);
  }
  std::printf("med  %6.2f / %7.1f  %5.1f s  %6.2f / %7.1f  %5.1f s\n", Median(e50[0]),
              Median(emax[0]), Median(esec[0]), Median(e50[1]), Median(emax[1]), Median(esec[1]));
  inline_reads->StopStarts();
  inline_reads.reset();
  background->StopStarts();
  background.reset();
  b.follow.reset();
  b.follow_nice0.reset();
  b.follow_unbuffered.reset();
  b.plain.reset();
  b.live.reset();
  b.live_nice0.reset();
  b.live_unbuffered.reset();
  b.store.reset();
  if (std::system(absl::StrCat("rm -rf ", dir).c_str()) != 0) {
    std::fprintf(stderr, "could not remove %s\n", dir.c_str());
  }
  return 0;
}

}  // namespace
}  // namespace berth

int main(int argc, char** argv) { return berth::Main(argc, argv); }
