// Benchmarks of the simulator with the real Plan(). Run with
//   bazel run -c opt //planner/simulator:simulator_benchmark
// BM_Simulate/N/DAYS/WHOLE: N jobs arriving over DAYS days on 256 GiB, 32 cores,
// 24 workers (database pool <= 4, workspace <= 8); 30% in dependency chains,
// actual durations differ from estimates, 3% fail. 10,000 jobs over 35 days
// is the example week's load; over 7 days it is five times that (the queue
// then holds thousands of jobs). WHOLE = 1 plans the whole queue at every
// event (the reference), 0 incrementally (planner/plan/incremental.h).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "planner/simulator/simulator.h"

namespace berth::planner {
namespace {

constexpr int64_t kGi = int64_t{1} << 30;

class Lcg {
 public:
  explicit Lcg(uint64_t seed) : s_(seed) {}
  uint64_t Next() {
    s_ = s_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return s_ >> 33;
  }
  double Uniform() { return static_cast<double>(Next()) / 2147483648.0; }

 private:
  uint64_t s_;
};

SimInput Workload(int jobs, int days) {
  Lcg rng(42);
  SimInput in;
  in.start = absl::FromUnixSeconds(1'795'392'000);
  in.budgets.memory_bytes = 256 * kGi;
  in.budgets.cpu_millis = 32000;
  in.budgets.max_workers = 24;
  in.budgets.pool_max_workers["database"] = 4;
  in.budgets.workspace_max_workers = 8;
  const int64_t span = int64_t{days} * 86400;
  int i = 0;
  while (i < jobs) {
    int64_t arrival = static_cast<int64_t>(rng.Uniform() * static_cast<double>(span));
    std::string ws = absl::StrCat("ws-", rng.Next() % 60);
    int chain = rng.Uniform() < 0.7 ? 1 : 2 + static_cast<int>(rng.Next() % 4);
    int32_t priority = static_cast<int32_t>(rng.Next() % 4);
    for (int k = 0; k < chain && i < jobs; ++k, ++i) {
      SimJob j;
      j.job.id = absl::StrCat(ws, ".job-", i);
      j.job.workspace = ws;
      j.job.priority = priority;
      if (rng.Uniform() < 0.1) j.job.pool = "database";
      j.job.resources.memory_bytes =
          static_cast<int64_t>(std::exp2(-1 + rng.Uniform() * 6) * static_cast<double>(kGi));
      j.job.resources.cpu_millis = 250 * static_cast<int64_t>(1 + rng.Next() % 16);
      j.job.expected_duration =
          absl::Seconds(static_cast<int64_t>(60 * std::exp2(rng.Uniform() * 7)));
      j.actual_duration = j.job.expected_duration * (0.6 + 0.8 * rng.Uniform());
      j.fails = rng.Uniform() < 0.03;
      j.arrival_offset = absl::Seconds(arrival);
      j.job.created_at = in.start + j.arrival_offset;
      if (k > 0) j.job.depends_on.push_back(in.jobs.back().job.id);
      in.jobs.push_back(std::move(j));
    }
  }
  return in;
}

// range(2) = 1: the whole-queue reference (SimOptions::whole_queue_plans),
// the peer of the incremental simulation in the same run.
void BM_Simulate(benchmark::State& state) {
  SimInput in = Workload(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  SimOptions options;
  options.whole_queue_plans = state.range(2) == 1;
  SimResult last;
  for (auto _ : state) {
    last = Simulate(in, options);
    benchmark::DoNotOptimize(last.end);
  }
  state.counters["plan_calls"] = static_cast<double>(last.plan_calls);
  int64_t queued = 0;
  for (const SimUsagePoint& p : last.timeline) queued = std::max<int64_t>(queued, p.queued);
  state.counters["peak_queue"] = static_cast<double>(queued);
}
BENCHMARK(BM_Simulate)
    ->Args({2000, 7, 0})
    ->Args({10000, 35, 0})
    ->Args({10000, 7, 0})
    ->Args({10000, 7, 1})
    ->Args({30000, 21, 0})
    ->Args({100000, 70, 0})
    ->Args({100000, 7, 0})
    ->Unit(benchmark::kMillisecond);

void BM_CountBaseline(benchmark::State& state) {
  SimInput in = Workload(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  SimOptions opt;
  opt.mode = SimMode::kCountBaseline;
  for (auto _ : state) benchmark::DoNotOptimize(Simulate(in, opt).end);
}
// The floor of each overloaded BM_Simulate (the same workload, no Plan()),
// so that every figure has its floor from the same run.
BENCHMARK(BM_CountBaseline)
    ->Args({10000, 35})
    ->Args({10000, 7})
    ->Args({30000, 21})
    ->Args({100000, 70})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace berth::planner
