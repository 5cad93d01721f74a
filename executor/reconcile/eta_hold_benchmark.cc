// How many ETAs hold in a real run against the real dockerd (bounded;
// cleans up; RocksDB in a temporary directory):
//
//   bazel run //executor/reconcile:eta_hold_benchmark -- [measured|fixed] [jobs] [seed]
//
// berthd's path: a ReconcileLoop over a Reconciler with background starts
// (4 start slots), a pass triggered by each snapshot and each finished start
// and each container's exit (Docker's events). The executor model the
// forecast plays is berthd's (MeasuredExecutor, "measured": fitted to the
// starts it has seen, after a warm-up of 8 starts) or berth-plan's fixed
// defaults ("fixed": 250 ms a start, 70 ms shared, 50 ms to see an end).
// `jobs` (default 40) jobs of 2-12 s (`sleep`, exact estimates; seeded
// sizes 128-512 MiB) are submitted at once to 4 workers and 1 GiB; each
// job's ETA is read from the first plan after the submission. A job's ETA
// holds if its admission (Job.admitted_at, where the planner starts it)
// is within max(60 s, 5% of the ETA's distance from the submission) of it.
// Prints the share that held, and the admission's and the process start's
// (Docker's StartedAt) error against the ETA: median, p90, worst.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "executor/reconcile/measured_executor.h"
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

v1::JobSpec Job(const std::string& id, int seconds, int64_t memory_mib) {
  v1::JobSpec j = testing::TestJob(id, 0);
  j.mutable_resources()->set_memory_bytes(memory_mib << 20);
  j.mutable_resources()->set_cpu_millis(100);
  j.mutable_expected_duration()->set_seconds(seconds);
  j.clear_argv();
  j.add_argv("sleep");
  j.add_argv(absl::StrCat(seconds));
  return j;
}

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

