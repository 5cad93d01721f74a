#include "executor/usage/usage_tracker.h"

#include <algorithm>
#include <iterator>

namespace berth {
namespace {

double RunSeconds(std::optional<absl::Time> started, absl::Time ended) {
  if (!started.has_value() || ended < *started) return 0;
  return absl::ToDoubleSeconds(ended - *started);
}

}  // namespace

void UsageTracker::Record(const UsageSamples& samples) {
  absl::MutexLock lock(&mu_);
  last_sweep_.memory_bytes = 0;
  for (const auto& [job, s] : samples) {
    last_sweep_.memory_bytes += s.memory_bytes;
    auto known = live_.find(job);
    if (known != live_.end() && s.cpu > known->second.cpu) {
      last_sweep_.cpu_used += s.cpu - known->second.cpu;
    }
    Live& l = live_[job];
    l.peak_memory_bytes =
        std::max({l.peak_memory_bytes, s.peak_memory_bytes, s.memory_bytes});
    l.peak_exact = s.peak_memory_bytes > 0;
    l.cpu = std::max(l.cpu, s.cpu);
    ++l.samples;
  }
}

UsageTracker::SweepTotals UsageTracker::LastSweep() const {
  absl::MutexLock lock(&mu_);
  return last_sweep_;
}

std::optional<v1::ResourceUsage> UsageTracker::Get(const std::string& job_id,
                                                   std::optional<absl::Time> started,
                                                   absl::Time ended) const {
  absl::MutexLock lock(&mu_);
  auto it = live_.find(job_id);
  if (it == live_.end()) return std::nullopt;
  v1::ResourceUsage u;
  u.set_peak_memory_bytes(it->second.peak_memory_bytes);
  u.set_cpu_seconds(absl::ToDoubleSeconds(it->second.cpu));
  u.set_run_seconds(RunSeconds(started, ended));
  u.set_samples(it->second.samples);
  u.set_peak_exact(it->second.peak_exact);
  return u;
}

void UsageTracker::Forget(const std::string& job_id) {
  absl::MutexLock lock(&mu_);
  live_.erase(job_id);
}

void UsageTracker::Retain(const ContainerList& containers) {
  absl::MutexLock lock(&mu_);
  for (auto it = live_.begin(); it != live_.end();) {
    auto next = std::next(it);
    if (containers.count(it->first) == 0) live_.erase(it);
    it = next;
  }
}

size_t UsageTracker::size() const {
  absl::MutexLock lock(&mu_);
  return live_.size();
}

void FloorPeakAtOomLimit(int64_t limit_bytes, v1::ResourceUsage& usage) {
  if (limit_bytes <= 0 || usage.peak_memory_bytes() >= limit_bytes) return;
  usage.set_peak_memory_bytes(limit_bytes);
  usage.set_peak_exact(true);
}

v1::ResourceUsage RunTimeOnly(std::optional<absl::Time> started, absl::Time ended) {
  v1::ResourceUsage u;
  u.set_run_seconds(RunSeconds(started, ended));
  return u;
}

}  // namespace berth
