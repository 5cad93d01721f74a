// Launch latency against the real dockerd, beside its floor measured in the
// same run (bounded; cleans up; RocksDB in a temporary directory):
//
//   bazel run -c opt //executor/reconcile:launch_latency_benchmark -- [runs] [parallelism]
//
// Berth's path is berthd's: a ReconcileLoop over a Reconciler with
// background starts and `parallelism` start slots (berthd's
// --start_parallelism, default 4), a pass triggered by each snapshot and
// each finished start. A launch is a job's admission (Job.admitted_at, the
// decision made durable) to its process starting (Docker's State.StartedAt).
// Each run measures:
//   single  10 jobs submitted one at a time to an idle executor (a slot is
//           free: what a job waits once admitted), median and p90;
//   wave    20 jobs submitted at once: the first admission to the last
//           process start, and each job's launch (median, p90).
// The floor, in the same run, is the same containers (same image, command,
// CPU and memory) created and started by a plain loop of Docker API calls
// (Runtime::Start: one create, one start), one after the other: "one" is a
// call's start to its process start; "wave" the first call to the last
// process start of 20, and each job's launch in the wave the first call to
// its process start (the loop's jobs all wanted at its start, as a wave's
// are all admitted at once). Prints each run, the medians over runs and each figure as a ratio
// to its floor.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "executor/reconcile/plan_snapshot.h"
#include "executor/reconcile/reconcile_loop.h"
#include "executor/reconcile/reconciler.h"
#include "executor/reconcile/testing/test_jobs.h"
#include "executor/runtime/docker/docker_runtime.h"
#include "executor/runtime/docker/testing/docker_test_util.h"
#include "executor/store/rocks_store.h"
#include "planner/base/clock.h"
#include "planner/convert/convert.h"

namespace berth {
namespace {

using ::berth::testing::InstanceCleanup;
using ::berth::testing::TestOptions;
using ::berth::testing::UniqueName;
using ::berth::testing::WaitFor;

constexpr int kSingles = 10;
constexpr int kWave = 20;
constexpr int64_t kCpuMillis = 100;
constexpr int64_t kMemory = int64_t{64} << 20;
const char* const kArgv[] = {"sleep", "600"};

v1::JobSpec Job(const std::string& id) {
  v1::JobSpec j = testing::TestJob(id, 0);
  j.mutable_resources()->set_memory_bytes(kMemory);
  j.mutable_resources()->set_cpu_millis(kCpuMillis);
  j.clear_argv();
  for (const char* a : kArgv) j.add_argv(a);
  return j;
}

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return -1;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

struct Figures {
  double single_p50 = -1, single_p90 = -1;  // ms
  double wave = -1;                          // ms, first admission to last start
  double wave_p50 = -1, wave_p90 = -1;       // ms, each job's launch in the wave
};

class Bench {
 public:
  Bench(const std::string& instance, const std::string& dir, int parallelism) {
    runtime_ = *DockerRuntime::Create(TestOptions(instance));
    store_ = *RocksStore::Open(dir + "/store");
    plans_ = std::make_unique<PlanCache>(*store_, *Clock::Real(),
                                         testing::TestBudgets(64, 2 * kWave), planner::Policy());
    ReconcilerOptions o;
    o.start_parallelism = parallelism;
    o.background_starts = true;
    o.stop_grace = absl::Seconds(1);
    reconciler_ = std::make_unique<Reconciler>(*store_, *runtime_, *Clock::Real(), *plans_, o);
    loop_ = std::make_unique<ReconcileLoop>(*reconciler_, absl::Seconds(1));
    ReconcileLoop* loop = loop_.get();
    reconciler_->set_on_start_done([loop] { loop->Trigger(); });
    loop_->Start();
  }
  ~Bench() {
    loop_->Stop();
    reconciler_->set_on_start_done(nullptr);
  }

