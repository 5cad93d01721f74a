// Bounded benchmark of RocksStore. Prints one line per measurement.
//
//   bazel run -c opt //executor/store:store_benchmark -- [scratch dir [--quick] [--repeat=N]]
//
// Steps (targets in parentheses):
//   apply_new        100k-job snapshot into an empty store (<= 1 s)
//   apply_unchanged  the same jobs again, new generation (<= 0.3 s, 0 writes)
//   apply_1pct       1% of the jobs with a changed priority (<= 50 ms)
// The re-syncs carry the specs' fingerprints, as berthd's requests do
// (SnapshotRequest::fingerprints); their cost is printed separately.
//   reopen           close + open a store of 100k jobs and >= 1M events (<= 1
//   s)
// plus bytes on disk per job and the peak RSS of the process.
//
// --repeat=N (after the scratch dir) then re-applies, N times each, an
// unchanged snapshot and a 1%-changed one (alternating between the two job
// lists, so every "1%" call really changes 1,000 jobs) and prints the median
// and the range of each: one process, warm caches, medians of N.
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "executor/store/rocks_store.h"
#include "executor/store/spec_fingerprint.h"

namespace berth {
namespace {

constexpr int kJobs = 100'000;

v1::JobSpec MakeSpec(int n, int priority) {
  v1::JobSpec s;
  s.set_id(absl::StrCat("job-", n));
  s.set_workspace(absl::StrCat("workspace-", n % 50));
  s.set_action("cohort-extraction");
  s.set_image("registry.example/job-runner:v3");
  s.add_argv("run");
  s.add_argv(absl::StrCat("--job=", n));
  (*s.mutable_env())["MODE"] = "batch";
  (*s.mutable_labels())["requested_by"] = absl::StrCat("user", n % 300);
  s.set_priority(priority);
  s.mutable_resources()->set_cpu_millis(1000 + n % 4 * 500);
  s.mutable_resources()->set_memory_bytes(int64_t{1} << (28 + n % 6));
  s.set_pool(n % 10 == 0 ? "database" : "default");
  s.mutable_created_at()->set_seconds(1'790'000'000 + n);
  return s;
}

SnapshotRequest Snapshot(uint64_t gen, int changed_every, int bump) {
  SnapshotRequest r;
  r.generation = gen;
  r.jobs.reserve(kJobs);
  for (int n = 0; n < kJobs; ++n) {
    const bool changed = changed_every > 0 && n % changed_every == 0;
    r.jobs.push_back(MakeSpec(n, (n % 4) + (changed ? bump : 0)));
  }
  r.options.allow_mass_cancel = true;
  return r;
}

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// CPU time of the calling thread: the machine is shared, so wall time alone
// says little when other work competes for the cores.
double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec / 1e9;
}

[[noreturn]] void Die(const absl::Status& s) {
  std::fprintf(stderr, "store_benchmark: %s\n", s.ToString().c_str());
  std::exit(1);
}

std::unique_ptr<RocksStore> OpenOrDie(const std::string& dir) {
  auto s = RocksStore::Open(dir);
  if (!s.ok()) Die(s.status());
  return std::move(*s);
}

struct Timing {
  double wall = 0;  // seconds
  double cpu = 0;   // seconds of the calling thread
  int64_t job_writes = 0;
};

// Applies `r` (as generation `gen`) and returns its cost; prints a line
// unless `name` is null.
Timing Timed(RocksStore& store, const char* name, SnapshotRequest& r,
             uint64_t gen, absl::Time now) {
  r.generation = gen;
  const double c0 = ThreadCpuSeconds();
  const auto t0 = std::chrono::steady_clock::now();
  auto res = store.ApplySnapshot(r, now);
  Timing t;
  t.wall = Seconds(std::chrono::steady_clock::now() - t0);
  t.cpu = ThreadCpuSeconds() - c0;
  if (!res.ok()) Die(res.status());
  t.job_writes = res->job_writes;
  if (name != nullptr) {
    std::printf(
        "%-16s %8.3f s  cpu %.3f s  job_writes=%ld added=%d updated=%d "
        "unchanged=%d\n",
        name, t.wall, t.cpu, static_cast<long>(t.job_writes),
        res->response.added(), res->response.updated(),
        res->response.unchanged());
  }
  return t;
}

// Median, min and max of `v` (non-empty), in milliseconds.
void PrintSeries(const char* name, std::vector<Timing> v) {
  auto line = [&](const char* what, auto field) {
    std::vector<double> x;
    for (const Timing& t : v) x.push_back(field(t) * 1e3);
    std::sort(x.begin(), x.end());
    std::printf("%-16s %-4s median %7.2f ms  min %7.2f  max %7.2f  (n=%zu)\n",
                name, what, x[x.size() / 2], x.front(), x.back(), x.size());
  };
  line("wall", [](const Timing& t) { return t.wall; });
  line("cpu", [](const Timing& t) { return t.cpu; });
  int64_t writes = v.front().job_writes;
  for (const Timing& t : v) writes = std::max(writes, t.job_writes);
  std::printf("%-16s max job_writes per call: %ld\n", name,
              static_cast<long>(writes));
}

double CurrentRssMb() {
  long pages = 0, resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return static_cast<double>(resident) * ::sysconf(_SC_PAGESIZE) / 1e6;
}

int Main(int argc, char** argv) {
  // --quick: only the three snapshot steps (for profiling).
  // --repeat=N: after the three steps, N unchanged and N 1%-changed
  // re-syncs of each kind (then the rest, unless --quick).
  bool quick = false;
  int repeat = 0;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quick") {
      quick = true;
    } else if (arg.rfind("--repeat=", 0) == 0) {
      repeat = std::atoi(arg.c_str() + 9);
    } else {
      std::fprintf(stderr, "store_benchmark: unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  std::string base = argc > 1 ? argv[1] : "";
  if (base.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    base = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/berth-store-bench-",
                        ::getpid());
  }
  std::filesystem::remove_all(base);
  // A store is created only inside an existing directory (RocksStore::Open).
  std::filesystem::create_directories(base);
  const std::string dir = base + "/store";
  const absl::Time now = absl::FromUnixSeconds(1'800'000'000);

  // Snapshots are built before the clock starts: only the store is timed.
  SnapshotRequest s1 = Snapshot(1, 0, 0);
  SnapshotRequest s2 = Snapshot(2, 0, 0);
  SnapshotRequest s3 = Snapshot(3, 100, 10);  // 1% changed
  // berthd computes each spec's fingerprint while the stream is read
  // (SnapshotAssembler) and hands it to the store; their cost, outside the
  // store, on specs built long before (so colder than berthd's):
  std::vector<uint64_t> fp2, fp3;
  {
    const double c0 = ThreadCpuSeconds();
    for (const v1::JobSpec& spec : s2.jobs) fp2.push_back(SpecFingerprint(spec));
    std::printf("fingerprints     %8.1f ns/job (cpu, computed by the caller)\n",
                (ThreadCpuSeconds() - c0) * 1e9 / kJobs);
    for (const v1::JobSpec& spec : s3.jobs) fp3.push_back(SpecFingerprint(spec));
  }
  s2.fingerprints = fp2;
  s3.fingerprints = fp3;
  const double rss_requests = CurrentRssMb();
  std::printf("rss_requests     %8.1f MB (the 3 snapshot requests)\n",
              rss_requests);
  {
    auto store = OpenOrDie(dir);
    Timed(*store, "apply_new", s1, 1, now);
    Timed(*store, "apply_unchanged", s2, 2, now);
    Timed(*store, "apply_1pct", s3, 3, now);
    const double rss = CurrentRssMb();
    std::printf(
        "rss_100k_jobs    %8.1f MB (+%.1f MB over the requests: the "
        "store's memory incl. RocksDB memtables)\n",
        rss, rss - rss_requests);
    // The store holds s3's jobs now; s2's differ from them in 1% of the jobs.
    // Each round: unchanged and 1% with the caller's fingerprints, then the
    // same with the store computing them.
    std::vector<Timing> unchanged, changed, unchanged_own, changed_own;
    uint64_t gen = 3;
    SnapshotRequest* held = &s3;
    SnapshotRequest* other = &s2;
    for (int i = 0; i < repeat; ++i) {
      for (bool given : {true, false}) {
        held->fingerprints = given ? (held == &s2 ? fp2 : fp3) : std::vector<uint64_t>{};
        other->fingerprints = given ? (other == &s2 ? fp2 : fp3) : std::vector<uint64_t>{};
        (given ? unchanged : unchanged_own).push_back(Timed(*store, nullptr, *held, ++gen, now));
        (given ? changed : changed_own).push_back(Timed(*store, nullptr, *other, ++gen, now));
        std::swap(held, other);
      }
    }
    if (repeat > 0) {
      std::printf("-- caller's fingerprints (berthd):\n");
      PrintSeries("apply_unchanged", unchanged);
      PrintSeries("apply_1pct", changed);
      std::printf("-- fingerprints computed by the store:\n");
      PrintSeries("apply_unchanged", unchanged_own);
      PrintSeries("apply_1pct", changed_own);
    }
  }
  if (quick) return 0;
  {
    auto store = OpenOrDie(dir);  // flushed on close: measure the files
    auto bytes = store->DiskUsageBytes();
    if (!bytes.ok()) Die(bytes.status());
    std::printf("disk_per_job     %8.0f B    (%d jobs, %lu events, %.1f MB)\n",
                static_cast<double>(*bytes) / kJobs, kJobs,
                static_cast<unsigned long>(store->CurrentRevision()),
                static_cast<double>(*bytes) / 1e6);
    // Grow the event log to >= 1M events: every job's priority changes.
    for (uint64_t g = store->LastAppliedGeneration() + 1;
         store->CurrentRevision() < 1'000'000; ++g) {
      SnapshotRequest all_changed = Snapshot(g, 1, static_cast<int>(g));
      auto res = store->ApplySnapshot(all_changed, now);
      if (!res.ok()) Die(res.status());
    }
  }
  {
    const double c0 = ThreadCpuSeconds();
    const auto t0 = std::chrono::steady_clock::now();
    auto store = OpenOrDie(dir);
    const double secs = Seconds(std::chrono::steady_clock::now() - t0);
    const double cpu = ThreadCpuSeconds() - c0;
    auto bytes = store->DiskUsageBytes();
    if (!bytes.ok()) Die(bytes.status());
    std::printf(
        "reopen           %8.3f s  cpu %.3f s  (%zu queued jobs, %lu events, "
        "%.1f MB on disk)\n",
        secs, cpu, store->JobsInState(v1::JOB_STATE_QUEUED).size(),
        static_cast<unsigned long>(store->CurrentRevision()),
        static_cast<double>(*bytes) / 1e6);
  }
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  std::printf("peak_rss         %8.1f MB\n", ru.ru_maxrss / 1024.0);
  std::filesystem::remove_all(base);
  return 0;
}

}  // namespace
}  // namespace berth

int main(int argc, char** argv) { return berth::Main(argc, argv); }
