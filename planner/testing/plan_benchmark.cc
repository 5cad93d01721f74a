// Benchmark of Plan() on the workload mix, with the std::sort of the
// same number of 16-byte keys as the reference.
//
//   bazel run -c opt //planner/testing:plan_benchmark -- --benchmark_filter='/100000$'
//
// Run one size per process for a meaningful peak RSS. Counters:
//   ns_per_job        Plan() wall time / queued jobs
//   plan_peak_MiB     peak RSS during the first Plan() call minus RSS before
//                     it (the planner's own memory, result included;
//                     /proc/self/clear_refs resets the high-water mark), and
//                     plan_bytes_per_job, the same per queued job
//   process_maxrss_MiB getrusage ru_maxrss of the whole process
#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "planner/forecast/eta.h"
#include "planner/plan/incremental.h"
#include "planner/plan/plan.h"
#include "planner/ranking/ranking.h"
#include "planner/testing/workload.h"

namespace berth::planner {
namespace {

// Time per item when each iteration handles `n` items (Google Benchmark's
// inverted iteration-invariant rate; reported as ns_per_job / ns_per_key).
benchmark::Counter NsPerItem(int64_t n) {
  return benchmark::Counter(static_cast<double>(n),
                            benchmark::Counter::kIsIterationInvariantRate |
                                benchmark::Counter::kInvert);
}

// Resident set and its high-water mark, in KiB, from /proc/self/status.
int64_t StatusKiB(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1));
  }
  return -1;
}

void ResetPeakRss() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
}

int64_t MaxRssKiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