  // Applies a snapshot of `ids` and wakes the loop, as berthd's SyncJobs.
  bool Sync(const std::vector<std::string>& ids) {
    SnapshotRequest r;
    r.generation = ++generation_;
    for (const std::string& id : ids) r.jobs.push_back(Job(id));
    r.options.allow_mass_cancel = true;
    absl::StatusOr<SnapshotResult> s = store_->ApplySnapshot(r, absl::Now());
    if (!s.ok()) std::fprintf(stderr, "sync: %s\n", s.status().ToString().c_str());
    loop_->Trigger();
    return s.ok();
  }

  bool AllIn(const std::vector<std::string>& ids, v1::JobState state) {
    return WaitFor(
        [&] {
          for (const std::string& id : ids) {
            absl::StatusOr<StoredJob> j = store_->GetJob(id);
            if (!j.ok() || j->job.state() != state) return false;
          }
          return true;
        },
        absl::Seconds(120), absl::Milliseconds(20));
  }

  // Admission and process start of a running job; false if unknown.
  bool Launch(const std::string& id, absl::Time* admitted, absl::Time* started) {
    absl::StatusOr<StoredJob> j = store_->GetJob(id);
    absl::StatusOr<ContainerObservation> o = runtime_->Inspect(id);
    if (!j.ok() || !j->job.has_admitted_at() || !o.ok() || !o->started_at.has_value()) {
      return false;
    }
    *admitted = planner::FromProto(j->job.admitted_at());
    *started = *o->started_at;
    return true;
  }

  // Cancels everything and waits for the containers to stop.
  bool Clear(const std::vector<std::string>& ids) {
    return Sync({}) && AllIn(ids, v1::JOB_STATE_CANCELLED);
  }

