// sweep: one simulation per budget combination.
#include <algorithm>
#include <atomic>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "planner/base/status_macros.h"
#include "tools/plan/commands.h"
#include "tools/plan/common.h"
#include "tools/plan/stats.h"
#include "planner/base/units.h"

namespace berth {
namespace plan {

absl::StatusOr<CommandOutput> RunSweep(const std::vector<std::string>& argv,
                                       const CommandEnv& env) {
  ASSIGN_OR_RETURN(Setup s, Prepare(argv, "sweep",
                                    {{"svg"}, {"target-p95-wait"}, {"threads"}}, true));
  bool has_target = s.args.Has("target-p95-wait");
  absl::Duration target;
  if (has_target) {
    ASSIGN_OR_RETURN(target, ParseHumanDuration("--target-p95-wait", s.args.Get("target-p95-wait")));
  }
  size_t threads = std::max(1u, std::thread::hardware_concurrency());
  if (s.args.Has("threads")) {
    int v = 0;
    if (!absl::SimpleAtoi(s.args.Get("threads"), &v) || v <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--threads: \"", s.args.Get("threads"), "\": expected a whole number > 0"));
    }
    threads = static_cast<size_t>(v);
  }
  std::vector<planner::Budgets> combos = Combinations(s.budgets);
  std::vector<planner::SimResult> results(combos.size());
  // Independent simulations in parallel; each writes only its own slot.
  std::atomic<size_t> next{0};
  absl::Mutex mu;
  size_t done = 0;
  auto worker = [&]() {
    for (size_t i = next++; i < combos.size(); i = next++) {
      planner::SimInput in = s.input.sim;
      in.budgets = combos[i];
      planner::SimOptions opt = PlannerSimOptions(s);
      results[i] = planner::Simulate(in, opt);
      if (env.progress) {
        absl::MutexLock lock(&mu);
        ++done;
        env.progress(absl::StrCat("sweep: ", done, "/", combos.size(), " combinations"));
      }
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < std::min(threads, combos.size()); ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();

  // Cost: each budget as a fraction of the largest value swept, summed.
  double max_mem = 0, max_cpu = 0, max_workers = 0;
  for (const auto& b : combos) {
    max_mem = std::max(max_mem, static_cast<double>(b.memory_bytes));
    max_cpu = std::max(max_cpu, static_cast<double>(b.cpu_millis));
    max_workers = std::max(max_workers, static_cast<double>(b.max_workers));
  }
  std::vector<double> cost(combos.size());
  std::vector<WaitStats> waits(combos.size());
  std::vector<bool> meets(combos.size());
  for (size_t i = 0; i < combos.size(); ++i) {
    cost[i] = combos[i].memory_bytes / max_mem + combos[i].cpu_millis / max_cpu +
              combos[i].max_workers / max_workers;
    waits[i] = AllWaits(results[i]);
    Outcomes o = CountOutcomes(results[i]);
    meets[i] = has_target && waits[i].p95 <= target && results[i].never_fits.empty() &&
               o.not_run == 0;
  }
  std::vector<size_t> order(combos.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (cost[a] != cost[b]) return cost[a] < cost[b];
    return waits[a].p95 < waits[b].p95;
  });
  int64_t cheapest = -1;
  for (size_t i : order) {
    if (meets[i]) {
      cheapest = static_cast<int64_t>(i);
      break;
    }
  }

  Report rep;
  rep.title = absl::StrCat("Sweep: ", s.input.description.empty() ? s.input.path
                                                                 : s.input.description);
  rep.summary.push_back({"file", "file", Cell::Str(s.input.path)});
  rep.summary.push_back({"combinations", "combinations",
                         Cell::Int(static_cast<int64_t>(combos.size()))});
  rep.summary.push_back({"target_p95_wait_s", "target p95 wait",
                         has_target ? DurationCell(target) : Cell::Null("(none)")});
  if (has_target) {
    rep.summary.push_back(
        {"cheapest", "cheapest meeting it",
         cheapest >= 0 ? Cell::Str(DescribeBudgets(combos[cheapest]))
                       : Cell::Null("none of the combinations")});
  }
  Table t;
  t.name = "sweep";
  t.title = "One row per combination, cheapest first (cost = sum of each budget / its largest value)";
  t.columns = {{"memory_bytes", "memory"}, {"cpu_millis", "cpus"}, {"max_workers", "workers"}};
  if (!s.budgets.nodes.empty()) t.columns.insert(t.columns.begin(), {"nodes", "nodes"});
  for (const auto& [pool, list] : s.budgets.pools) {
    t.columns.push_back({absl::StrCat("pool_", pool, "_max"), absl::StrCat(pool, " max")});
  }
  t.columns.push_back({"workspace_max", "ws max"});
  for (Column c : std::vector<Column>{{"makespan_s", "makespan"}, {"p50_wait_s", "p50 wait"},
                                      {"p95_wait_s", "p95 wait"}, {"max_wait_s", "max wait"},
                                      {"memory_mean", "mem use"}, {"cpu_mean", "cpu use"},
                                      {"never_fits", "never fit"}, {"meets_target", "meets"},
                                      {"cheapest", "choice"}}) {
    t.columns.push_back(c);
  }
  Chart chart;
  chart.title = absl::StrCat("berth-plan sweep: ", s.input.path);
  chart.subtitle = absl::StrCat(
      s.input.description.empty() ? "" : absl::StrCat(s.input.description, "\n"),
      "Memory reserved (GiB) against the memory budget, one panel per combination");
  for (size_t i : order) {
    const planner::Budgets& b = combos[i];
    UsageSummary u = Summarise(results[i], b);
    std::vector<Cell> row = {BytesCell(b.memory_bytes), CpuCell(b.cpu_millis),
                             Cell::Int(b.max_workers)};
    if (!s.budgets.nodes.empty()) row.insert(row.begin(), Cell::Str(NodesLabel(s.budgets, i)));
    for (const auto& [pool, list] : s.budgets.pools) {
      row.push_back(Cell::Int(b.pool_max_workers.at(pool)));
    }
    row.push_back(Cell::Int(b.workspace_max_workers));
    row.push_back(DurationCell(results[i].makespan()));
    row.push_back(DurationCell(waits[i].p50));
    row.push_back(DurationCell(waits[i].p95));
    row.push_back(DurationCell(waits[i].max));
    row.push_back(PercentCell(u.memory.mean));
    row.push_back(PercentCell(u.cpu.mean));
    row.push_back(Cell::Int(static_cast<int64_t>(results[i].never_fits.size())));
    row.push_back(has_target ? Cell::Bool(meets[i]) : Cell::Null());
    row.push_back(static_cast<int64_t>(i) == cheapest ? Cell::Str("<- cheapest")
                                                      : Cell::Str(""));
    t.rows.push_back(std::move(row));

    Chart one = UsageChart("", "", b, {{"memory reserved", "#1f77b4", &results[i]}});
    Panel p = one.panels[0];
    p.title = absl::StrCat(FormatBytes(b.memory_bytes), ", ", FormatCores(b.cpu_millis), " cores, ",
                           b.max_workers, " workers: p95 ", FormatHumanDuration(waits[i].p95),
                           static_cast<int64_t>(i) == cheapest ? " (cheapest)" : "");
    chart.x_max = std::max(chart.x_max, one.x_max);
    chart.panels.push_back(std::move(p));
  }
  rep.tables.push_back(std::move(t));
  CommandOutput out;
  out.text = Render(rep, s.format);
  if (std::string svg = SvgPath(s); !svg.empty()) {
    out.files.emplace_back(svg, RenderSmallMultiplesSvg(chart, 3));
  }
  return out;
}

}  // namespace plan
}  // namespace berth
