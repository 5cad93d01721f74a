#include "executor/usage/usage_stats.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace berth {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Nearest-rank percentile of sorted values. REQUIRES: !v.empty().
template <typename T>
T Percentile(const std::vector<T>& sorted, double p) {
  const size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size(), std::max<size_t>(rank, 1)) - 1];
}

}  // namespace

int64_t RoundUpBytes(double bytes, int64_t unit) {
  unit = std::max<int64_t>(1, unit);
  return static_cast<int64_t>(std::ceil(bytes / static_cast<double>(unit))) * unit;
}

UsageStats Summarise(const UsageHistory& history, const UsageStatsOptions& options) {
  UsageStats s;
  std::vector<int64_t> peaks;
  std::vector<absl::Duration> times;
  int64_t oom_limit = 0;
  for (const UsageRun& r : history.runs) {
    // A run whose memory was never sampled (samples: 0, e.g. shorter than a
    // tick) says nothing about its use. The store does not keep such runs
    // (CountsAsRun); a record without a peak is skipped all the same.
    if (r.peak_memory_bytes <= 0) continue;
    const bool oom_killed = r.state != v1::JOB_STATE_SUCCEEDED &&
                            r.failure_cause == v1::FAILURE_CAUSE_OOM_KILLED;
    // An OOM-killed run reached its limit (runs recorded before berthd
    // floored their peak at the limit say less).
    const int64_t peak =
        oom_killed ? std::max(r.peak_memory_bytes, r.asked_memory_bytes) : r.peak_memory_bytes;
    ++s.runs;
    const double hours = absl::ToDoubleHours(r.run_time);
    s.reserved_gib_hours += static_cast<double>(r.asked_memory_bytes) / kGiB * hours;
    s.used_gib_hours += static_cast<double>(peak) / kGiB * hours;
    s.last_asked_memory_bytes = r.asked_memory_bytes;
    peaks.push_back(peak);
    if (r.state == v1::JOB_STATE_SUCCEEDED) {
      ++s.succeeded;
      times.push_back(r.run_time);
    } else if (oom_killed) {
      ++s.oom_killed;
      oom_limit = std::max(oom_limit, r.asked_memory_bytes);
    }
  }
  if (peaks.empty()) return s;
  std::sort(peaks.begin(), peaks.end());
  s.p50_peak_memory_bytes = Percentile(peaks, 0.50);
  s.p95_peak_memory_bytes = Percentile(peaks, 0.95);
  s.max_peak_memory_bytes = peaks.back();
  if (!times.empty()) {
    std::sort(times.begin(), times.end());
    s.p95_run_time = Percentile(times, 0.95);
  }
  if (s.succeeded >= options.min_runs) {
    const double need = static_cast<double>(std::max(s.max_peak_memory_bytes, oom_limit)) *
                        (1.0 + options.headroom);
    s.suggested_memory_bytes = RoundUpBytes(need, options.round_to_bytes);
  }
  return s;
}

}  // namespace berth
