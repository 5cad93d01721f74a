// What one event costs berthd's replan at a large queue: a MemoryStore
// holding --jobs jobs (testing/bench_queue.h: 20 workspaces, priorities
// 0-3, 1 h estimates; 8 of them running, and one more per event), a
// PlanCache planned once, then one running job finishes and
// PlanCache::Refresh() replans (what the reconcile pass paid before it kept
// its state, and what a reader's whole plan still costs: the store read
// into a fresh planner::State and the whole-queue Plan()). Beside it, in the same process: the whole-queue Plan() of the
// same state alone, and an IncrementalPlanner (planner/plan/incremental.h)
// holding the same state, told the same event, planning the admissions only
// (Detail::kAdmissions: all a pass acts on), and berthd's pass itself:
// PlanCache::PlanAdmissions (its KeptPlan synced from the store's events
// since the last pass, the admissions-only plan, the admitted ids collected
// as Reconciler::Plan collects them). CPU time of this thread, medians of
// --runs events; the pass's first call (the store read whole) and the
// resident memory its kept state adds. A bounded tool, not a test:
//   bazel run -c opt --config=bench //executor/reconcile:replan_benchmark -- --jobs=1000000
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "executor/reconcile/plan_snapshot.h"
#include "executor/reconcile/testing/bench_queue.h"
#include "executor/store/memory_store.h"
#include "planner/base/simulated_clock.h"
#include "planner/plan/incremental.h"

ABSL_FLAG(int, jobs, 1000000, "queued jobs");
ABSL_FLAG(int, runs, 5, "events measured (median reported)");

