// ETA ranges (eta_range.h): the plan's forecast re-run on scaled durations.
#include "planner/forecast/eta_range.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace berth::planner {

std::optional<DurationRatios> LearnRatios(std::vector<double> ratios, int min_samples) {
  ratios.erase(std::remove_if(ratios.begin(), ratios.end(),
                              [](double r) { return !std::isfinite(r) || r <= 0; }),
               ratios.end());
  if (ratios.empty() || static_cast<int>(ratios.size()) < std::max(1, min_samples)) {
    return std::nullopt;
  }
  std::sort(ratios.begin(), ratios.end());
  const size_t n = ratios.size();
  // Nearest rank: the smallest value with at least q of the samples at or
  // below it.
  auto at = [&](double q) {
    const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(n)));
    return ratios[std::clamp<size_t>(rank, 1, n) - 1];
  };
  DurationRatios out;
  out.p10 = at(0.10);
  out.p50 = at(0.50);
  out.p90 = at(0.90);
  out.samples = static_cast<int32_t>(n);
  return out;
}

namespace {

double Pick(const DurationRatios& r, int quantile) {
  return quantile == 0 ? r.p10 : quantile == 1 ? r.p50 : r.p90;
}

absl::Duration Scale(absl::Duration estimate, absl::Duration fallback, double ratio) {
  const absl::Duration run = estimate > absl::ZeroDuration() ? estimate : fallback;
  // At least a microsecond: zero means "unknown" to the planner.
  return std::max(absl::Microseconds(1), run * ratio);
}

}  // namespace

State ScaledState(const State& state, const Policy& policy, const RatioAssignment& ratios,
                  int quantile) {
  State out = state;
  for (size_t i = 0; i < out.queued.size() && i < ratios.queued.size(); ++i) {
    if (!ratios.queued[i].has_value()) continue;
    QueuedJob& j = out.queued[i];
    j.expected_duration =
        Scale(j.expected_duration, policy.default_duration, Pick(*ratios.queued[i], quantile));
  }
  for (size_t i = 0; i < out.running.size() && i < ratios.running.size(); ++i) {
    if (!ratios.running[i].has_value()) continue;
    RunningJob& j = out.running[i];
    j.expected_duration =
        Scale(j.expected_duration, policy.default_duration, Pick(*ratios.running[i], quantile));
  }
  return out;
}

// One scaled forecast: its state and plan outlive the table that reads them.
struct EtaRangeTable::Scaled {
  State state;
  PlanResult plan;
  std::vector<uint32_t> decision_of_queued;  // queued index -> k in plan
  std::unique_ptr<StartEstimateTable> table;
};

EtaRangeTable::EtaRangeTable(const State& state, const Budgets& budgets, const Policy& policy,
                             const PlanResult& result, const RatioAssignment& ratios,
                             const ForecastOptions& options) {
  queued_of_decision_.reserve(result.decisions.size());
  for (const Decision& d : result.decisions) queued_of_decision_.push_back(d.job);
  ranged_.assign(state.queued.size(), false);
  for (size_t i = 0; i < state.queued.size(); ++i) {
    const bool has = i < ratios.queued.size() && ratios.queued[i].has_value();
    ranged_[i] = has && (ratios.ranged.empty() || (i < ratios.ranged.size() && ratios.ranged[i]));
  }
  if (std::none_of(ranged_.begin(), ranged_.end(), [](bool b) { return b; })) return;
  for (int q = 0; q < 3; ++q) {
    auto s = std::make_unique<Scaled>();
    s->state = ScaledState(state, policy, ratios, q);
    s->plan = Plan(s->state, budgets, policy, result.now);
    s->decision_of_queued.assign(s->state.queued.size(), UINT32_MAX);
    for (size_t k = 0; k < s->plan.decisions.size(); ++k) {
      s->decision_of_queued[s->plan.decisions[k].job] = static_cast<uint32_t>(k);
    }
    s->table = std::make_unique<StartEstimateTable>(s->state, budgets, policy, s->plan, options);
    scaled_[static_cast<size_t>(q)] = std::move(s);
  }
}

EtaRangeTable::~EtaRangeTable() = default;

EtaRange EtaRangeTable::operator[](size_t k) const {
  EtaRange out;
  const uint32_t job = queued_of_decision_[k];
  if (!ranged_[job]) return out;
  std::array<absl::Time, 3> t;
  for (size_t q = 0; q < 3; ++q) {
    const Scaled& s = *scaled_[q];
    const uint32_t d = s.decision_of_queued[job];
    if (d == UINT32_MAX) return out;
    const StartEstimate e = (*s.table)[d];
    if (e.kind == EtaKind::kUnknown || e.kind == EtaKind::kBeyondForecast) return out;
    t[q] = e.time;
  }
  // Scheduling is not monotone in durations (backfill can reorder), so the
  // three are sorted rather than assumed in order.
  std::sort(t.begin(), t.end());
  out.known = true;
  out.earliest = t[0];
  out.likely = t[1];
  out.latest = t[2];
  return out;
}

}  // namespace berth::planner
