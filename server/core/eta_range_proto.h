// The API view of a plan's ETA ranges (executor/reconcile/eta_ranges.h):
// PlanDecision.eta_range, Explanation.eta_range and the sentence ExplainJob
// adds to its summary.
#ifndef BERTH_SERVER_CORE_ETA_RANGE_PROTO_H_
#define BERTH_SERVER_CORE_ETA_RANGE_PROTO_H_

#include <cstddef>
#include <optional>
#include <string>

#include "berth/v1/plan.pb.h"
#include "executor/reconcile/eta_ranges.h"
#include "planner/plan/plan.h"

namespace berth {

// The range of result.decisions[k], or nullopt when it has none (no history
// of its own, or a scaled forecast gives no start). Advances the scaled
// forecasts as far as k needs.
std::optional<v1::EtaRange> ToProtoEtaRange(const PlanRanges& ranges,
                                            const planner::PlanResult& result, size_t k);

// " Range from 12 runs of its action (real/estimated time P10 0.53x, median
// 1.02x, P90 1.91x): earliest …, likely …, latest …." — or why there is
// none (" No ETA range: …"). For a waiting job; "" for one admitted now or rejected.
std::string EtaRangeSentence(const PlanRanges& ranges, const planner::PlanResult& result,
                             size_t k, const std::optional<v1::EtaRange>& range);

}  // namespace berth

#endif  // BERTH_SERVER_CORE_ETA_RANGE_PROTO_H_
