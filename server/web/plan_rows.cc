#include "server/web/plan_rows.h"

#include <algorithm>

#include "planner/convert/convert.h"
#include "planner/explain/explain.h"
#include "planner/forecast/eta.h"

namespace berth::web {
namespace {

bool VerdictMatches(planner::Verdict v, absl::string_view want) {
  if (want.empty()) return true;
  switch (v) {
    case planner::Verdict::kAdmit: return want == "admit";
    case planner::Verdict::kWait: return want == "wait";
    case planner::Verdict::kReject: return want == "reject";
    default: return false;
  }
}

}  // namespace

PlanPageData SelectPlanRows(const PlanSnapshot& snap, PlanFilter filter, int page_size) {
  PlanPageData out;
  out.page_size = std::max(1, page_size);
  out.queued = static_cast<int64_t>(snap.result.decisions.size());
  out.revision = snap.revision.load();
  out.computed_at = snap.now;
  std::vector<uint32_t> matching;
  const auto& decisions = snap.result.decisions;
  for (uint32_t i = 0; i < decisions.size(); ++i) {
    const planner::Decision& d = decisions[i];
    const planner::QueuedJob& q = snap.state.queued[d.job];
    if (!filter.workspace.empty() && q.workspace != filter.workspace) continue;
    if (!filter.pool.empty() && q.pool != filter.pool) continue;
    if (!VerdictMatches(d.verdict, filter.verdict)) continue;
    matching.push_back(i);
  }
  out.matching = static_cast<int64_t>(matching.size());
  const int64_t pages =
      matching.empty() ? 1 : (out.matching + out.page_size - 1) / out.page_size;
  filter.page = static_cast<int>(std::clamp<int64_t>(filter.page, 1, pages));
  const size_t begin = static_cast<size_t>(filter.page - 1) * out.page_size;
  const size_t end = std::min(matching.size(), begin + out.page_size);
  const planner::StartEstimateTable& etas = snap.estimates();
  for (size_t k = begin; k < end; ++k) {
    const uint32_t i = matching[k];
    const planner::Decision& d = decisions[i];
    const planner::QueuedJob& q = snap.state.queued[d.job];
    PlanRow row;
    row.decision = planner::ToProtoDecision(snap.result, d, snap.state,
                                            static_cast<int32_t>(i + 1), etas[i]);
    row.decision.set_summary(planner::DecisionSummary(snap.state, snap.result, i));
    row.workspace = q.workspace;
    row.pool = q.pool;
    row.priority = q.priority;
    out.rows.push_back(std::move(row));
  }
  out.filter = std::move(filter);
  return out;
}

void ForecastDrain(const PlanSnapshot& snap, OverviewData* out) {
  const planner::StartEstimateTable& etas = snap.estimates();
  std::optional<absl::Time> last;
  int64_t unknown = 0;
  int64_t beyond = 0;
  for (size_t i = 0; i < snap.result.decisions.size(); ++i) {
    const planner::StartEstimate e = etas[i];
    if (e.kind == planner::EtaKind::kUnknown) {
      ++unknown;
      continue;
    }
    // A job beyond the forecast starts after e.time (the forecast's last
    // instant, the latest time any estimate has).
    beyond += e.kind == planner::EtaKind::kBeyondForecast;
    if (!last.has_value() || e.time > *last) last = e.time;
  }
  out->last_start = last;
  out->without_estimate = unknown;
  out->beyond_forecast = beyond;
}

}  // namespace berth::web
