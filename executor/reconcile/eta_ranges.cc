// A plan's ETA ranges from the usage history (eta_ranges.h).
#include "executor/reconcile/eta_ranges.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"

namespace berth {

std::vector<double> DurationRatiosOf(const UsageHistory& history) {
  std::vector<double> out;
  for (const UsageRun& r : history.runs) {
    if (r.state != v1::JOB_STATE_SUCCEEDED) continue;
    if (r.asked_duration <= absl::ZeroDuration() || r.run_time <= absl::ZeroDuration()) continue;
    out.push_back(absl::FDivDuration(r.run_time, r.asked_duration));
  }
  return out;
}

std::unique_ptr<const PlanRanges> BuildPlanRanges(
    const planner::State& state, const std::vector<JobRecord>& queued_jobs,
    const planner::Budgets& budgets, const planner::Policy& policy,
    const planner::PlanResult& result, const planner::ForecastOptions& options,
    const std::vector<UsageHistory>& histories) {
  auto out = std::make_unique<PlanRanges>();
  out->basis.resize(state.queued.size());
  if (state.queued.size() > kMaxRangedQueue) {
    out->too_large = true;
    return out;
  }
  // Ratios by (workspace, action), by workspace and over all history.
  absl::flat_hash_map<std::string, planner::DurationRatios> by_action;
  absl::flat_hash_map<std::string, std::vector<double>> pooled;
  std::vector<double> all;
  for (const UsageHistory& h : histories) {
    std::vector<double> ratios = DurationRatiosOf(h);
    if (ratios.empty()) continue;
    if (auto q = planner::LearnRatios(ratios, kMinRatioRuns)) {
      by_action[UsageKey(h.workspace, h.action)] = *q;
    }
    std::vector<double>& ws = pooled[h.workspace];
    ws.insert(ws.end(), ratios.begin(), ratios.end());
    all.insert(all.end(), ratios.begin(), ratios.end());
  }
  const std::optional<planner::DurationRatios> overall = planner::LearnRatios(all, kMinRatioRuns);
  if (!overall.has_value()) return out;  // too little history: no ranges at all
  absl::flat_hash_map<std::string, planner::DurationRatios> by_workspace;
  for (auto& [ws, ratios] : pooled) {
    if (auto q = planner::LearnRatios(std::move(ratios), kMinRatioRuns)) by_workspace[ws] = *q;
  }

  planner::RatioAssignment assign;
  assign.queued.resize(state.queued.size());
  assign.ranged.assign(state.queued.size(), false);
  for (size_t i = 0; i < state.queued.size(); ++i) {
    const planner::QueuedJob& q = state.queued[i];
    auto ws = by_workspace.find(q.workspace);
    if (ws != by_workspace.end() && i < queued_jobs.size() && queued_jobs[i] != nullptr) {
      // The action is only in the full record: decoded for the workspaces
      // with history only.
      const std::string action = queued_jobs[i]->Decode().job.spec().action();
      auto a = by_action.find(UsageKey(q.workspace, action));
      if (a != by_action.end()) {
        out->basis[i] = RangeBasis{"action", a->second};
      } else {
        out->basis[i] = RangeBasis{"workspace", ws->second};
      }
    }
    assign.queued[i] = out->basis[i].has_value() ? out->basis[i]->ratios : *overall;
    assign.ranged[i] = out->basis[i].has_value();
  }
  assign.running.reserve(state.running.size());
  for (const planner::RunningJob& r : state.running) {
    auto ws = by_workspace.find(r.workspace);
    assign.running.push_back(ws != by_workspace.end() ? ws->second : *overall);
  }
  if (std::none_of(assign.ranged.begin(), assign.ranged.end(), [](bool b) { return b; })) {
    return out;
  }
  out->table = std::make_unique<planner::EtaRangeTable>(state, budgets, policy, result, assign,
                                                        options);
  return out;
}

}  // namespace berth
