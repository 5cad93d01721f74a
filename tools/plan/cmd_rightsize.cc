// rightsize: the workload as estimated beside the same workload with the
// estimates Berth's usage history would suggest (tools/plan/right_size.h).
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "planner/base/status_macros.h"
#include "tools/plan/commands.h"
#include "tools/plan/common.h"
#include "tools/plan/right_size.h"
#include "tools/plan/stats.h"

namespace berth {
namespace plan {

absl::StatusOr<CommandOutput> RunRightSize(const std::vector<std::string>& argv,
                                           const CommandEnv& env) {
  ASSIGN_OR_RETURN(Setup s, Prepare(argv, "rightsize", {}, false));
  planner::SimInput in = s.input.sim;
  in.budgets = OnlyBudgets(s);
  planner::SimOptions opt;
  opt.policy = s.policy;
  planner::SimResult before = RunSimulation(in, opt, env, "simulating as estimated");
  RightSized sized = RightSize(s.input, before);
  sized.input.budgets = in.budgets;
  planner::SimResult after = RunSimulation(sized.input, opt, env, "simulating right-sized");

  Report rep;
  rep.title = absl::StrCat("Right-sizing: ", s.input.description.empty() ? s.input.path
                                                                         : s.input.description);
  rep.summary.push_back({"file", "file", Cell::Str(s.input.path)});
  rep.summary.push_back({"budgets", "budgets", Cell::Str(DescribeBudgets(in.budgets))});
  rep.summary.push_back({"jobs", "jobs", Cell::Int(static_cast<int64_t>(in.jobs.size()))});
  rep.summary.push_back({"re_estimated", "re-estimated", Cell::Int(sized.re_estimated)});
  rep.summary.push_back(
      {"above_new_estimate", "  peaked above it", Cell::Int(sized.above_new_estimate)});
  Table t;
  t.name = "comparison";
  t.title = "As estimated vs right-sized";
  t.columns = {{"metric", "metric"}, {"estimated", "as estimated"}, {"right_sized", "right-sized"}};
  auto row = [&t](const std::string& metric, const std::string& label, Cell a, Cell b) {
    t.rows.push_back({Cell::Str(metric, label), std::move(a), std::move(b)});
  };
  WaitStats wa = AllWaits(before), wb = AllWaits(after);
  UsageSummary ua = Summarise(before, in.budgets), ub = Summarise(after, in.budgets);
  Outcomes oa = CountOutcomes(before), ob = CountOutcomes(after);
  row("makespan_s", "makespan", DurationCell(before.makespan()), DurationCell(after.makespan()));
  row("p50_wait_s", "wait p50", DurationCell(wa.p50), DurationCell(wb.p50));
  row("p95_wait_s", "wait p95", DurationCell(wa.p95), DurationCell(wb.p95));
  row("max_wait_s", "wait max", DurationCell(wa.max), DurationCell(wb.max));
  row("memory_mean", "memory reserved mean", PercentCell(ua.memory.mean),
      PercentCell(ub.memory.mean));
  row("cpu_mean", "cpu mean", PercentCell(ua.cpu.mean), PercentCell(ub.cpu.mean));
  row("workers_mean", "worker slots mean", PercentCell(ua.workers.mean),
      PercentCell(ub.workers.mean));
  row("reserved_gib_hours", "reserved GiB-hours",
      Cell::Num(sized.reserved_gib_hours_before,
                absl::StrFormat("%.1f", sized.reserved_gib_hours_before)),
      Cell::Num(sized.reserved_gib_hours_after,
                absl::StrFormat("%.1f", sized.reserved_gib_hours_after)));
  row("succeeded", "succeeded", Cell::Int(oa.succeeded), Cell::Int(ob.succeeded));
  rep.tables.push_back(std::move(t));
  rep.notes.push_back(
      "A job is re-estimated from the runs of its (workspace, action) that had ended, as "
      "estimated, by its arrival: the largest actual peak + 25%, rounded up to 256 MiB, once "
      "5 runs succeeded (what the RightSize RPC suggests); never raised.");
  if (sized.above_new_estimate > 0) {
    rep.notes.push_back(absl::StrCat(
        sized.above_new_estimate,
        " re-estimated jobs peaked above their new estimate: for real they would have been "
        "OOM-killed; the simulation runs them to the end."));
  }
  CommandOutput out;
  out.text = Render(rep, s.format);
  return out;
}

}  // namespace plan
}  // namespace berth
