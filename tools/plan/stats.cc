#include "tools/plan/stats.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "tools/base/quantile.h"

namespace berth {
namespace plan {
namespace {

bool Started(const planner::SimJobResult& j) {
  return j.outcome == planner::SimOutcome::kSucceeded ||
         j.outcome == planner::SimOutcome::kFailed;
}

}  // namespace

absl::Duration Percentile(std::vector<absl::Duration> values, double p) {
  if (values.empty()) return absl::ZeroDuration();
  return berth::Quantile(std::move(values), p / 100.0);
}

WaitStats Waits(const std::vector<absl::Duration>& waits) {
  WaitStats s;
  s.jobs = static_cast<int64_t>(waits.size());
  if (waits.empty()) return s;
  s.p50 = Percentile(waits, 50);
  s.p95 = Percentile(waits, 95);
  s.max = *std::max_element(waits.begin(), waits.end());
  absl::Duration total;
  for (absl::Duration w : waits) total += w;
  s.mean = total / static_cast<int64_t>(waits.size());
  return s;
}

WaitStats AllWaits(const planner::SimResult& r) {
  std::vector<absl::Duration> waits;
  for (const auto& j : r.jobs) {
    if (Started(j)) waits.push_back(j.wait());
  }
  return Waits(waits);
}

std::vector<GroupWaits> WaitsByPriority(const planner::SimInput& in,
                                        const planner::SimResult& r) {
  std::map<int32_t, std::vector<absl::Duration>, std::greater<>> groups;
  for (size_t i = 0; i < r.jobs.size(); ++i) {
    if (Started(r.jobs[i])) groups[in.jobs[i].job.priority].push_back(r.jobs[i].wait());
  }
  std::vector<GroupWaits> out;
  for (const auto& [p, waits] : groups) {
    out.push_back({absl::StrCat(p), p, Waits(waits)});
  }
  return out;
}

std::vector<GroupWaits> WaitsByWorkspace(const planner::SimInput& in,
                                         const planner::SimResult& r) {
  std::map<std::string, std::vector<absl::Duration>> groups;
  for (size_t i = 0; i < r.jobs.size(); ++i) {
    if (Started(r.jobs[i])) groups[in.jobs[i].job.workspace].push_back(r.jobs[i].wait());
  }
  std::vector<GroupWaits> out;
  for (const auto& [ws, waits] : groups) out.push_back({ws, 0, Waits(waits)});
  std::stable_sort(out.begin(), out.end(), [](const GroupWaits& a, const GroupWaits& b) {
    return a.waits.p95 > b.waits.p95;
  });
  return out;
}

UsageSummary Summarise(const planner::SimResult& r, const planner::Budgets& b) {
  UsageSummary s;
  const auto& tl = r.timeline;
  double total = absl::ToDoubleSeconds(r.end - r.start);
  double mem = 0, cpu = 0, workers = 0, queue = 0;
  for (size_t k = 0; k < tl.size(); ++k) {
    const auto& p = tl[k];
    absl::Time until = k + 1 < tl.size() ? tl[k + 1].time : r.end;
    double dt = std::max(0.0, absl::ToDoubleSeconds(until - p.time));
    mem += dt * static_cast<double>(p.memory_bytes);
    cpu += dt * static_cast<double>(p.cpu_millis);
    workers += dt * p.workers;
    queue += dt * p.queued;
    s.memory.peak = std::max(s.memory.peak, static_cast<double>(p.memory_bytes));
    s.cpu.peak = std::max(s.cpu.peak, static_cast<double>(p.cpu_millis));
    s.workers.peak = std::max(s.workers.peak, static_cast<double>(p.workers));
    s.peak_queue = std::max(s.peak_queue, p.queued);
  }
  // The simulator's own peaks also see instants the step function folds
  // (several events at one time): one measurement for "peak" everywhere.
  s.memory.peak = std::max(s.memory.peak, static_cast<double>(r.peak_memory_bytes));
  s.cpu.peak = std::max(s.cpu.peak, static_cast<double>(r.peak_cpu_millis));
  auto frac = [](double v, double cap) { return cap > 0 ? v / cap : 0.0; };
  if (total > 0) {
    s.memory.mean = frac(mem / total, static_cast<double>(b.memory_bytes));
    s.cpu.mean = frac(cpu / total, static_cast<double>(b.cpu_millis));
    s.workers.mean = frac(workers / total, b.max_workers);
    s.mean_queue = queue / total;
  }
  s.memory.peak = frac(s.memory.peak, static_cast<double>(b.memory_bytes));
  s.cpu.peak = frac(s.cpu.peak, static_cast<double>(b.cpu_millis));
  s.workers.peak = frac(s.workers.peak, b.max_workers);
  return s;
}

Outcomes CountOutcomes(const planner::SimResult& r) {
  Outcomes o;
  for (const auto& j : r.jobs) {
    switch (j.outcome) {
      case planner::SimOutcome::kSucceeded: ++o.succeeded; break;
      case planner::SimOutcome::kFailed:
        ++o.failed;
        if (j.timed_out) ++o.timed_out;
        break;
      case planner::SimOutcome::kDependencyFailed: ++o.dependency_failed; break;
      case planner::SimOutcome::kRejected: ++o.rejected; break;
      case planner::SimOutcome::kNotRun: ++o.not_run; break;
    }
  }
  return o;
}

int64_t LongestWaiting(const planner::SimResult& r) {
  int64_t best = -1;
  for (size_t i = 0; i < r.jobs.size(); ++i) {
    if (!Started(r.jobs[i])) continue;
    if (best < 0 || r.jobs[i].wait() > r.jobs[best].wait()) best = static_cast<int64_t>(i);
  }
  return best;
}

}  // namespace plan
}  // namespace berth