namespace berth {
namespace {

double ThreadCpuMs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

// VmRSS of this process, MiB (-1 if unknown).
double RssMiB() {
  std::ifstream in("/proc/self/status");
  std::string key;
  while (in >> key) {
    if (key == "VmRSS:") {
      double kb = -1;
      in >> kb;
      return kb / 1024;
    }
  }
  return -1;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? -1 : v[v.size() / 2];
}

int Run() {
  const int n = absl::GetFlag(FLAGS_jobs);
  SimulatedClock clock;
  MemoryStore store;
  const int runs = absl::GetFlag(FLAGS_runs);
  // 8 jobs running beside the queue, and one more per event to end.
  std::vector<std::string> ids;
  if (!FillBenchQueue(store, {n, 8 + runs, 0}, clock.Now(), &ids).ok()) return 1;
  const std::vector<std::string> running(ids.begin(), ids.begin() + 8 + runs);
  const v1::Budgets budgets = BenchBudgets();
  PlanCache plans(store, clock, budgets, planner::Policy());
  // What a reader's plan holds: the whole plan, then the ETA forecast its
  // first page of 100 rows makes (GetPlan's default), as resident growth.
  const double rss_plan = RssMiB();
  absl::StatusOr<std::shared_ptr<const PlanSnapshot>> first = plans.Refresh();
  if (!first.ok()) return 1;
  const double plan_rss = RssMiB() - rss_plan;
  const double rss_eta = RssMiB();
  double e0 = ThreadCpuMs();
  const planner::StartEstimateTable& etas = (*first)->estimates();
  for (size_t k = 0; k < std::min<size_t>(100, (*first)->result.decisions.size()); ++k) {
    (void)etas[k];
  }
  const double eta_ms = ThreadCpuMs() - e0;
  const double eta_rss = RssMiB() - rss_eta;
  std::printf("a reader's whole plan: +%.0f MiB resident; the ETAs of its first 100 rows: "
              "%.1f ms CPU, +%.0f MiB resident (kept with the plan)\n",
              plan_rss, eta_ms, eta_rss);

  // The incremental planner holds the same state.
  planner::IncrementalPlanner ip;
  ip.SetControls((*first)->state);
  for (const auto& [id, outcome] : (*first)->state.finished) ip.SetFinished(id, outcome);
  for (const planner::RunningJob& r : (*first)->state.running) ip.AddRunning(r);
  for (const planner::QueuedJob& q : (*first)->state.queued) ip.Enqueue(q);
  planner::PlanResult inc;
  ip.Plan((*first)->planned_budgets, (*first)->policy, clock.Now(),
          planner::IncrementalPlanner::Detail::kAdmissions, inc);
  ip.Carry(inc);

  // berthd's pass: the kept state, read once from the store, then from its
  // events.
  std::vector<std::string> pass_admits;
  const PlanCache::PassVisitor collect = [&pass_admits](const planner::State& state,
                                                        const planner::PlanResult& plan) {
    pass_admits.clear();
    for (const planner::Decision& d : plan.decisions) {
      if (d.verdict == planner::Verdict::kAdmit) pass_admits.push_back(state.queued[d.job].id);
    }
  };
  const double rss_before = RssMiB();
  double a0 = ThreadCpuMs();
  if (!plans.PlanAdmissions(collect).ok()) return 1;
  const double kept_read_ms = ThreadCpuMs() - a0;
  const double kept_rss = RssMiB() - rss_before;

  std::vector<double> refresh_ms, plan_ms, inc_ms, kept_ms;
  planner::Planner whole;
  planner::PlanResult result;
  for (int r = 0; r < runs; ++r) {
    clock.Advance(absl::Seconds(1));
    // The event: a running job succeeds.
    TransitionRequest t;
    t.job_id = running[static_cast<size_t>(r)];
    t.expected_state = v1::JOB_STATE_RUNNING;
    t.new_state = v1::JOB_STATE_SUCCEEDED;
    t.exit_code = 0;
    if (!store.Transition(t, clock.Now()).ok()) return 1;
    double a = ThreadCpuMs();
    absl::StatusOr<std::shared_ptr<const PlanSnapshot>> snap_now = plans.Refresh();
    if (!snap_now.ok()) return 1;
    refresh_ms.push_back(ThreadCpuMs() - a);
    const PlanSnapshot& s = **snap_now;
    a = ThreadCpuMs();
    whole.Plan(s.state, s.planned_budgets, s.policy, s.now, result);
    plan_ms.push_back(ThreadCpuMs() - a);
    a = ThreadCpuMs();
    ip.RemoveRunning(t.job_id);
    ip.SetFinished(t.job_id, planner::DependencyOutcome::kSucceeded);
    ip.Plan(s.planned_budgets, s.policy, s.now, planner::IncrementalPlanner::Detail::kAdmissions,
            inc);
    ip.Carry(inc);
    inc_ms.push_back(ThreadCpuMs() - a);
    a = ThreadCpuMs();
    absl::StatusOr<PlanCache::PassPlan> pass = plans.PlanAdmissions(collect);
    kept_ms.push_back(ThreadCpuMs() - a);
    if (!pass.ok() || pass->revision != s.revision) return 1;
    const int kept_admits = static_cast<int>(pass_admits.size());
    int whole_admits = 0, inc_admits = 0;
    for (const planner::Decision& d : s.result.decisions) {
      if (d.verdict == planner::Verdict::kAdmit) ++whole_admits;
    }
    for (const planner::Decision& d : inc.decisions) {
      if (d.verdict == planner::Verdict::kAdmit) ++inc_admits;
    }
    std::printf("event %d: PlanCache::Refresh %.1f ms CPU (Plan() alone %.1f ms), incremental "
                "(admissions) %.3f ms, berthd's pass (PlanAdmissions) %.3f ms; admits "
                "%d / %d / %d%s\n",
                r + 1, refresh_ms.back(), plan_ms.back(), inc_ms.back(), kept_ms.back(),
                whole_admits, inc_admits, kept_admits,
                ip.last_was_whole_queue() ? " (incremental fell back to the whole queue)" : "");
  }
  std::printf("%d queued, medians of %d events: replan as berthd does it %.1f ms CPU; whole-queue "
              "Plan() alone %.1f ms; incremental planner after the event %.3f ms; berthd's pass "
              "(PlanCache::PlanAdmissions: the kept state synced from the store's events + the "
              "admissions) %.3f ms (target <= 10 ms); its first call (the store read whole) "
              "%.1f ms, +%.0f MiB resident\n",
              n, runs, Median(refresh_ms), Median(plan_ms), Median(inc_ms), Median(kept_ms),
              kept_read_ms, kept_rss);
  return 0;
}

}  // namespace
}  // namespace berth

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return berth::Run();
}
