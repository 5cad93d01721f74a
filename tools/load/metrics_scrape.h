// Reading berthd's Prometheus /metrics from berth-load: the soak's plan-pass
// figure and the check that a child berthd's runtime is up before it is
// measured (child_berthd.h).
#ifndef BERTH_TOOLS_LOAD_METRICS_SCRAPE_H_
#define BERTH_TOOLS_LOAD_METRICS_SCRAPE_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace berth {

// The body of GET /metrics at `host_port` ("127.0.0.1:9464"). Errors:
// INVALID_ARGUMENT for a bad address, UNAVAILABLE if it does not answer 200.
absl::StatusOr<std::string> ScrapeMetrics(const std::string& host_port);

// The value of the sample named exactly `name` (no labels) in a scrape's
// text, or nullopt if it has none or an unparsable one.
std::optional<double> MetricValue(absl::string_view text, absl::string_view name);

}  // namespace berth

#endif  // BERTH_TOOLS_LOAD_METRICS_SCRAPE_H_
