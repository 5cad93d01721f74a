// How long GetPlan takes on a large queue ("GetPlan on 1M queued
// jobs in <= 2 s of planning"): an ExecutorCore over a MemoryStore holding
// --jobs queued jobs (executor/reconcile/testing/bench_queue.h: 20 workspaces, priorities
// 0-3, 1 h estimates, 8 of them running), timed from a fresh PlanCache (so
// the plan is computed: store read + Plan() + the ETA pass) to GetPlan(--limit) answered, and
// again with the plan cached. A bounded tool, not a test:
//   bazel run -c opt --config=bench //server/core:get_plan_benchmark -- --jobs=1000000 --runs=3
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "executor/reconcile/plan_snapshot.h"
#include "executor/store/memory_store.h"
#include "planner/base/simulated_clock.h"
#include "executor/reconcile/testing/bench_queue.h"
#include "server/core/executor_core.h"

ABSL_FLAG(int, jobs, 1000000, "queued jobs");
ABSL_FLAG(int, runs, 3, "fresh-cache GetPlan calls (median reported)");
ABSL_FLAG(int, limit, 100, "GetPlan limit (0: every decision)");

namespace berth {
namespace {

double Seconds(absl::Duration d) { return absl::ToDoubleSeconds(d); }

int Run() {
  const int n = absl::GetFlag(FLAGS_jobs);
  SimulatedClock clock;
  MemoryStore store;
  std::vector<std::string> ids;
  absl::Time t0 = absl::Now();
  // Eight of them running, so the timeline has expected ends.
  if (!FillBenchQueue(store, {n, 8, 0}, clock.Now(), &ids).ok()) return 1;
  std::printf("store: %d queued jobs applied in %.2f s\n", n, Seconds(absl::Now() - t0));
  const v1::Budgets budgets = BenchBudgets();
  absl::Mutex admission;
  ExecutorCoreOptions options;
  options.image_allowed = [](absl::string_view) { return true; };
  std::vector<double> fresh, cached;
  for (int r = 0; r < absl::GetFlag(FLAGS_runs); ++r) {
    PlanCache plans(store, clock, budgets, planner::Policy());
    ExecutorCore core(store, plans, clock, admission, options);
    absl::Time a = absl::Now();
    absl::StatusOr<v1::Plan> plan = core.GetPlan(absl::GetFlag(FLAGS_limit));
    absl::Time b = absl::Now();
    if (!plan.ok()) {
      std::fprintf(stderr, "GetPlan: %s\n", plan.status().ToString().c_str());
      return 1;
    }
    absl::StatusOr<v1::Plan> again = core.GetPlan(absl::GetFlag(FLAGS_limit));
    absl::Time c = absl::Now();
    if (!again.ok()) return 1;
    fresh.push_back(Seconds(b - a));
    cached.push_back(Seconds(c - b));
    std::printf("run %d: GetPlan(limit %d) planning %.3f s, cached %.4f s; %d queued, %d admitted\n",
                r + 1, absl::GetFlag(FLAGS_limit), fresh.back(), cached.back(),
                plan->queued_count(), plan->admitted_count());
  }
  std::sort(fresh.begin(), fresh.end());
  std::sort(cached.begin(), cached.end());
  std::printf("median: planning %.3f s, cached %.4f s\n", fresh[fresh.size() / 2],
              cached[cached.size() / 2]);
  return 0;
}

}  // namespace
}  // namespace berth

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return berth::Run();
}
