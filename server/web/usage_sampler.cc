#include "server/web/usage_sampler.h"

namespace berth::web {

void UsageSampler::MaybeSample(absl::Time now) {
  absl::MutexLock lock(&mu_);
  if (!ring_.Due(now)) return;
  // As of the newer of the last pass and the latest whole plan.
  const std::optional<PlanCache::Summary> snap = plans_.CurrentSummary();
  if (!snap.has_value()) return;
  const UsageTracker::SweepTotals totals = usage_.LastSweep();
  UsageSample s;
  s.time = now;
  s.memory_budget = snap->budgets.memory_bytes();
  s.cpu_budget = snap->budgets.cpu_millis();
  s.workers_budget = snap->budgets.max_workers();
  s.memory_reserved = snap->used_before.memory_bytes;
  s.cpu_reserved = snap->used_before.cpu_millis;
  s.workers = snap->used_before.workers;
  s.queued = snap->queued;
  s.memory_observed = totals.memory_bytes;
  if (last_time_ != absl::InfinitePast() && now > last_time_) {
    s.cpu_observed = static_cast<int64_t>(1000 * ((totals.cpu_used - last_cpu_) / (now - last_time_)));
  }
  last_time_ = now;
  last_cpu_ = totals.cpu_used;
  ring_.Add(s);
}

}  // namespace berth::web
