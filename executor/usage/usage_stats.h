// UsageStats: robust statistics of one (workspace, action)'s usage history
// and the memory estimate they suggest. Pure.
#ifndef BERTH_EXECUTOR_USAGE_USAGE_STATS_H_
#define BERTH_EXECUTOR_USAGE_USAGE_STATS_H_

#include <cstdint>

#include "absl/time/time.h"
#include "executor/store/usage_history.h"

namespace berth {

// `bytes` rounded up to a multiple of `unit` (values <= 1 are taken as 1).
int64_t RoundUpBytes(double bytes, int64_t unit);

struct UsageStatsOptions {
  // Fewest SUCCEEDED runs before an estimate is suggested. Default 5.
  int min_runs = 5;
  // Headroom above the largest peak for a suggested estimate. Default 0.25.
  double headroom = 0.25;
  // Suggestions are rounded up to a multiple of this. Default 256 MiB.
  int64_t round_to_bytes = int64_t{256} << 20;
};

struct UsageStats {
  // Runs without an observed peak (peak_memory_bytes 0) are not counted in
  // any figure.
  int runs = 0;        // in the history (succeeded and failed)
  int succeeded = 0;   // the runs the memory figures below are taken from
  int oom_killed = 0;  // runs killed at their limit (they needed more)
  // Peak memory of the runs, succeeded and failed (a failed run's memory
  // was as real; an OOM-killed run's is at least its limit): median, 95th
  // percentile (nearest rank) and largest. 0 without runs.
  int64_t p50_peak_memory_bytes = 0;
  int64_t p95_peak_memory_bytes = 0;
  int64_t max_peak_memory_bytes = 0;
  // 95th percentile run time of the succeeded runs (0 without any).
  absl::Duration p95_run_time = absl::ZeroDuration();
  // The newest run's memory estimate.
  int64_t last_asked_memory_bytes = 0;
  // Over all runs: GiB-hours reserved (asked x run time) and used (peak x
  // run time); wasted = reserved - used.
  double reserved_gib_hours = 0;
  double used_gib_hours = 0;
  // The estimate these runs support: the largest of the peaks and the
  // OOM-killed runs' limits, plus headroom, rounded up. 0 with fewer
  // than min_runs succeeded runs (not enough to go by).
  int64_t suggested_memory_bytes = 0;

  double wasted_gib_hours() const { return reserved_gib_hours - used_gib_hours; }
};

UsageStats Summarise(const UsageHistory& history, const UsageStatsOptions& options = {});

}  // namespace berth

#endif  // BERTH_EXECUTOR_USAGE_USAGE_STATS_H_
