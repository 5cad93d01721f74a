#include "tools/plan/common.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "planner/ranking/ranking.h"
#include "planner/base/status_macros.h"
#include "planner/base/units.h"
#include "planner/base/proto_json.h"
#include "tools/plan/executor_metrics.h"
#include "tools/plan/state_at.h"

namespace berth {
namespace plan {

absl::StatusOr<Setup> Prepare(const std::vector<std::string>& argv,
                              const std::string& command,
                              const std::vector<FlagSpec>& extra, bool allow_lists) {
  std::vector<FlagSpec> specs = BudgetFlagSpecs();
  specs.push_back({"json", false});
  specs.push_back({"csv", false});
  specs.push_back({"policy"});
  specs.push_back({"no-backfill", false});
  specs.push_back({"default-duration"});
  specs.push_back({"aging-interval"});
  specs.push_back({"aging-top-memory"});
  specs.push_back({"start-latency"});
  specs.push_back({"finish-latency"});
  specs.push_back({"start-parallelism"});
  specs.push_back({"start-contention"});
  specs.push_back({"start-jitter"});
  specs.push_back({"jitter-seed"});
  specs.push_back({"executor-metrics"});
  specs.insert(specs.end(), extra.begin(), extra.end());
  Setup s;
  ASSIGN_OR_RETURN(s.args, ParseArgs(argv, specs, command));
  if (s.args.positional.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", command, "' needs exactly one workload or snapshot FILE, got ",
        s.args.positional.size(), s.args.positional.empty() ? "" : ": ",
        absl::StrJoin(s.args.positional, " ")));
  }
  if (s.args.Has("json") && s.args.Has("csv")) {
    return absl::InvalidArgumentError("--json and --csv are mutually exclusive");
  }
  s.format = s.args.Has("json")  ? OutputFormat::kJson
             : s.args.Has("csv") ? OutputFormat::kCsv
                                 : OutputFormat::kTable;
  s.policy_name = s.args.Has("policy") ? s.args.Get("policy") : "drf";
  auto ranking = planner::FindRankingPolicy(s.policy_name);
  if (!ranking.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--policy: \"", s.policy_name, "\": ", ranking.status().message()));
  }
  s.policy.ranking = *ranking;
  s.policy.backfill = !s.args.Has("no-backfill");
  if (s.args.Has("default-duration")) {
    ASSIGN_OR_RETURN(s.policy.default_duration,
                     ParseHumanDuration("--default-duration", s.args.Get("default-duration")));
    if (s.policy.default_duration <= absl::ZeroDuration()) {
      return absl::InvalidArgumentError("--default-duration: must be > 0");
    }
  }
  if (s.args.Has("aging-interval")) {
    ASSIGN_OR_RETURN(s.policy.aging_interval,
                     ParseHumanDuration("--aging-interval", s.args.Get("aging-interval")));
    if (s.policy.aging_interval < absl::ZeroDuration()) {
      return absl::InvalidArgumentError("--aging-interval: must be >= 0 (0 turns aging off)");
    }
  }
  if (s.args.Has("aging-top-memory")) {
    // ParseHumanDuration refuses a negative duration.
    ASSIGN_OR_RETURN(s.policy.aging_top_memory,
                     ParseHumanDuration("--aging-top-memory", s.args.Get("aging-top-memory")));
  }
  if (s.args.Has("executor-metrics")) {
    const std::string source = s.args.Get("executor-metrics");
    absl::StatusOr<std::string> text = ReadMetrics(source);
    absl::StatusOr<ExecutorLatencies> measured =
        text.ok() ? ParseExecutorLatencies(*text) : text.status();
    if (!measured.ok()) {
      return absl::Status(measured.status().code(),
                          absl::StrCat("--executor-metrics: ", measured.status().message()));
    }
    s.finish_latency = measured->finish_median;
    if (measured->start_levels > 0) {
      s.start_latency = measured->start.alone;
      s.start_contention = measured->start.contention;
    } else {
      // No levels (a berthd before them, or starts never overlapped): the
      // median already holds whatever contention there was.
      s.start_latency = measured->start_median;
      s.start_contention = absl::ZeroDuration();
    }
  }
  for (auto [flag, out] : {std::pair{"start-latency", &s.start_latency},
                           std::pair{"start-contention", &s.start_contention},
                           std::pair{"start-jitter", &s.start_jitter},
                           std::pair{"finish-latency", &s.finish_latency}}) {
    if (!s.args.Has(flag)) continue;
    const std::string name = absl::StrCat("--", flag);
    ASSIGN_OR_RETURN(*out, ParseHumanDuration(name, s.args.Get(flag)));
    if (*out < absl::ZeroDuration()) {
      return absl::InvalidArgumentError(absl::StrCat(name, ": must be >= 0"));
    }
  }
  if (s.args.Has("start-parallelism")) {
    const std::string v = s.args.Get("start-parallelism");
    if (!absl::SimpleAtoi(v, &s.start_parallelism) || s.start_parallelism < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--start-parallelism: \"", v, "\": expected a whole number >= 0 (0 = unbounded)"));
    }
  }
  if (s.args.Has("jitter-seed") && !absl::SimpleAtoi(s.args.Get("jitter-seed"), &s.jitter_seed)) {
    return absl::InvalidArgumentError("--jitter-seed: expected a whole number >= 0");
  }
  const absl::Time load_start = absl::Now();
  ASSIGN_OR_RETURN(s.input, LoadPlanInput(s.args.positional[0]));
  s.load_time = absl::Now() - load_start;
  ASSIGN_OR_RETURN(s.budgets, ResolveBudgets(s.args, s.input, allow_lists));
  for (const planner::Budgets& b : Combinations(s.budgets)) {
    RETURN_IF_ERROR(CheckPoolsKnown(s.input, b));
  }
  return s;
}

