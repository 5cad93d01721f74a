// simulate, compare and chart.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "planner/model/reasons.h"
#include "planner/base/status_macros.h"
#include "tools/plan/commands.h"
#include "tools/plan/common.h"
#include "tools/plan/sim_tables.h"
#include "tools/plan/stats.h"
#include "planner/base/units.h"

namespace berth {
namespace plan {
namespace {

constexpr char kBerthColor[] = "#1f77b4";
constexpr char kBaselineColor[] = "#ff7f0e";

std::string Title(const PlanInput& in) {
  return in.description.empty() ? in.path : in.description;
}

// Chart subtitle: the workload's description (if any) and the budgets.
std::string ChartSubtitle(const PlanInput& in, const planner::Budgets& b) {
  return in.description.empty() ? DescribeBudgets(b)
                                : absl::StrCat(in.description, "\n", DescribeBudgets(b));
}

void AddWaitColumns(Table& t) {
  t.columns.push_back({"jobs", "jobs"});
  t.columns.push_back({"p50_wait_s", "p50 wait"});
  t.columns.push_back({"p95_wait_s", "p95 wait"});
  t.columns.push_back({"max_wait_s", "max wait"});
}

void AddWaitCells(std::vector<Cell>& row, const WaitStats& w) {
  row.push_back(Cell::Int(w.jobs));
  row.push_back(DurationCell(w.p50));
  row.push_back(DurationCell(w.p95));
  row.push_back(DurationCell(w.max));
}

Report SimulationReport(const Setup& s, const planner::Budgets& b,
                        const planner::SimResult& r) {
  const planner::SimInput& in = s.input.sim;
  Report rep;
  rep.title = absl::StrCat("Simulation: ", Title(s.input));
  Outcomes o = CountOutcomes(r);
  WaitStats w = AllWaits(r);
  UsageSummary u = Summarise(r, b);
  auto add = [&rep](std::string key, std::string label, Cell c) {
    rep.summary.push_back({std::move(key), std::move(label), std::move(c)});
  };
  add("file", "file", Cell::Str(s.input.path));
  add("budgets", "budgets", Cell::Str(DescribeBudgets(b)));
  add("policy", "policy",
      Cell::Str(absl::StrCat(s.policy_name, s.policy.backfill ? ", backfill" : ", no backfill")));
  add("start_latency_s", "start latency", DurationCell(s.start_latency));
  add("start_contention_s", "start contention", DurationCell(s.start_contention));
  if (s.start_jitter > absl::ZeroDuration()) {
    add("start_jitter_s", "start jitter", DurationCell(s.start_jitter));
    add("jitter_seed", "jitter seed", Cell::Int(static_cast<int64_t>(s.jitter_seed)));
  }
  add("start_parallelism", "start parallelism", Cell::Int(s.start_parallelism));
  add("finish_latency_s", "finish latency", DurationCell(s.finish_latency));
  add("jobs", "jobs", Cell::Int(static_cast<int64_t>(in.jobs.size())));
  add("running_at_start", "running at start", Cell::Int(static_cast<int64_t>(in.running.size())));
  add("makespan_s", "makespan", DurationCell(r.makespan()));
  add("succeeded", "succeeded", Cell::Int(o.succeeded));
  add("failed", "failed", Cell::Int(o.failed));
  add("timed_out", "  of which timed out", Cell::Int(o.timed_out));
  add("dependency_failed", "dependency failed", Cell::Int(o.dependency_failed));
  add("never_fits", "never fit", Cell::Int(static_cast<int64_t>(r.never_fits.size())));
  add("rejected_other", "rejected (other)",
      Cell::Int(o.rejected - static_cast<int64_t>(r.never_fits.size())));
  add("not_run", "not run", Cell::Int(o.not_run));
  add("p50_wait_s", "wait p50", DurationCell(w.p50));
  add("p95_wait_s", "wait p95", DurationCell(w.p95));
  add("max_wait_s", "wait max", DurationCell(w.max));
  add("mean_wait_s", "wait mean", DurationCell(w.mean));
  add("memory_mean", "memory mean", PercentCell(u.memory.mean));
  add("memory_peak", "memory peak", PercentCell(u.memory.peak));
  add("cpu_mean", "cpu mean", PercentCell(u.cpu.mean));
  add("cpu_peak", "cpu peak", PercentCell(u.cpu.peak));
  add("workers_mean", "worker slots mean", PercentCell(u.workers.mean));
  add("workers_peak", "worker slots peak", PercentCell(u.workers.peak));
  add("queue_mean", "queue mean",
      Cell::Num(std::round(u.mean_queue * 10) / 10, absl::StrFormat("%.1f jobs", u.mean_queue)));
  add("queue_peak", "queue peak", Cell::Int(u.peak_queue, absl::StrCat(u.peak_queue, " jobs")));
  add("plan_calls", "Plan() calls", Cell::Int(r.plan_calls));
  int64_t longest = LongestWaiting(r);
  if (longest >= 0) {
    const planner::SimJobResult& j = r.jobs[longest];
    add("longest_wait_job", "longest wait", Cell::Str(in.jobs[longest].job.id));
    add("longest_wait_s", "  waited", DurationCell(j.wait()));
    add("longest_wait_reason", "  mostly",
        Cell::Str(absl::StrCat(planner::ReasonName(j.main_wait_reason), " for ",
                               FormatHumanDuration(j.main_wait_time))));
  }
  Table prio;
  prio.name = "by_priority";
  prio.title = "Waits by priority (jobs that started)";
  prio.columns.push_back({"priority", "priority"});
  AddWaitColumns(prio);
  for (const GroupWaits& g : WaitsByPriority(in, r)) {
    std::vector<Cell> row = {Cell::Int(g.priority)};
    AddWaitCells(row, g.waits);
    prio.rows.push_back(std::move(row));
  }
  Table ws;
  ws.name = "by_workspace";
  ws.title = "Waits by workspace (worst p95 first)";
  ws.columns.push_back({"workspace", "workspace"});
  AddWaitColumns(ws);
  for (const GroupWaits& g : WaitsByWorkspace(in, r)) {
    std::vector<Cell> row = {Cell::Str(g.key)};
    AddWaitCells(row, g.waits);
    ws.rows.push_back(std::move(row));
  }
  Table nf;
  nf.name = "never_fits";
  nf.title = "Jobs that can never run under these budgets";
  nf.columns = {{"job", "job"}, {"memory_bytes", "memory"}, {"cpu_millis", "cpu"},
                {"pool", "pool"}, {"problem", "problem"}};
  for (size_t i : r.never_fits) {
    const planner::QueuedJob& q = in.jobs[i].job;
    nf.rows.push_back({Cell::Str(q.id), BytesCell(q.resources.memory_bytes),
                       CpuCell(q.resources.cpu_millis), Cell::Str(q.pool),
                       Cell::Str(std::string(planner::ProblemName(r.jobs[i].problem)))});
  }
  rep.tables = {std::move(prio), std::move(ws), std::move(nf)};
  return rep;
}

}  // namespace

absl::StatusOr<CommandOutput> RunSimulate(const std::vector<std::string>& argv,
                                          const CommandEnv& env) {
  ASSIGN_OR_RETURN(Setup s,
                   Prepare(argv, "simulate", {{"svg"}, {"until"}, {"state-out"}}, false));
  planner::SimInput in = s.input.sim;
  in.budgets = OnlyBudgets(s);
  if (s.args.Has("state-out") && !s.args.Has("until")) {
    return absl::InvalidArgumentError("--state-out needs --until OFFSET (the moment to write)");
  }
  if (s.args.Has("until")) {
    // The state at that moment instead of the report (state_at.h).
    ASSIGN_OR_RETURN(absl::Duration until, ParseHumanDuration("--until", s.args.Get("until")));
    if (until <= absl::ZeroDuration()) {
      return absl::InvalidArgumentError("--until: must be > 0 (the state at 0 is the file)");
    }
    CommandOutput out;
    const planner::Budgets budgets = in.budgets;
    RETURN_IF_ERROR(RunUntil(s, std::move(in), budgets, until, true, &out).status());
    return out;
  }
  planner::SimOptions opt = PlannerSimOptions(s);
  planner::SimResult r = RunSimulation(in, opt, env, "simulating");
  CommandOutput out;
  Report rep = SimulationReport(s, in.budgets, r);
  for (const std::string& note : s.budgets.notes) rep.notes.push_back(note);
  if (s.format != OutputFormat::kTable) {
    rep.tables.push_back(JobsTable(in, r, ExecutorTolerance(opt)));
    rep.tables.push_back(TimelineTable(r));
  }
  out.text = Render(rep, s.format);
  if (std::string svg = SvgPath(s); !svg.empty()) {
    out.files.emplace_back(
        svg, RenderChartSvg(UsageChart(absl::StrCat("berth-plan simulate: ", s.input.path),
                                       ChartSubtitle(s.input, in.budgets), in.budgets,
                                       {{"Berth", kBerthColor, &r}})));
  }
  return out;
}

absl::StatusOr<CommandOutput> RunChart(const std::vector<std::string>& argv,
                                       const CommandEnv& env) {
  ASSIGN_OR_RETURN(Setup s, Prepare(argv, "chart", {{"svg"}, {"baseline", false}}, false));
  std::string svg = SvgPath(s);
  if (svg.empty()) return absl::InvalidArgumentError("'chart' needs --svg FILE");
  planner::SimInput in = s.input.sim;
  in.budgets = OnlyBudgets(s);
  planner::SimOptions opt = PlannerSimOptions(s);
  planner::SimResult r = RunSimulation(in, opt, env, "simulating");
  std::vector<NamedResult> series = {{"Berth", kBerthColor, &r}};
  planner::SimResult base;
  if (s.args.Has("baseline")) {
    base = RunSimulation(in, BaselineSimOptions(s, 0), env, "baseline");
    series.push_back({absl::StrCat("count-only MAX_WORKERS=", in.budgets.max_workers),
                      kBaselineColor, &base});
  }
  CommandOutput out;
  out.files.emplace_back(
      svg, RenderChartSvg(UsageChart(absl::StrCat("berth-plan: ", s.input.path),
                                     ChartSubtitle(s.input, in.budgets), in.budgets, series)));
  Report rep;
  rep.title = "Chart";
  rep.summary.push_back({"svg", "wrote", Cell::Str(svg)});
  rep.summary.push_back({"makespan_s", "makespan", DurationCell(r.makespan())});
  out.text = Render(rep, s.format);
  return out;
}

absl::StatusOr<CommandOutput> RunCompare(const std::vector<std::string>& argv,
                                         const CommandEnv& env) {
  ASSIGN_OR_RETURN(Setup s, Prepare(argv, "compare", {{"svg"}, {"baseline-max-workers"}}, false));
  planner::SimInput in = s.input.sim;
  in.budgets = OnlyBudgets(s);
  int32_t n = in.budgets.max_workers;
  if (s.args.Has("baseline-max-workers")) {
    int32_t v = 0;
    if (!absl::SimpleAtoi(s.args.Get("baseline-max-workers"), &v) || v <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--baseline-max-workers: \"", s.args.Get("baseline-max-workers"),
          "\": expected a whole number > 0"));
    }
    n = v;
  }
  planner::SimOptions berth_opt = PlannerSimOptions(s);
  planner::SimResult berth = RunSimulation(in, berth_opt, env, "simulating Berth");
  planner::SimResult base =
      RunSimulation(in, BaselineSimOptions(s, n), env, "simulating baseline");

