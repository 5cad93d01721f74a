// UsageSampler: fills berthd's UsageRing (usage_ring.h) from its latest plan
// (reserved: what running and admitted jobs hold; budgets; queue length)
// and the usage tracker (observed: the containers' memory at the last sweep
// and their average CPU since the previous sample). Called by berthd after
// every reconcile pass; samples only when the ring says one is due, and
// never plans (PlanCache::Latest).
//
// Thread-safe.
#ifndef BERTH_SERVER_WEB_USAGE_SAMPLER_H_
#define BERTH_SERVER_WEB_USAGE_SAMPLER_H_

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "executor/reconcile/plan_snapshot.h"
#include "executor/usage/usage_tracker.h"
#include "server/web/usage_ring.h"

namespace berth::web {

class UsageSampler {
 public:
  // All references must outlive the sampler.
  UsageSampler(const PlanCache& plans, const UsageTracker& usage, UsageRing& ring)
      : plans_(plans), usage_(usage), ring_(ring) {}

  // Adds a sample taken at `now` if one is due and a plan exists.
  void MaybeSample(absl::Time now);

 private:
  const PlanCache& plans_;
  const UsageTracker& usage_;
  UsageRing& ring_;
  absl::Mutex mu_;
  absl::Time last_time_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  absl::Duration last_cpu_ ABSL_GUARDED_BY(mu_);
};

}  // namespace berth::web

#endif  // BERTH_SERVER_WEB_USAGE_SAMPLER_H_
