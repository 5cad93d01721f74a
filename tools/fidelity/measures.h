// The statistics berth-fidelity reports, as pure functions so
// that they are tested alone: quantiles, Kendall's tau-b with ties, the
// grouping of admissions into planning passes, and the latency of one
// container start.
//
// Thread-compatible: free functions over their arguments.
#ifndef BERTH_TOOLS_FIDELITY_MEASURES_H_
#define BERTH_TOOLS_FIDELITY_MEASURES_H_

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "planner/starts/start_fit.h"

namespace berth::fidelity {

// berth::Quantile (tools/base/quantile.h); NaN for no values.
// REQUIRES: 0 <= q <= 1.
double Quantile(std::vector<double> values, double q);

// How far the values scatter: Quantile(|v - Quantile(values, 0.5)|, 0.5),
// the median absolute deviation; NaN for no values.
double MedianDeviation(const std::vector<double>& values);

// Kendall's tau-b between paired observations x[i], y[i]:
//   (concordant - discordant) / sqrt((n0 - ties_x) * (n0 - ties_y))
// where a pair tied on both sides counts nowhere, tied on one side only as
// a tie of that side. Jobs admitted by one planning pass carry one
// admission time, so they tie rather than count as an order to agree on.
// 1 when there is no untied pair (also for fewer than 2 observations).
// REQUIRES: x.size() == y.size().
double TauB(const std::vector<double>& x, const std::vector<double>& y);

// Jobs grouped by admission time (one group per planning pass: berthd
// stamps a pass's admissions with one instant), groups in time order.
// Times equal to the microsecond are one pass. Returns the groups and, in
// `pass_times` if given, each group's time.
std::vector<std::set<std::string>> GroupPasses(const std::map<std::string, double>& times,
                                               std::vector<double>* pass_times = nullptr);

// Container starts' own times by how many ran together, for the simulator's
// start model (planner/starts/start_fit.h). Each (admitted, started) span
// counts if fewer than `parallelism` other spans were in flight when it was
// admitted (began earlier and ended later), so that waiting for a slot is
// not counted twice. Its level is 1 + the other spans in flight when it
// began or that began by kSamePass after it (its own pass's starts are
// admitted within milliseconds of each other), at most `parallelism`: as
// berthd labels berth_start_latency_by_starts_seconds. Per level present, ascending: the
// median and count of its spans' lengths.
inline constexpr double kSamePass = 0.05;
std::vector<planner::StartLevel> StartLevels(const std::vector<std::pair<double, double>>& spans,
                                          int parallelism);

}  // namespace berth::fidelity

#endif  // BERTH_TOOLS_FIDELITY_MEASURES_H_
