// How long GetPlan takes on a large queue ("GetPlan on 1M queued
// jobs in <= 2 s of planning"): an ExecutorCore over a MemoryStore holding
// --jobs queued jobs (20 workspaces, priorities 0-3, 1 h estimates, 8 of
// them running), timed from a fresh PlanCache (so the plan is computed:
// store read + Plan() + the ETA pass) to GetPlan(--limit) answered, and
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
#include "server/core/executor_core.h"

ABSL_FLAG(int, jobs, 1000000, "queued jobs");
ABSL_FLAG(int, runs, 3, "fresh-cache GetPlan calls (median reported)");
ABSL_FLAG(int, limit, 100, "GetPlan limit (0: every decision)");

namespace berth {
namespace {

v1::JobSpec Spec(int i) {
  v1::JobSpec j;
  j.set_id(absl::StrCat("ws", i % 20, ".job-", i));
  j.set_workspace(absl::StrCat("ws", i % 20));
  j.set_image("berth-test/busybox:1");
  j.add_argv("true");  // required at ingest
  j.set_priority(i % 4);
  j.mutable_resources()->set_cpu_millis(500 + 250 * (i % 4));
  j.mutable_resources()->set_memory_bytes((int64_t{1} << 30) * (1 + i % 8));
  j.mutable_expected_duration()->set_seconds(3600);
  j.mutable_created_at()->set_seconds(1'800'000'000 - (i % 1000));
  return j;
}

double Seconds(absl::Duration d) { return absl::ToDoubleSeconds(d); }

int Run() {
  const int n = absl::GetFlag(FLAGS_jobs);
  SimulatedClock clock;
  MemoryStore store;
  SnapshotRequest snap;
  snap.generation = 1;
  snap.jobs.reserve(n);
  for (int i = 0; i < n; ++i) snap.jobs.push_back(Spec(i));
  absl::Time t0 = absl::Now();
  if (!store.ApplySnapshot(snap, clock.Now()).ok()) return 1;
  std::printf("store: %d queued jobs applied in %.2f s\n", n, Seconds(absl::Now() - t0));
  // Eight of them running, so the timeline has expected ends.
  for (int i = 0; i < 8; ++i) {
    DecisionRequest d;
    d.job_id = snap.jobs[i].id();
    d.kind = DecisionKind::kAdmit;
    d.expected_state = v1::JOB_STATE_QUEUED;
    d.reason = "benchmark";
    if (!store.RecordDecisions({d}, clock.Now()).ok()) return 1;
    TransitionRequest t;
    t.job_id = d.job_id;
    t.expected_state = v1::JOB_STATE_ADMITTED;
    t.new_state = v1::JOB_STATE_RUNNING;
    t.container_id = "c";
    if (!store.Transition(t, clock.Now()).ok()) return 1;
  }
  v1::Budgets budgets;
  budgets.set_memory_bytes(int64_t{256} << 30);
  budgets.set_cpu_millis(32000);
  budgets.set_max_workers(24);
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
