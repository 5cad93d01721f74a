// UsageTracker: what each running job's container has used so far, folded
// from the runtime's usage sweeps (Runtime::SampleUsage, one per reconcile
// pass). In memory only: a job's final figures are persisted with its
// terminal transition (Job.observed); after a berthd restart the kernel's
// own high-water mark (cgroup v1, v2 memory.peak) still covers the time
// before, and CPU time is cumulative.
//
// Thread-safe: the reconciler records, RPC handlers read.
#ifndef BERTH_EXECUTOR_USAGE_USAGE_TRACKER_H_
#define BERTH_EXECUTOR_USAGE_USAGE_TRACKER_H_

#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "berth/v1/job.pb.h"
#include "executor/runtime/runtime.h"

namespace berth {

class UsageTracker {
 public:
  // Folds one sweep in. Per job: peak memory = the largest of the previous
  // peak, the sample's kernel peak and its current memory; CPU = the sample's
  // (cumulative); samples + 1. Jobs absent from `samples` keep their figures.
  void Record(const UsageSamples& samples);

  // The job's usage so far with run_seconds = ended - started (ZeroDuration
  // if either is unknown); nullopt when it was never sampled.
  std::optional<berth::v1::ResourceUsage> Get(const std::string& job_id,
                                              std::optional<absl::Time> started,
                                              absl::Time ended) const;

  // Drops the job's figures (its run ended and was recorded).
  void Forget(const std::string& job_id);

  // Drops the figures of jobs without a container in `containers` (the
  // pass's bulk list, after its finished jobs were recorded): containers
  // removed by hand, orphans. Keeps the tracker as small as what runs.
  void Retain(const ContainerList& containers);

  // Jobs with figures (for tests and metrics).
  size_t size() const;

  // For the dashboard's chart (server/web/usage_ring.h): the memory charged
  // to every job of the last sweep, and the CPU time all jobs used between
  // sweeps since the tracker was made (a monotonic counter: the CPU used in
  // an interval is the difference of two readings; a job's time before its
  // first sweep is not counted).
  struct SweepTotals {
    int64_t memory_bytes = 0;
    absl::Duration cpu_used = absl::ZeroDuration();
  };
  SweepTotals LastSweep() const;

 private:
  struct Live {
    int64_t peak_memory_bytes = 0;
    absl::Duration cpu;
    int32_t samples = 0;
    bool peak_exact = false;
  };
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Live> live_ ABSL_GUARDED_BY(mu_);
  SweepTotals last_sweep_ ABSL_GUARDED_BY(mu_);
};

// The kernel OOM-killed the run at its memory limit `limit_bytes` (the
// container's limit, planner::EffectiveMemoryBytes), so its charge reached
// that limit whatever the samples saw: peak_memory_bytes becomes at least
// `limit_bytes`, and peak_exact true when the limit decided it (the cgroup
// hit its limit; a sampled memory.current in between is only a lower bound).
void FloorPeakAtOomLimit(int64_t limit_bytes, berth::v1::ResourceUsage& usage);

// The usage of a run that was never sampled: run time only (a remote engine,
// or a job shorter than a pass).
berth::v1::ResourceUsage RunTimeOnly(std::optional<absl::Time> started,
                                     absl::Time ended);

}  // namespace berth

#endif  // BERTH_EXECUTOR_USAGE_USAGE_TRACKER_H_
