// The executor's latencies as berthd measures them, read from its
// Prometheus metrics: berth-plan's --executor-metrics, so that a
// dry-run models the start and finish latencies of the berthd it is asked
// about instead of guessing them.
//
// Thread-compatible: free functions over their arguments.
#ifndef BERTH_TOOLS_PLAN_EXECUTOR_METRICS_H_
#define BERTH_TOOLS_PLAN_EXECUTOR_METRICS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "planner/starts/start_fit.h"

namespace berth {
namespace plan {

// Medians of berth_start_latency_seconds (admission to RUNNING recorded)
// and berth_finish_latency_seconds (a container's exit to its outcome
// recorded), each with the number of observations behind it.
struct ExecutorLatencies {
  absl::Duration start_median;
  int64_t start_count = 0;
  absl::Duration finish_median;
  int64_t finish_count = 0;
  // From berth_start_latency_by_starts_seconds{starts="k"} when at least two
  // levels k have observations (planner::FitStarts; a berthd before it has none):
  // a start's latency alone and what each start in flight with it adds
  // (berth-plan --start-latency / --start-contention). start_levels = 0:
  // not measured; use start_median and no contention.
  planner::StartFit start;
  int start_levels = 0;
};


// The median of histogram `name` in Prometheus text exposition `text`, as
// Prometheus' histogram_quantile(0.5, ...) estimates it: linear
// interpolation inside the bucket that holds the middle observation (the
// lowest bucket interpolates from 0; a median in the +Inf bucket is the
// highest finite bound). Only the series with exactly `labels` besides
// `le` are read (as rendered, e.g. `starts="2"`; empty: none). Sets *count to the observations (the _count series, else the +Inf
// bucket).
// NOT_FOUND if the histogram is absent; FAILED_PRECONDITION if it has no
// observations; INVALID_ARGUMENT if a bucket line of it does not parse.
[[nodiscard]] absl::StatusOr<absl::Duration> HistogramMedian(absl::string_view text,
                                                            absl::string_view name,
                                                            int64_t* count,
                                                            absl::string_view labels = "");

// Both latencies from `text` (errors as HistogramMedian, naming the metric).
[[nodiscard]] absl::StatusOr<ExecutorLatencies> ParseExecutorLatencies(absl::string_view text);

// Reads metrics text from `source`: "http://HOST:PORT[/PATH]" (a live
// berthd's --metrics_listen endpoint; PATH defaults to /metrics) or a file
// (e.g. saved with curl). UNAVAILABLE if the endpoint does not answer 200;
// file errors as ReadFileToString.
[[nodiscard]] absl::StatusOr<std::string> ReadMetrics(const std::string& source);

}  // namespace plan
}  // namespace berth

#endif  // BERTH_TOOLS_PLAN_EXECUTOR_METRICS_H_