 private:
  std::unique_ptr<DockerRuntime> runtime_;
  std::unique_ptr<RocksStore> store_;
  std::unique_ptr<PlanCache> plans_;
  std::unique_ptr<Reconciler> reconciler_;
  std::unique_ptr<ReconcileLoop> loop_;
  uint64_t generation_ = 0;
};

bool MeasureBerth(Bench& b, int run, Figures* f) {
  std::vector<double> singles;
  std::vector<std::string> all;
  for (int i = 0; i < kSingles; ++i) {
    const std::string id = absl::StrCat("single-", run, "-", i);
    if (!b.Sync({id}) || !b.AllIn({id}, v1::JOB_STATE_RUNNING)) return false;
    absl::Time admitted, started;
    if (!b.Launch(id, &admitted, &started)) return false;
    singles.push_back(absl::ToDoubleMilliseconds(started - admitted));
    if (!b.Clear({id})) return false;
  }
  f->single_p50 = Quantile(singles, 0.5);
  f->single_p90 = Quantile(singles, 0.9);
  std::vector<std::string> wave;
  for (int i = 0; i < kWave; ++i) wave.push_back(absl::StrCat("wave-", run, "-", i));
  if (!b.Sync(wave) || !b.AllIn(wave, v1::JOB_STATE_RUNNING)) return false;
  absl::Time first = absl::InfiniteFuture(), last = absl::InfinitePast();
  std::vector<double> launches;
  for (const std::string& id : wave) {
    absl::Time admitted, started;
    if (!b.Launch(id, &admitted, &started)) return false;
    first = std::min(first, admitted);
    last = std::max(last, started);
    launches.push_back(absl::ToDoubleMilliseconds(started - admitted));
  }
  f->wave = absl::ToDoubleMilliseconds(last - first);
  f->wave_p50 = Quantile(launches, 0.5);
  f->wave_p90 = Quantile(launches, 0.9);
  return b.Clear(wave);
}

// The floor: Runtime::Start in a plain loop, one after the other.
bool MeasureFloor(const std::string& instance, int run, Figures* f) {
  absl::StatusOr<std::unique_ptr<DockerRuntime>> rt = DockerRuntime::Create(TestOptions(instance));
  if (!rt.ok()) return false;
  std::vector<double> each, from_first;
  absl::Time first = absl::InfiniteFuture(), last = absl::InfinitePast();
  for (int i = 0; i < kWave; ++i) {
    ContainerSpec spec = testing::TestSpec(absl::StrCat("floor-", run, "-", i),
                                           std::vector<std::string>(std::begin(kArgv),
                                                                    std::end(kArgv)));
    spec.workspace = "ws";
    spec.cpu_millis = kCpuMillis;
    spec.memory_bytes = kMemory;
    const absl::Time t0 = absl::Now();
    absl::StatusOr<StartResult> r = (*rt)->Start(spec);
    absl::StatusOr<ContainerObservation> o =
        r.ok() ? (*rt)->Inspect(spec.job_id) : absl::StatusOr<ContainerObservation>(r.status());
    if (!o.ok() || !o->started_at.has_value()) {
      std::fprintf(stderr, "floor start: %s\n", o.status().ToString().c_str());
      return false;
    }
    first = std::min(first, t0);
    last = std::max(last, *o->started_at);
    each.push_back(absl::ToDoubleMilliseconds(*o->started_at - t0));
    from_first.push_back(absl::ToDoubleMilliseconds(*o->started_at - first));
  }
  f->single_p50 = Quantile(each, 0.5);
  f->single_p90 = Quantile(each, 0.9);
  f->wave_p50 = Quantile(from_first, 0.5);
  f->wave_p90 = Quantile(from_first, 0.9);
  f->wave = absl::ToDoubleMilliseconds(last - first);
  return testing::RemoveInstanceContainers(instance).ok();
}

void Print(const char* label, const Figures& f) {
  std::printf("%-10s %8.0f %8.0f   %8.0f   %8.0f %8.0f\n", label, f.single_p50, f.single_p90,
              f.wave, f.wave_p50, f.wave_p90);
}

int Main(int argc, char** argv) {
  const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  const int parallelism = argc > 2 ? std::max(1, std::atoi(argv[2])) : 4;
  const std::string instance = UniqueName("launchbench");
  const std::string floor_instance = UniqueName("launchfloor");
  InstanceCleanup cleanup(instance);
  InstanceCleanup floor_cleanup(floor_instance);
  char tmpl[] = "/tmp/berth-launch-bench-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return 1;
  const std::string dir = tmpl;
  std::vector<Figures> berth, floor;
  {
    Bench b(instance, dir, parallelism);
    std::printf("start parallelism %d; %d runs; milliseconds\n", parallelism, runs);
    std::printf("%-10s %8s %8s   %8s   %8s %8s\n", "", "one p50", "one p90", "wave 20", "wave p50",
                "wave p90");
    for (int run = 1; run <= runs; ++run) {
      Figures fl, be;
      if (!MeasureFloor(floor_instance, run, &fl) || !MeasureBerth(b, run, &be)) {
        std::fprintf(stderr, "run %d failed\n", run);
        return 1;
      }
      Print(absl::StrCat("floor ", run).c_str(), fl);
      Print(absl::StrCat("berth ", run).c_str(), be);
      std::fflush(stdout);
      floor.push_back(fl);
      berth.push_back(be);
    }
  }
  auto med = [](const std::vector<Figures>& v, double Figures::*m) {
    std::vector<double> x;
    for (const Figures& f : v) x.push_back(f.*m);
    return Quantile(x, 0.5);
  };
  Figures mf, mb, ratio;
  for (double Figures::*m : {&Figures::single_p50, &Figures::single_p90, &Figures::wave,
                             &Figures::wave_p50, &Figures::wave_p90}) {
    mf.*m = med(floor, m);
    mb.*m = med(berth, m);
  }
  Print("floor med", mf);
  Print("berth med", mb);
  std::printf("%-10s %8.2f %8.2f   %8.2f   %8.2f %8.2f   (berth / floor)\n", "ratio",
              mb.single_p50 / mf.single_p50, mb.single_p90 / mf.single_p90, mb.wave / mf.wave,
              mb.wave_p50 / mf.wave_p50, mb.wave_p90 / mf.wave_p90);
  if (std::system(absl::StrCat("rm -rf ", dir).c_str()) != 0) {
    std::fprintf(stderr, "could not remove %s\n", dir.c_str());
  }
  return 0;
}

}  // namespace
}  // namespace berth

int main(int argc, char** argv) { return berth::Main(argc, argv); }
