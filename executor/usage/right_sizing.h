// Right-sizing: advice built from the usage history — for a
// waiting job whose estimate is far above what its action used
// (ExplainJob), and the report of the actions wasting the most reserved
// memory (the RightSize RPC, `berthctl rightsize`). Advice only: nothing
// here changes a job. Pure.
#ifndef BERTH_EXECUTOR_USAGE_RIGHT_SIZING_H_
#define BERTH_EXECUTOR_USAGE_RIGHT_SIZING_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "berth/v1/executor.pb.h"
#include "berth/v1/plan.pb.h"
#include "executor/store/usage_history.h"
#include "executor/usage/usage_stats.h"

namespace berth {

struct RightSizingOptions {
  UsageStatsOptions stats;
  // Advice is given when the job asks at least this many times the
  // suggested estimate. Default 1.5.
  double min_ratio = 1.5;
};

// The API view of a history's statistics.
berth::v1::ActionUsage ToActionUsage(const UsageHistory& history, const UsageStats& stats);

// Advice for queued job `spec` explained by `explanation` (its
// smallest_change says what would fit now), from its action's `history`.
// nullopt when the history suggests no estimate (too few runs) or the job's
// estimate is below min_ratio times the suggestion.
std::optional<berth::v1::RightSizing> AdviseRightSizing(
    const berth::v1::JobSpec& spec, const berth::v1::Explanation& explanation,
    const UsageHistory& history, const RightSizingOptions& options = {});

// The RightSize report over `histories`: those of `workspace` ("" = all),
// most wasted GiB-hours first (ties by workspace, action), at most `limit`
// (>= 1).
berth::v1::RightSizeResponse RightSizeReport(const std::vector<UsageHistory>& histories,
                                             const std::string& workspace, int limit,
                                             const UsageStatsOptions& options = {});

}  // namespace berth

#endif  // BERTH_EXECUTOR_USAGE_RIGHT_SIZING_H_
