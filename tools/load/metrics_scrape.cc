#include "tools/load/metrics_scrape.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "httplib.h"
#include "planner/base/host_port.h"

namespace berth {

absl::StatusOr<std::string> ScrapeMetrics(const std::string& host_port) {
  absl::StatusOr<HostPort> hp = ParseHostPort(host_port);
  if (!hp.ok()) return hp.status();
  httplib::Client cli(hp->host, hp->port);
  cli.set_connection_timeout(5);
  cli.set_read_timeout(10);
  httplib::Result r = cli.Get("/metrics");
  if (!r) return absl::UnavailableError(absl::StrCat("GET http://", host_port, "/metrics failed"));
  if (r->status != 200) {
    return absl::UnavailableError(
        absl::StrCat("GET http://", host_port, "/metrics answered ", r->status));
  }
  return r->body;
}

std::optional<double> MetricValue(absl::string_view text, absl::string_view name) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<absl::string_view> parts = absl::StrSplit(line, ' ');
    if (parts.size() < 2 || parts[0] != name) continue;
    double v;
    if (!absl::SimpleAtod(parts[1], &v)) return std::nullopt;
    return v;
  }
  return std::nullopt;
}

}  // namespace berth
