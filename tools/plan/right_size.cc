#include "tools/plan/right_size.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "executor/store/usage_history.h"
#include "executor/usage/usage_stats.h"

namespace berth {
namespace plan {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

}  // namespace

RightSized RightSize(const PlanInput& in, const planner::SimResult& before) {
  RightSized out;
  out.input = in.sim;
  const size_t n = in.sim.jobs.size();
  // Arrivals in time order, and the ended runs that teach, in end order.
  std::vector<size_t> arrivals(n), ends;
  for (size_t i = 0; i < n; ++i) {
    arrivals[i] = i;
    const planner::SimJobResult& r = before.jobs[i];
    if (r.outcome == planner::SimOutcome::kSucceeded && in.actuals[i].peak_memory_bytes > 0) {
      ends.push_back(i);
    }
  }
  std::stable_sort(arrivals.begin(), arrivals.end(), [&](size_t a, size_t b) {
    return in.sim.jobs[a].arrival_offset < in.sim.jobs[b].arrival_offset;
  });
  std::stable_sort(ends.begin(), ends.end(),
                   [&](size_t a, size_t b) { return before.jobs[a].end < before.jobs[b].end; });
  std::map<std::string, UsageHistory> histories;
  const UsageHistoryOptions bounds;
  size_t next_end = 0;
  for (size_t i : arrivals) {
    const absl::Time arrival = in.sim.start + in.sim.jobs[i].arrival_offset;
    for (; next_end < ends.size() && before.jobs[ends[next_end]].end <= arrival; ++next_end) {
      const size_t e = ends[next_end];
      const planner::QueuedJob& q = in.sim.jobs[e].job;
      UsageRun run;
      run.peak_memory_bytes = in.actuals[e].peak_memory_bytes;
      run.run_time = before.jobs[e].end - before.jobs[e].start;
      run.asked_memory_bytes = q.resources.memory_bytes;
      AppendRun(&histories[UsageKey(q.workspace, in.actuals[e].action)], std::move(run),
                bounds.runs_per_key);
    }
    planner::QueuedJob& job = out.input.jobs[i].job;
    auto h = histories.find(UsageKey(job.workspace, in.actuals[i].action));
    if (h == histories.end()) continue;
    const int64_t suggested = Summarise(h->second).suggested_memory_bytes;
    if (suggested <= 0 || suggested >= job.resources.memory_bytes) continue;
    job.resources.memory_bytes = suggested;
    ++out.re_estimated;
    if (in.actuals[i].peak_memory_bytes > suggested) ++out.above_new_estimate;
  }
  for (size_t i = 0; i < n; ++i) {
    const planner::SimJobResult& r = before.jobs[i];
    if (r.outcome != planner::SimOutcome::kSucceeded && r.outcome != planner::SimOutcome::kFailed) {
      continue;
    }
    const double hours = absl::ToDoubleHours(r.end - r.start);
    out.reserved_gib_hours_before +=
        static_cast<double>(in.sim.jobs[i].job.resources.memory_bytes) / kGiB * hours;
    out.reserved_gib_hours_after +=
        static_cast<double>(out.input.jobs[i].job.resources.memory_bytes) / kGiB * hours;
  }
  return out;
}

}  // namespace plan
}  // namespace berth
