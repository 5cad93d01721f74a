// now: the plan for the file as-is.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "planner/explain.h"
#include "planner/plan.h"
#include "planner/reasons.h"
#include "planner/base/status_macros.h"
#include "tools/plan/commands.h"
#include "tools/plan/common.h"
#include "planner/base/units.h"

namespace berth {
namespace plan {

absl::StatusOr<CommandOutput> RunNow(const std::vector<std::string>& argv,
                                     const CommandEnv& env) {
  ASSIGN_OR_RETURN(Setup s, Prepare(argv, "now", {{"at"}}, false));
  planner::Budgets budgets = OnlyBudgets(s);
  absl::Duration at = absl::ZeroDuration();
  if (s.args.Has("at")) {
    ASSIGN_OR_RETURN(at, ParseHumanDuration("--at", s.args.Get("at")));
  }
  planner::SimInput in = s.input.sim;
  in.start += at;
  planner::State state;
  state.running = in.running;
  planner::SimInput eta_in;
  eta_in.start = in.start;
  eta_in.running = in.running;
  eta_in.budgets = budgets;
  for (const planner::SimJob& j : in.jobs) {
    if (j.arrival_offset > at) continue;
    state.queued.push_back(j.job);
    planner::SimJob e;
    e.job = j.job;  // estimates only: actual durations are not known "now"
    eta_in.jobs.push_back(std::move(e));
  }
  planner::PlanResult plan = planner::Plan(state, budgets, s.policy, in.start);
  // ETAs: the same planner run forward with no further arrivals, assuming
  // the estimates hold.
  planner::SimOptions opt;
  opt.policy = s.policy;
  planner::SimResult eta = RunSimulation(eta_in, opt, env, "estimating start times");

  Report rep;
  rep.title = absl::StrCat("Plan now: ", s.input.description.empty() ? s.input.path
                                                                    : s.input.description);
  auto add = [&rep](std::string key, std::string label, Cell c) {
    rep.summary.push_back({std::move(key), std::move(label), std::move(c)});
  };
  add("file", "file", Cell::Str(s.input.path));
  add("now", "now", Cell::Str(absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", in.start, absl::UTCTimeZone())));
  add("budgets", "budgets", Cell::Str(DescribeBudgets(budgets)));
  add("running", "running", Cell::Int(static_cast<int64_t>(in.running.size())));
  add("queued", "queued", Cell::Int(static_cast<int64_t>(state.queued.size())));
  add("admitted", "admitted now", Cell::Int(plan.admitted_count));
  add("memory_used_before_bytes", "memory in use", BytesCell(plan.used_before.memory_bytes));
  add("memory_used_after_bytes", "memory after plan", BytesCell(plan.used_after.memory_bytes));
  add("cpu_used_after_millis", "cpu after plan", CpuCell(plan.used_after.cpu_millis));
  add("workers_after", "workers after plan", Cell::Int(plan.used_after.workers));
  if (plan.reserved_decision >= 0) {
    const planner::Decision& d = plan.decisions[plan.reserved_decision];
    add("reservation_job", "reservation for", Cell::Str(state.queued[d.job].id));
    add("reservation_in_s", "  starting in",
        DurationCell(plan.reservation_start - plan.now));
  }
  Table t;
  t.name = "decisions";
  t.title = "Queued jobs in ranking order";
  t.columns = {{"position", "#"},
               {"job", "job"},
               {"workspace", "workspace"},
               {"priority", "prio"},
               {"memory_bytes", "memory"},
               {"cpu_millis", "cpu"},
               {"verdict", "verdict"},
               {"reason", "reason"},
               {"summary", "why"},
               {"planner_eta_s", "planner ETA"},
               {"eta_s", "simulated ETA"},
               {"smallest_change", "smallest change"}};
  Table shortfalls;
  shortfalls.name = "shortfalls";
  shortfalls.title = "Binding dimension of each waiting job";
  shortfalls.columns = {{"job", "job"},           {"dimension", "dimension"},
                        {"needed", "needs"},       {"free", "free"},
                        {"capacity", "capacity"},  {"shortfall", "short by"}};
  auto amount = [](planner::Dimension dim, int64_t v) {
    if (v == planner::Amounts::kUnlimited) return Cell::Int(v, "unlimited");
    switch (dim) {
      case planner::Dimension::kMemory: return BytesCell(v);
      case planner::Dimension::kCpu: return CpuCell(v);
      default: return Cell::Int(v, absl::StrCat(v, v == 1 ? " job" : " jobs"));
    }
  };
  int32_t position = 0;
  for (size_t k = 0; k < plan.decisions.size(); ++k) {
    const planner::Decision& d = plan.decisions[k];
    ++position;
    const planner::QueuedJob& q = state.queued[d.job];
    planner::Explanation why = planner::Explain(state, budgets, plan, k);
    Cell planner_eta = Cell::Null();
    if (why.estimated_start != absl::InfiniteFuture()) {
      absl::Duration in_t = why.estimated_start - in.start;
      planner_eta = Cell::Num(
          absl::ToDoubleSeconds(in_t),
          in_t <= absl::ZeroDuration()
              ? "now"
              : absl::StrCat(why.estimate_is_lower_bound ? ">= +" : "+",
                             FormatHumanDuration(in_t)));
    }
    Cell change = why.smallest_change ? Cell::Str(why.smallest_change->text) : Cell::Null("");
    if (d.verdict == planner::Verdict::kWait && why.shortfall) {
      const planner::Shortfall& sf = *why.shortfall;
      shortfalls.rows.push_back({Cell::Str(q.id),
                                 Cell::Str(std::string(planner::DimensionName(sf.dimension))),
                                 amount(sf.dimension, sf.needed), amount(sf.dimension, sf.free),
                                 amount(sf.dimension, sf.capacity),
                                 amount(sf.dimension, sf.shortfall)});
    }
    Cell eta_cell = Cell::Null();
    const planner::SimJobResult& er = eta.jobs[d.job];
    if (er.outcome == planner::SimOutcome::kSucceeded) {
      absl::Duration in_t = er.start - in.start;
      eta_cell = Cell::Num(absl::ToDoubleSeconds(in_t),
                           in_t == absl::ZeroDuration() ? "now"
                                                        : absl::StrCat("+", FormatHumanDuration(in_t)));
    }
    t.rows.push_back({Cell::Int(position), Cell::Str(q.id), Cell::Str(q.workspace),
                      Cell::Int(q.priority), BytesCell(q.resources.memory_bytes),
                      CpuCell(q.resources.cpu_millis),
                      Cell::Str(std::string(planner::VerdictName(d.verdict))),
                      Cell::Str(std::string(planner::ReasonName(d.reason))),
                      Cell::Str(planner::DecisionSummary(state, plan, k)),
                      std::move(planner_eta), std::move(eta_cell), std::move(change)});
  }
  rep.tables.push_back(std::move(t));
  rep.tables.push_back(std::move(shortfalls));
  rep.notes.push_back(
      "planner ETA: the planner's own estimate (\">=\" marks a lower bound). simulated "
      "ETA: when the same planner, run forward with no new arrivals, starts the job if "
      "every estimate holds.");
  CommandOutput out;
  out.text = Render(rep, s.format);
  return out;
}

}  // namespace plan
}  // namespace berth