// 10k, 100k and 1M queued, in wall milliseconds (the figures BENCHMARKS
// compares across sizes).
void QueueSizes(benchmark::internal::Benchmark* b) {
  b->Arg(10'000)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond)->UseRealTime();
}

void BM_Plan(benchmark::State& st) {
  const int64_t n = st.range(0);
  const testing::Workload& w = testing::BenchmarkWorkload(n);
  const Policy policy;
  // First, untimed and once per size (Google Benchmark calls this function
  // several times while it picks the iteration count), the planner's own
  // peak memory: before any other call, so the allocator has no freed memory
  // to hand back and every byte the planner needs shows in the high-water
  // mark.
  static auto* peak_kib = new std::map<int64_t, int64_t>();
  if (!peak_kib->count(n)) {
    ResetPeakRss();
    const int64_t before = StatusKiB("VmRSS");
    {
      PlanResult r = Plan(w.state, w.budgets, policy, w.now);
      benchmark::DoNotOptimize(r.decisions.data());
    }
    (*peak_kib)[n] = StatusKiB("VmHWM") - before;
  }
  const int64_t plan_kib = (*peak_kib)[n];
  int64_t admitted = 0;
  for (auto _ : st) {
    PlanResult r = Plan(w.state, w.budgets, policy, w.now);
    admitted = r.admitted_count;
    benchmark::DoNotOptimize(r.decisions.data());
  }
  st.counters["ns_per_job"] = NsPerItem(n);
  st.counters["admitted"] = static_cast<double>(admitted);
  st.counters["plan_peak_MiB"] = plan_kib / 1024.0;
  st.counters["plan_bytes_per_job"] = plan_kib * 1024.0 / n;
  st.counters["process_maxrss_MiB"] = MaxRssKiB() / 1024.0;
}
BENCHMARK(BM_Plan)->Apply(QueueSizes);

// The same with a Planner kept across calls (the executor's loop and the
// simulator): its working memory and the result's vectors are reused.
void BM_PlanReused(benchmark::State& st) {
  const int64_t n = st.range(0);
  const testing::Workload& w = testing::BenchmarkWorkload(n);
  const Policy policy;
  Planner planner;
  PlanResult r;
  planner.Plan(w.state, w.budgets, policy, w.now, r);  // warm up
  for (auto _ : st) {
    planner.Plan(w.state, w.budgets, policy, w.now, r);
    benchmark::DoNotOptimize(r.decisions.data());
  }
  st.counters["ns_per_job"] = NsPerItem(n);
}
BENCHMARK(BM_PlanReused)->Apply(QueueSizes);

// One event of a queue of n jobs planned incrementally (plan/incremental.h):
// the oldest running job ends, the IncrementalPlanner plans (its prefix
// only), the admitted jobs start, and a new job arrives. Beside
// BM_PlanReused/n, which is what the same event costs a whole-queue plan.
// range(1): 0 = Detail::kPrefix (every waiting job's reason; the simulator
// now plans with kPrefixFree, which stops earlier), 1 = kAdmissions (the
// forecast's). BM_PlanEventFifo: the same under the "fifo" ranking.
// BM_PlanEventFailing: every job that ends fails, and every arrival depends
// on the job that started last, so that most events reject a job whose
// dependency failed (the plan must stay incremental: whole_plans).
void PlanEvent(benchmark::State& st, const Policy& policy, bool failing = false) {
  const int64_t n = st.range(0);
  const IncrementalPlanner::Detail detail = st.range(1) == 1
                                                ? IncrementalPlanner::Detail::kAdmissions
                                                : IncrementalPlanner::Detail::kPrefix;
  const testing::Workload& w = testing::BenchmarkWorkload(n);
  IncrementalPlanner ip;
  ip.SetControls(w.state);
  for (const auto& [id, outcome] : w.state.finished) ip.SetFinished(id, outcome);
  for (const RunningJob& r : w.state.running) ip.AddRunning(r);
  for (const QueuedJob& q : w.state.queued) ip.Enqueue(q);
  absl::Time now = w.now;
  PlanResult plan;
  int64_t arrivals = 0, decided = 0, events = 0;
  std::vector<uint32_t> admitted;
  auto event = [&]() {
    if (!ip.state().running.empty()) {
      // It succeeded, as the forecast and the simulator record it: a job
      // that depends on it does not make the plan fall back to the whole
      // queue (a dependency nobody knows of is a planning error).
      const std::string id = ip.state().running.front().id;
      ip.RemoveRunning(id);
      ip.SetFinished(id, failing ? DependencyOutcome::kFailed : DependencyOutcome::kSucceeded);
    }
    ip.Plan(w.budgets, policy, now, detail, plan);
    decided += static_cast<int64_t>(plan.decisions.size());
    ip.Carry(plan);
    admitted.clear();
    for (const Decision& d : plan.decisions) {
      if (d.verdict != Verdict::kWait) admitted.push_back(d.job);
    }
    std::sort(admitted.rbegin(), admitted.rend());
    for (uint32_t i : admitted) {  // rejected jobs just leave
      const QueuedJob& q = ip.state().queued[i];
      const bool admit = std::any_of(plan.decisions.begin(), plan.decisions.end(),
                                     [i](const Decision& d) {
                                       return d.job == i && d.verdict == Verdict::kAdmit;
                                     });
      RunningJob r{q.id, q.workspace, q.pool, q.resources, now, q.expected_duration, ""};
      ip.Dequeue(i);
      if (admit) ip.AddRunning(std::move(r));
    }
    QueuedJob fresh = w.state.queued[static_cast<size_t>(arrivals) % w.state.queued.size()];
    fresh.id = "arrival-" + std::to_string(arrivals++);
    fresh.depends_on.clear();
    if (failing && !ip.state().running.empty()) fresh.depends_on = {ip.state().running.back().id};
    fresh.created_at = now;
    fresh.queued_at = now;
    ip.Enqueue(std::move(fresh));
    now += absl::Seconds(1);
    ++events;
  };
  event();  // the first plan admits what fits now
  decided = events = 0;
  const int64_t whole_before = ip.whole_plans();
  const int64_t skipped_before = ip.skipped_jobs();
  const int64_t decided_before = ip.decided_jobs();
  const int64_t incremental_before = ip.incremental_plans();
  const int64_t rejecting_before = ip.rejecting_plans();
  for (auto _ : st) event();
  st.counters["decided_per_plan"] = static_cast<double>(decided) / static_cast<double>(events);
  // The same over the incremental plans only (whole_plans decide every job).
  const double incremental = static_cast<double>(ip.incremental_plans() - incremental_before);
  st.counters["incr_decided_per_plan"] =
      static_cast<double>(ip.decided_jobs() - decided_before) / incremental;
  st.counters["incr_passed_per_plan"] =
      static_cast<double>(ip.skipped_jobs() - skipped_before) / incremental;
  st.counters["whole_plans"] = static_cast<double>(ip.whole_plans() - whole_before);
  st.counters["rejecting_plans"] = static_cast<double>(ip.rejecting_plans() - rejecting_before);
}
void BM_PlanEvent(benchmark::State& st) { PlanEvent(st, Policy()); }
void BM_PlanEventFifo(benchmark::State& st) {
  Policy policy;
  policy.ranking = &FifoRanking();
  PlanEvent(st, policy);
}
BENCHMARK(BM_PlanEvent)
    ->Args({10'000, 0})
    ->Args({10'000, 1})
    ->Args({100'000, 0})
    ->Args({100'000, 1})
    ->Args({1'000'000, 1})
    ->Unit(benchmark::kMicrosecond);
void BM_PlanEventFailing(benchmark::State& st) { PlanEvent(st, Policy(), /*failing=*/true); }
BENCHMARK(BM_PlanEventFailing)
    ->Args({100'000, 1})
    ->Args({1'000'000, 1})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PlanEventFifo)
    ->Args({10'000, 1})
    ->Args({100'000, 1})
    ->Args({1'000'000, 1})
    ->Unit(benchmark::kMicrosecond);

// Start estimates for every queued job of one plan (berth-plan now, GetPlan,
// ExplainJob): the planner's bounded forward forecast with the default
// ForecastOptions (planner/forecast/eta.h). The plan itself is not timed;
// `plans` is how many forecast plans fit the work bound, `beyond` how many
// jobs it leaves beyond the forecast. BM_EstimateStartsFifo: the same under
// the "fifo" ranking.
void EstimateStarts(benchmark::State& st, const Policy& policy,
                    const ForecastOptions& options = ForecastOptions()) {
  const int64_t n = st.range(0);
  const testing::Workload& w = testing::BenchmarkWorkload(n);
  const PlanResult r = Plan(w.state, w.budgets, policy, w.now);
  Forecast f;
  for (auto _ : st) {
    f = ForecastStarts(w.state, w.budgets, policy, r, options);
    benchmark::DoNotOptimize(f.starts.data());
  }
  int64_t beyond = 0, dated = 0;
  for (const StartEstimate& e : f.starts) {
    beyond += e.kind == EtaKind::kBeyondForecast;
    dated += e.kind != EtaKind::kBeyondForecast && e.kind != EtaKind::kUnknown;
  }
  st.counters["plans"] = static_cast<double>(f.plans);
  st.counters["decided_per_plan"] =
      static_cast<double>(f.planned_jobs) / static_cast<double>(std::max<int64_t>(1, f.plans));
  st.counters["beyond"] = static_cast<double>(beyond);
  // How far the forecast reached (the default horizon is 30 days): hours after
  // now (-inf: it ended with every job started).
  st.counters["covered_h"] = absl::ToDoubleHours(f.covered - w.now);
  // Jobs given a start (now, reserved or if the estimates hold).
  st.counters["dated"] = static_cast<double>(dated);
  st.counters["ns_per_job"] = NsPerItem(n);
}
void BM_EstimateStarts(benchmark::State& st) { EstimateStarts(st, Policy()); }
void BM_EstimateStartsFifo(benchmark::State& st) {
  Policy policy;
  policy.ranking = &FifoRanking();
  EstimateStarts(st, policy);
}
// The same under "drf" without aging (Policy's default ages every 2 h):
// the walks pass over what they cannot admit only then.
void BM_EstimateStartsNoAging(benchmark::State& st) {
  Policy policy;
  policy.aging_interval = absl::ZeroDuration();
  EstimateStarts(st, policy);
}
// The drf forecast with its time bound lifted to 75 days, which the 100k
// queue needs to start every job (its makespan is 60-75 days): what every
// waiting job dated costs. 1M would take minutes.
void BM_EstimateStartsAll(benchmark::State& st) {
  ForecastOptions options;
  options.horizon = absl::Hours(24 * 75);
  EstimateStarts(st, Policy(), options);
}
BENCHMARK(BM_EstimateStartsNoAging)->Apply(QueueSizes);
BENCHMARK(BM_EstimateStartsAll)
    ->Arg(10'000)
    ->Arg(100'000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_EstimateStarts)->Apply(QueueSizes);
BENCHMARK(BM_EstimateStartsFifo)->Apply(QueueSizes);

// What a reader of the first rows pays on a new plan (GetPlan --limit 100,
// the dashboard's first plan page): a StartEstimateTable, which forecasts
// only as far as the rows read need, read for the first 100 decisions.
// BM_EstimateStarts (the whole bounded forecast, what the first reader paid
// before the table forecast on demand) is the reference.
void BM_EstimateTableFirst100(benchmark::State& st) {
  const int64_t n = st.range(0);
  const testing::Workload& w = testing::BenchmarkWorkload(n);
  const PlanResult r = Plan(w.state, w.budgets, Policy(), w.now);
  int64_t plans = 0;
  int64_t beyond = 0;
  for (auto _ : st) {
    const StartEstimateTable table(w.state, w.budgets, Policy(), r);
    beyond = 0;
    for (size_t k = 0; k < std::min<size_t>(100, table.size()); ++k) {
      beyond += table[k].kind == EtaKind::kBeyondForecast;
    }
    plans = table.plans();
  }
  st.counters["plans"] = static_cast<double>(plans);
  st.counters["beyond"] = static_cast<double>(beyond);
}
BENCHMARK(BM_EstimateTableFirst100)->Apply(QueueSizes);

// What a forecast costs before its first plan: the table's set-up alone
// (the forecast's own index of the waiting jobs, the given plan's
// admissions started), which every new plan's first reader pays whatever it
// reads. BM_SortReference of as many keys is its floor.
void BM_EstimateTableSetup(benchmark::State& st) {
  const int64_t n = st.range(0);
  const testing::Workload& w = testing::BenchmarkWorkload(n);
  const PlanResult r = Plan(w.state, w.budgets, Policy(), w.now);
  for (auto _ : st) {
    const StartEstimateTable table(w.state, w.budgets, Policy(), r);
    benchmark::DoNotOptimize(table.size());
  }
  st.counters["ns_per_job"] = NsPerItem(n);
}
BENCHMARK(BM_EstimateTableSetup)->Apply(QueueSizes);

// The same queue on a node inventory (Budgets::nodes): `nodes` hosts of
// 64 GiB, 32 cores and 16 slots (cluster-wide limits: the nodes' sums; pool
// database 8 x nodes / 100; no workspace cap), the running jobs spread over
// them where they fit.
const testing::Workload& NodeWorkloadOf(int64_t n, int64_t nodes) {
  static auto* cache =
      new std::map<std::pair<int64_t, int64_t>, std::unique_ptr<testing::Workload>>();
  auto& w = (*cache)[{n, nodes}];
  if (!w) {
    w = std::make_unique<testing::Workload>(testing::BenchmarkWorkload(n));
    Budgets& b = w->budgets;
    b.memory_bytes = b.cpu_millis = 0;
    b.max_workers = 0;
    b.workspace_max_workers = 0;
    b.pool_max_workers["database"] = static_cast<int32_t>(std::max<int64_t>(8, nodes * 8 / 100));
    std::vector<std::pair<int64_t, int64_t>> free;
    for (int64_t i = 0; i < nodes; ++i) {
      Node node;
      char id[32];
      std::snprintf(id, sizeof(id), "node-%04lld", static_cast<long long>(i));
      node.id = id;
      node.memory_bytes = int64_t{64} << 30;
      node.cpu_millis = 32'000;
      node.max_workers = 16;
      b.nodes.push_back(node);
      free.emplace_back(node.memory_bytes, node.cpu_millis);
    }
    size_t k = 0;
    for (RunningJob& r : w->state.running) {
      for (size_t tries = 0; tries < free.size(); ++tries, ++k) {
        auto& [mem, cpu] = free[k % free.size()];
        if (mem >= r.resources.memory_bytes && cpu >= r.resources.cpu_millis) {
          mem -= r.resources.memory_bytes;
          cpu -= r.resources.cpu_millis;
          r.node = b.nodes[k % free.size()].id;
          break;
        }
      }
      ++k;
    }
  }
  return *w;
}

void BM_PlanNodes(benchmark::State& st) {
  const int64_t n = st.range(0);
  const testing::Workload& w = NodeWorkloadOf(n, st.range(1));
  const Policy policy;
  Planner planner;
  PlanResult r;
  planner.Plan(w.state, w.budgets, policy, w.now, r);  // warm up
  for (auto _ : st) {
    planner.Plan(w.state, w.budgets, policy, w.now, r);
    benchmark::DoNotOptimize(r.decisions.data());
  }
  st.counters["admitted"] = static_cast<double>(r.admitted_count);
  st.counters["ns_per_job"] = NsPerItem(n);
}
BENCHMARK(BM_PlanNodes)
    ->Args({100'000, 100})
    ->Args({1'000'000, 1'000})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Start estimates on the same node inventories: each forecast plan places
// on the nodes (planner/forecast/eta.h). The plan itself is not timed.
void BM_EstimateStartsNodes(benchmark::State& st) {
  const int64_t n = st.range(0);
  const testing::Workload& w = NodeWorkloadOf(n, st.range(1));
  const PlanResult r = Plan(w.state, w.budgets, Policy(), w.now);
  for (auto _ : st) {
    std::vector<StartEstimate> e = EstimateStarts(w.state, w.budgets, Policy(), r);
    benchmark::DoNotOptimize(e.data());
  }
  st.counters["ns_per_job"] = NsPerItem(n);
}
BENCHMARK(BM_EstimateStartsNodes)
    ->Args({100'000, 100})
    ->Args({1'000'000, 1'000})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

struct Key16 {
  uint64_t hi;
  uint64_t lo;
  bool operator<(const Key16& o) const {
    return hi != o.hi ? hi < o.hi : lo < o.lo;
  }
};

// The reference: std::sort of n random 16-byte keys (copying them back in is
// not timed).
void BM_SortReference(benchmark::State& st) {
  const int64_t n = st.range(0);
  std::mt19937_64 rng(7);
  std::vector<Key16> keys(n), work(n);
  for (Key16& k : keys) k = {rng(), rng()};
  for (auto _ : st) {
    st.PauseTiming();
    std::copy(keys.begin(), keys.end(), work.begin());
    st.ResumeTiming();
    std::sort(work.begin(), work.end());
    benchmark::DoNotOptimize(work.data());
  }
  st.counters["ns_per_key"] = NsPerItem(n);
}
BENCHMARK(BM_SortReference)->Apply(QueueSizes);

}  // namespace
}  // namespace berth::planner
