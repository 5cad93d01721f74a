// ETA ranges: how sure a start estimate is, from the durations Berth saw.
//
// The forecast (eta.h) dates a start as if every estimate holds. Real run
// times differ from estimates by a ratio (real / estimated) that Berth
// observes per (workspace, action). A range re-runs the same forecast three
// times on the same state, with every running and queued job's duration
// scaled by the P10, P50 and P90 of its ratios: earliest, likely, latest.
// Layered on the forecast (ForecastStarts / StartEstimateTable), never
// inside it: each scaled forecast is the planner itself on a scaled state,
// bounded by the same ForecastOptions, made lazily as far as reads need.
//
// Not a guarantee per job: a start can fall outside when its own
// predecessors ran unusually (the ratios of one run spread as widely as the
// history's P10-P90), or when a different mix reorders backfill. Measured
// coverage over generated workloads: docs/DESIGN.md "Promises".
//
// Thread-safe: LearnRatios is pure; EtaRangeTable reads are serialised by
// the StartEstimateTables it owns.
#ifndef BERTH_PLANNER_FORECAST_ETA_RANGE_H_
#define BERTH_PLANNER_FORECAST_ETA_RANGE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/time/time.h"
#include "planner/forecast/eta.h"
#include "planner/model/model.h"
#include "planner/plan/plan.h"
#include "planner/ranking/policy.h"

namespace berth::planner {

// Quantiles of observed ratios real / estimated run time.
struct DurationRatios {
  double p10 = 1;
  double p50 = 1;
  double p90 = 1;
  int32_t samples = 0;
};

// Nearest-rank P10/P50/P90 of `ratios` (the non-finite and non-positive
// ones are dropped). nullopt with fewer than `min_samples` (>= 1) left:
// too little to go by, so no range rather than an invented one.
std::optional<DurationRatios> LearnRatios(std::vector<double> ratios, int min_samples = 5);

// What each job's duration is scaled by: one entry per State::queued and
// per State::running. nullopt: no ratios for the job — its duration is
// taken as estimated in every scaled forecast.
struct RatioAssignment {
  std::vector<std::optional<DurationRatios>> queued;
  std::vector<std::optional<DurationRatios>> running;
  // The queued jobs that get a range (those with history of their own);
  // empty = every queued job with ratios.
  std::vector<bool> ranged;
};

struct EtaRange {
  // False: no range (no ratios for the job, or a scaled forecast gives no
  // start: unknown or beyond the forecast); the times are then unset.
  bool known = false;
  absl::Time earliest = absl::InfiniteFuture();
  absl::Time likely = absl::InfiniteFuture();
  absl::Time latest = absl::InfiniteFuture();
};

// `state` with each job's duration (its estimate, or the policy's default
// without one) times the chosen quantile of its ratios (0: P10, 1: P50,
// 2: P90); jobs without ratios unchanged. Exposed for tests.
State ScaledState(const State& state, const Policy& policy, const RatioAssignment& ratios,
                  int quantile);

// The ranges of one plan's decisions: three scaled forecasts, each planned
// afresh on its scaled state (the plan's reservation and backfill depend on
// durations) and read lazily. Cost: three forecasts like the plan's own,
// each bounded by `options`, plus three Plan() calls and three copies of
// the state at construction.
class EtaRangeTable {
 public:
  // REQUIRES: result = Plan(state, budgets, policy, result.now); ratios
  // sized as state. Copies what it needs; state and result need not outlive
  // it.
  EtaRangeTable(const State& state, const Budgets& budgets, const Policy& policy,
                const PlanResult& result, const RatioAssignment& ratios,
                const ForecastOptions& options = {});
  ~EtaRangeTable();
  EtaRangeTable(const EtaRangeTable&) = delete;
  EtaRangeTable& operator=(const EtaRangeTable&) = delete;

  size_t size() const { return queued_of_decision_.size(); }
  // The range of result.decisions[k]; advances the scaled forecasts as far
  // as k needs. REQUIRES: k < size().
  EtaRange operator[](size_t k) const;

 private:
  struct Scaled;
  std::vector<uint32_t> queued_of_decision_;  // k -> index into state.queued
  std::vector<bool> ranged_;                  // by queued index
  std::array<std::unique_ptr<Scaled>, 3> scaled_;
};

}  // namespace berth::planner

#endif  // BERTH_PLANNER_FORECAST_ETA_RANGE_H_
