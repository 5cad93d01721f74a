// UsageRing: what berthd keeps for the dashboard's 24-hour chart
// (/ui/chart): a bounded ring of samples of reserved and observed
// memory/CPU/workers against the budgets, and the queue's length, taken by
// berthd once a minute from its latest plan and the usage tracker. In
// memory: the chart survives a page reload, not a berthd restart.
//
// Thread-safe.
#ifndef BERTH_SERVER_WEB_USAGE_RING_H_
#define BERTH_SERVER_WEB_USAGE_RING_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace berth::web {

struct UsageSample {
  absl::Time time;
  int64_t memory_budget = 0, memory_reserved = 0, memory_observed = 0;  // bytes
  int64_t cpu_budget = 0, cpu_reserved = 0, cpu_observed = 0;           // millicores
  int64_t workers_budget = 0, workers = 0;
  int64_t queued = 0;
};

class UsageRing {
 public:
  // 24 h of one sample a minute by default.
  explicit UsageRing(size_t capacity = 24 * 60, absl::Duration interval = absl::Minutes(1));

  // True if a sample is due at `now` (none yet, or `interval` since the last).
  bool Due(absl::Time now) const;
  // Appends, dropping the oldest once full.
  void Add(const UsageSample& sample);
  // Every kept sample, oldest first.
  std::vector<UsageSample> Samples() const;

 private:
  const size_t capacity_;
  const absl::Duration interval_;
  mutable absl::Mutex mu_;
  std::vector<UsageSample> ring_ ABSL_GUARDED_BY(mu_);
  size_t next_ ABSL_GUARDED_BY(mu_) = 0;  // where the next sample goes once full
  absl::Time last_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

// The chart of `samples` over the 24 hours before `now`: four SVG panels
// (memory, CPU, workers, queue), each with its budget as a line. Drawn on
// the server; no script.
std::string ChartBody(const std::vector<UsageSample>& samples, absl::Time now);

}  // namespace berth::web

#endif  // BERTH_SERVER_WEB_USAGE_RING_H_