planner::SimOptions PlannerSimOptions(const Setup& s) {
  planner::SimOptions opt;
  opt.policy = s.policy;
  opt.start_latency = s.start_latency;
  opt.start_contention = s.start_contention;
  opt.start_jitter = s.start_jitter;
  opt.start_jitter_seed = s.jitter_seed;
  opt.finish_latency = s.finish_latency;
  opt.start_parallelism = s.start_parallelism;
  opt.plan_at_starts = true;  // as berthd plans (simulator.h)
  return opt;
}

planner::ExecutorModel ExecutorModelOf(const Setup& s) {
  planner::ExecutorModel m;
  m.start_latency = s.start_latency;
  m.start_contention = s.start_contention;
  m.start_parallelism = s.start_parallelism;
  m.finish_latency = s.finish_latency;
  m.plan_at_starts = true;  // as PlannerSimOptions
  return m;
}

planner::SimOptions BaselineSimOptions(const Setup& s, int32_t max_workers) {
  planner::SimOptions opt;
  opt.mode = planner::SimMode::kCountBaseline;
  opt.baseline_max_workers = max_workers;
  opt.start_latency = s.start_latency;
  opt.start_contention = s.start_contention;
  opt.start_jitter = s.start_jitter;
  opt.start_jitter_seed = s.jitter_seed;
  opt.finish_latency = s.finish_latency;
  opt.start_parallelism = s.start_parallelism;
  return opt;
}

absl::StatusOr<std::string> StateJson(const Setup& s, const planner::SimInput& state,
                                      const std::vector<PlanInput::Actual>& actuals,
                                      const planner::Budgets& budgets, absl::Duration at) {
  const std::string of =
      s.input.description.empty() ? s.input.path : s.input.description;
  return ToJson(WorkloadOf(state, actuals, budgets,
                           absl::StrCat("state at +", FormatHumanDuration(at), " of ", of)));
}

absl::StatusOr<planner::SimInput> RunUntil(const Setup& s, planner::SimInput in,
                                           const planner::Budgets& budgets, absl::Duration at,
                                           bool print, CommandOutput* out) {
  in.budgets = budgets;
  Placements placements;
  MemoryAt memory;
  memory.at = in.start + at;
  const planner::SimResult run =
      SimulateRecordingPlacements(in, PlannerSimOptions(s), &placements, &memory);
  std::vector<PlanInput::Actual> actuals;
  planner::SimInput state =
      ContinuationAt(in, run, placements, in.start + at, s.policy.default_duration,
                     s.input.actuals, &actuals, memory.memory);
  if (s.args.Has("state-out") || print) {
    ASSIGN_OR_RETURN(std::string json, StateJson(s, state, actuals, budgets, at));
    if (s.args.Has("state-out")) {
      out->files.emplace_back(s.args.Get("state-out"), std::move(json));
    } else {
      out->text = std::move(json);
    }
  }
  return state;
}