int Main(int argc, char** argv) {
  const bool measured = !(argc > 1 && std::string(argv[1]) == "fixed");
  const int n = argc > 2 ? std::max(1, std::atoi(argv[2])) : 40;
  const unsigned seed = argc > 3 ? static_cast<unsigned>(std::atoi(argv[3])) : 1;
  const std::string instance = UniqueName("etabench");
  InstanceCleanup cleanup(instance);
  char tmpl[] = "/tmp/berth-eta-bench-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return 1;
  const std::string dir = tmpl;
  int rc = 0;
  {
    std::unique_ptr<DockerRuntime> runtime = *DockerRuntime::Create(TestOptions(instance));
    std::unique_ptr<RocksStore> store = *RocksStore::Open(dir + "/store");
    v1::Budgets budgets = testing::TestBudgets(1, 4);
    PlanCache plans(*store, *Clock::Real(), budgets, planner::Policy());
    planner::ExecutorModel defaults;
    defaults.start_latency = absl::Milliseconds(250);
    defaults.start_contention = absl::Milliseconds(70);
    defaults.start_parallelism = 4;
    defaults.finish_latency = absl::Milliseconds(50);
    ReconcilerOptions o;
    o.start_parallelism = 4;
    o.background_starts = true;
    o.stop_grace = absl::Seconds(1);
    MeasuredExecutor model(defaults, &plans);
    if (measured) model.Attach(o);
    Reconciler reconciler(*store, *runtime, *Clock::Real(), plans, o);
    ReconcileLoop loop(reconciler, absl::Seconds(2));
    reconciler.set_on_start_done([&loop] { loop.Trigger(); });
    std::unique_ptr<EventSubscription> events =
        runtime->SubscribeEvents([&](const RuntimeEvent& e) {
          (void)reconciler.OnRuntimeEvent(e);  // a "die" is finalised at once
          loop.Trigger();
        });
    loop.Start();
    uint64_t generation = 0;
    auto sync = [&](const std::vector<v1::JobSpec>& jobs) {
      SnapshotRequest r;
      r.generation = ++generation;
      r.jobs = jobs;
      r.options.allow_mass_cancel = true;
      return store->ApplySnapshot(r, absl::Now()).ok();
    };
    auto all_done = [&](const std::vector<v1::JobSpec>& jobs) {
      return WaitFor(
          [&] {
            for (const v1::JobSpec& j : jobs) {
              absl::StatusOr<StoredJob> s = store->GetJob(j.id());
              if (!s.ok() || s->job.state() != v1::JOB_STATE_SUCCEEDED) return false;
            }
            return true;
          },
          absl::Seconds(600), absl::Milliseconds(50));
    };
    // Warm-up: 8 quick starts (what a berthd has seen before a burst).
    std::vector<v1::JobSpec> warm;
    for (int i = 0; i < 8; ++i) warm.push_back(Job(absl::StrCat("warm-", i), 1, 64));
    if (!sync(warm) || (loop.Trigger(), !all_done(warm))) {
      std::fprintf(stderr, "warm-up did not finish\n");
      return 1;
    }
    const planner::ExecutorModel used = model.Current();
    std::mt19937 rng(seed);
    std::vector<v1::JobSpec> jobs;
    for (int i = 0; i < n; ++i) {
      jobs.push_back(Job(absl::StrCat("job-", i), std::uniform_int_distribution<int>(2, 12)(rng),
                         128 * std::uniform_int_distribution<int>(1, 4)(rng)));
    }
    const absl::Time submitted = absl::Now();
    if (!sync(jobs)) return 1;
    // The ETAs of the plan at the submission, before any pass acts on it.
    std::map<std::string, absl::Time> eta;
    {
      absl::StatusOr<std::shared_ptr<const PlanSnapshot>> snap = plans.Refresh();
      if (!snap.ok()) return 1;
      const PlanSnapshot::PositionIndex& pos = (*snap)->positions();
      for (const v1::JobSpec& j : jobs) {
        auto it = pos.find(j.id());
        if (it == pos.end()) continue;
        const planner::StartEstimate e = (*snap)->estimates()[it->second];
        if (e.time != absl::InfiniteFuture()) eta[j.id()] = e.time;
      }
    }
    loop.Trigger();
    if (!all_done(jobs)) {
      std::fprintf(stderr, "jobs did not finish\n");
      rc = 1;
    }
    int held = 0;
    std::vector<double> admit_err, start_err;
    for (const v1::JobSpec& j : jobs) {
      auto it = eta.find(j.id());
      absl::StatusOr<StoredJob> s = store->GetJob(j.id());
      if (it == eta.end() || !s.ok()) continue;
      const absl::Time admitted = planner::FromProto(s->job.admitted_at());
      const absl::Time started = planner::FromProto(s->job.started_at());
      const double err = absl::ToDoubleSeconds(admitted - it->second);
      const double tolerance =
          std::max(60.0, 0.05 * absl::ToDoubleSeconds(it->second - submitted));
      held += std::abs(err) <= tolerance ? 1 : 0;
      admit_err.push_back(err);
      start_err.push_back(absl::ToDoubleSeconds(started - it->second));
    }
    std::printf("model %s (start %.0f ms alone, %.0f ms shared, finish %.0f ms); %d jobs, seed %u\n",
                measured ? "measured" : "fixed", absl::ToDoubleMilliseconds(used.start_latency),
                absl::ToDoubleMilliseconds(used.start_contention),
                absl::ToDoubleMilliseconds(used.finish_latency), n, seed);
    std::printf("ETAs held: %d of %zu (%.1f%%); %zu of %d jobs had an ETA\n", held,
                admit_err.size(), 100.0 * held / std::max<size_t>(1, admit_err.size()),
                eta.size(), n);
    auto worst = [](const std::vector<double>& v) {
      double w = 0;
      for (double x : v) w = std::abs(x) > std::abs(w) ? x : w;
      return w;
    };
    std::printf("admission - ETA, s: median %.2f, p90 %.2f, worst %.2f\n", Quantile(admit_err, 0.5),
                Quantile(admit_err, 0.9), worst(admit_err));
    std::printf("process start - ETA, s: median %.2f, p90 %.2f, worst %.2f\n",
                Quantile(start_err, 0.5), Quantile(start_err, 0.9), worst(start_err));
    events.reset();
    loop.Stop();
    reconciler.set_on_start_done(nullptr);
  }
  if (std::system(absl::StrCat("rm -rf ", dir).c_str()) != 0) {
    std::fprintf(stderr, "could not remove %s\n", dir.c_str());
  }
  return rc;
}

}  // namespace
}  // namespace berth

int main(int argc, char** argv) { return berth::Main(argc, argv); }
