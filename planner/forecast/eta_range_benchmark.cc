// What an ETA range costs beside the plain forecast (docs/BENCHMARKS.md
// "Forecast"): BM_PlainForecast = the whole bounded forecast of a plan;
// BM_RangedForecast = an EtaRangeTable over the same plan with every job
// given ratios (three scaled plans and forecasts), every row read. The
// planner benchmark's workload (planner/testing/workload.h).

#include "benchmark/benchmark.h"
#include "planner/forecast/eta.h"
#include "planner/forecast/eta_range.h"
#include "planner/plan/plan.h"
#include "planner/testing/workload.h"

namespace berth::planner {
namespace {

void BM_PlainForecast(benchmark::State& st) {
  const testing::Workload& w = testing::BenchmarkWorkload(st.range(0));
  const PlanResult r = Plan(w.state, w.budgets, Policy(), w.now);
  for (auto _ : st) {
    Forecast f = ForecastStarts(w.state, w.budgets, Policy(), r);
    benchmark::DoNotOptimize(f.starts.data());
  }
}
BENCHMARK(BM_PlainForecast)->Arg(1'000)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_RangedForecast(benchmark::State& st) {
  const testing::Workload& w = testing::BenchmarkWorkload(st.range(0));
  const PlanResult r = Plan(w.state, w.budgets, Policy(), w.now);
  RatioAssignment ratios;
  const DurationRatios lognormal_half{0.527, 1.0, 1.897, 20};  // exp(-+1.2816 x 0.5)
  ratios.queued.assign(w.state.queued.size(), lognormal_half);
  ratios.running.assign(w.state.running.size(), lognormal_half);
  int64_t known = 0;
  for (auto _ : st) {
    const EtaRangeTable table(w.state, w.budgets, Policy(), r, ratios);
    known = 0;
    for (size_t k = 0; k < table.size(); ++k) known += table[k].known;
    benchmark::DoNotOptimize(known);
  }
  st.counters["ranged"] = static_cast<double>(known);
}
BENCHMARK(BM_RangedForecast)->Arg(1'000)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace berth::planner