planner::Budgets OnlyBudgets(const Setup& s) { return Combinations(s.budgets).front(); }

std::string DescribeBudgets(const planner::Budgets& b) {
  std::string out = absl::StrCat(FormatBytes(b.memory_bytes), ", ", FormatCores(b.cpu_millis),
                                 " cores, ", b.max_workers, " workers");
  std::vector<std::string> pools;
  for (const auto& [name, max] : b.pool_max_workers) {
    pools.push_back(absl::StrCat(name, " <= ", max));
  }
  std::sort(pools.begin(), pools.end());
  for (const std::string& p : pools) absl::StrAppend(&out, ", pool ", p);
  if (b.workspace_max_workers > 0) {
    absl::StrAppend(&out, ", workspace <= ", b.workspace_max_workers);
  }
  if (!b.nodes.empty()) absl::StrAppend(&out, ", on ", b.nodes.size(), " nodes");
  return out;
}

planner::SimResult RunSimulation(const planner::SimInput& in, planner::SimOptions opt,
                                 const CommandEnv& env, const std::string& label) {
  if (env.progress) {
    opt.progress = [&env, &label](double f) {
      env.progress(absl::StrFormat("%s %3.0f%%", label, 100 * f));
    };
  }
  return planner::Simulate(in, opt);
}

Cell DurationCell(absl::Duration d) {
  return Cell::Num(absl::ToDoubleSeconds(d), FormatHumanDuration(d));
}

Cell PercentCell(double fraction) {
  return Cell::Num(std::round(fraction * 10000) / 10000,
                   absl::StrFormat("%.1f%%", 100 * fraction));
}

Cell BytesCell(int64_t bytes) { return Cell::Int(bytes, FormatBytes(bytes)); }

Cell CpuCell(int64_t millis) {
  return Cell::Int(millis, FormatCpu(millis));
}

Chart UsageChart(const std::string& title, const std::string& subtitle,
                 const planner::Budgets& budgets, const std::vector<NamedResult>& results) {
  Chart c;
  c.title = title;
  c.subtitle = subtitle;
  double x_max = 0;
  Panel mem{"Memory reserved", "memory (GiB)",
            static_cast<double>(budgets.memory_bytes) / (1 << 30),
            absl::StrCat("budget ", FormatBytes(budgets.memory_bytes)), {}};
  Panel cpu{"CPU reserved", "CPU (cores)", budgets.cpu_millis / 1000.0,
            absl::StrCat("budget ", FormatCores(budgets.cpu_millis), " cores"), {}};
  Panel workers{"Worker slots in use", "running jobs", static_cast<double>(budgets.max_workers),
                absl::StrCat("max workers ", budgets.max_workers), {}};
  Panel queue{"Queue length", "queued jobs", -1, "", {}};
  for (const NamedResult& nr : results) {
    const planner::SimResult& r = *nr.result;
    x_max = std::max(x_max, absl::ToDoubleHours(r.end - r.start));
    Series m{nr.name, nr.color, {}}, p{nr.name, nr.color, {}}, w{nr.name, nr.color, {}},
        q{nr.name, nr.color, {}};
    for (const planner::SimUsagePoint& pt : r.timeline) {
      double x = absl::ToDoubleHours(pt.time - r.start);
      m.points.emplace_back(x, static_cast<double>(pt.memory_bytes) / (1 << 30));
      p.points.emplace_back(x, pt.cpu_millis / 1000.0);
      w.points.emplace_back(x, pt.workers);
      q.points.emplace_back(x, pt.queued);
    }
    mem.series.push_back(std::move(m));
    cpu.series.push_back(std::move(p));
    workers.series.push_back(std::move(w));
    queue.series.push_back(std::move(q));
  }
  c.x_max = x_max > 0 ? x_max : 1;
  c.panels = {mem, cpu, workers, queue};
  return c;
}

std::string SvgPath(const Setup& s) { return s.args.Has("svg") ? s.args.Get("svg") : ""; }

}  // namespace plan
}  // namespace berth
