#include "tools/plan/executor_metrics.h"

#include <algorithm>
#include <limits>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "httplib.h"
#include "planner/base/proto_json.h"
#include "planner/base/status_macros.h"

namespace berth {
namespace plan {

absl::StatusOr<absl::Duration> HistogramMedian(absl::string_view text, absl::string_view name,
                                               int64_t* count, absl::string_view labels) {
  const std::string bucket_prefix =
      absl::StrCat(name, "_bucket{", labels, labels.empty() ? "" : ",", "le=\"");
  const std::string count_prefix =
      labels.empty() ? absl::StrCat(name, "_count ") : absl::StrCat(name, "_count{", labels, "} ");
  std::vector<std::pair<double, double>> buckets;  // (upper bound, cumulative count)
  double total = -1;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (absl::ConsumePrefix(&line, count_prefix)) {
      if (!absl::SimpleAtod(line, &total)) {
        return absl::InvalidArgumentError(absl::StrCat(name, "_count: \"", line, "\""));
      }
      continue;
    }
    if (!absl::ConsumePrefix(&line, bucket_prefix)) continue;
    const size_t close = line.find("\"} ");
    if (close == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat(name, " bucket: \"", line, "\""));
    }
    const absl::string_view le = line.substr(0, close);
    double bound = std::numeric_limits<double>::infinity();
    double cumulative = 0;
    if ((le != "+Inf" && !absl::SimpleAtod(le, &bound)) ||
        !absl::SimpleAtod(line.substr(close + 3), &cumulative)) {
      return absl::InvalidArgumentError(absl::StrCat(name, " bucket: \"", line, "\""));
    }
    buckets.emplace_back(bound, cumulative);
  }
  if (buckets.empty()) {
    return absl::NotFoundError(absl::StrCat("no ", name, " in the metrics (has that berthd finished a job yet?)"));
  }
  std::sort(buckets.begin(), buckets.end());
  if (total < 0) total = buckets.back().second;
  if (total <= 0) {
    return absl::FailedPreconditionError(absl::StrCat(name, " has no observations yet"));
  }
  *count = static_cast<int64_t>(total);
  const double rank = total / 2;
  double lower = 0, below = 0;
  for (const auto& [bound, cumulative] : buckets) {
    if (cumulative >= rank) {
      if (bound == std::numeric_limits<double>::infinity()) break;
      const double in_bucket = cumulative - below;
      const double seconds =
          in_bucket > 0 ? lower + (bound - lower) * (rank - below) / in_bucket : bound;
      return absl::Seconds(seconds);
    }
    lower = bound;
    below = cumulative;
  }
  return absl::Seconds(lower);  // in the +Inf bucket: the highest finite bound
}

absl::StatusOr<ExecutorLatencies> ParseExecutorLatencies(absl::string_view text) {
  ExecutorLatencies out;
  ASSIGN_OR_RETURN(out.start_median,
                   HistogramMedian(text, "berth_start_latency_seconds", &out.start_count));
  ASSIGN_OR_RETURN(out.finish_median,
                   HistogramMedian(text, "berth_finish_latency_seconds", &out.finish_count));
  // The levels present (berthd's run up to its --start_parallelism), found
  // in one scan; then each level's median.
  constexpr absl::string_view kByStarts = "berth_start_latency_by_starts_seconds_bucket{starts=\"";
  std::set<int> present;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!absl::ConsumePrefix(&line, kByStarts)) continue;
    int k = 0;
    if (absl::SimpleAtoi(line.substr(0, line.find('"')), &k) && k >= 1) present.insert(k);
  }
  std::vector<planner::StartLevel> levels;
  for (int k : present) {
    planner::StartLevel level;
    level.starts = k;
    absl::StatusOr<absl::Duration> median =
        HistogramMedian(text, "berth_start_latency_by_starts_seconds", &level.count,
                        absl::StrCat("starts=\"", k, "\""));
    if (median.status().code() == absl::StatusCode::kInvalidArgument) return median.status();
    if (!median.ok()) continue;  // no starts at that level
    level.median_s = absl::ToDoubleSeconds(*median);
    levels.push_back(level);
  }
  if (levels.size() >= 2) {
    out.start = planner::FitStarts(levels);
    out.start_levels = static_cast<int>(levels.size());
  }
  return out;
}

absl::StatusOr<std::string> ReadMetrics(const std::string& source) {
  absl::string_view rest = source;
  if (!absl::ConsumePrefix(&rest, "http://")) return ReadFileToString(source);
  const size_t slash = rest.find('/');
  const std::string host_port(rest.substr(0, slash));
  const std::string path =
      slash == absl::string_view::npos ? "/metrics" : std::string(rest.substr(slash));
  httplib::Client client(absl::StrCat("http://", host_port));
  client.set_connection_timeout(5);
  client.set_read_timeout(10);
  httplib::Result res = client.Get(path.c_str());
  if (!res) {
    return absl::UnavailableError(absl::StrCat(source, ": ", httplib::to_string(res.error())));
  }
  if (res->status != 200) {
    return absl::UnavailableError(absl::StrCat(source, ": HTTP ", res->status));
  }
  return std::move(res->body);
}

}  // namespace plan
}  // namespace berth