  Report rep;
  rep.title = absl::StrCat("Compare: ", Title(s.input));
  rep.summary.push_back({"file", "file", Cell::Str(s.input.path)});
  rep.summary.push_back({"budgets", "budgets", Cell::Str(DescribeBudgets(in.budgets))});
  rep.summary.push_back({"baseline", "baseline",
                         Cell::Str(absl::StrCat("count-only MAX_WORKERS=", n,
                                                ", FIFO, blind to memory and CPU"))});
  Table t;
  t.name = "comparison";
  t.title = "Berth vs count-only";
  t.columns = {{"metric", "metric"}, {"berth", "Berth"}, {"count_only", "count-only"}};
  auto row = [&t](const std::string& metric, const std::string& label, Cell a, Cell b) {
    t.rows.push_back({Cell::Str(metric, label), std::move(a), std::move(b)});
  };
  WaitStats wa = AllWaits(berth), wb = AllWaits(base);
  UsageSummary ua = Summarise(berth, in.budgets), ub = Summarise(base, in.budgets);
  Outcomes oa = CountOutcomes(berth), ob = CountOutcomes(base);
  row("makespan_s", "makespan", DurationCell(berth.makespan()), DurationCell(base.makespan()));
  row("p50_wait_s", "wait p50", DurationCell(wa.p50), DurationCell(wb.p50));
  row("p95_wait_s", "wait p95", DurationCell(wa.p95), DurationCell(wb.p95));
  row("max_wait_s", "wait max", DurationCell(wa.max), DurationCell(wb.max));
  row("memory_mean", "memory mean", PercentCell(ua.memory.mean), PercentCell(ub.memory.mean));
  row("memory_peak", "memory peak", PercentCell(ua.memory.peak), PercentCell(ub.memory.peak));
  row("cpu_mean", "cpu mean", PercentCell(ua.cpu.mean), PercentCell(ub.cpu.mean));
  row("cpu_peak", "cpu peak", PercentCell(ua.cpu.peak), PercentCell(ub.cpu.peak));
  row("workers_mean", "worker slots mean", PercentCell(ua.workers.mean), PercentCell(ub.workers.mean));
  row("peak_memory_bytes", "peak memory reserved", BytesCell(berth.peak_memory_bytes), BytesCell(base.peak_memory_bytes));
  row("memory_over_budget_bytes", "memory above budget", BytesCell(std::max<int64_t>(0, berth.peak_memory_over_budget)),
      BytesCell(std::max<int64_t>(0, base.peak_memory_over_budget)));
  row("cpu_over_budget_millis", "cpu above budget", CpuCell(std::max<int64_t>(0, berth.peak_cpu_over_budget)),
      CpuCell(std::max<int64_t>(0, base.peak_cpu_over_budget)));
  row("succeeded", "succeeded", Cell::Int(oa.succeeded), Cell::Int(ob.succeeded));
  row("never_fits", "never fit", Cell::Int(static_cast<int64_t>(berth.never_fits.size())),
      Cell::Int(static_cast<int64_t>(base.never_fits.size())));
  rep.tables.push_back(std::move(t));
  // State only what was measured, for both.
  auto over = [&](const char* who, const char* verb, const planner::SimResult& r) {
    if (r.peak_memory_over_budget <= 0) {
      return absl::StrCat(who, " stayed within the ", FormatBytes(in.budgets.memory_bytes),
                          " memory budget on this workload (peak ",
                          FormatBytes(r.peak_memory_bytes), " reserved).");
    }
    return absl::StrCat(who, verb, FormatBytes(r.peak_memory_over_budget),
                        " above the ", FormatBytes(in.budgets.memory_bytes), " memory budget (",
                        FormatBytes(r.peak_memory_bytes), " at +",
                        FormatHumanDuration(r.peak_memory_at - r.start), ").");
  };
  rep.notes.push_back(over("The count-only limit", " would have committed up to ", base));
  rep.notes.push_back(over("Berth", " reserved up to ", berth));
  CommandOutput out;
  out.text = Render(rep, s.format);
  if (std::string svg = SvgPath(s); !svg.empty()) {
    out.files.emplace_back(
        svg, RenderChartSvg(UsageChart(
                 absl::StrCat("berth-plan compare: ", s.input.path),
                 ChartSubtitle(s.input, in.budgets), in.budgets,
                 {{"Berth", kBerthColor, &berth},
                  {absl::StrCat("count-only MAX_WORKERS=", n), kBaselineColor, &base}})));
  }
  return out;
}

}  // namespace plan
}  // namespace berth
