// MeasuredExecutor: the executor model berthd forecasts ETAs with
// (planner::ExecutorModel, PlanCache::SetExecutorModel), fitted to the
// starts and finishes it has measured itself instead of fixed figures.
//
// It keeps the latest `window` start latencies (a job's admission to its
// RUNNING record, with how many starts were in flight together:
// ReconcilerOptions::on_start_latency) and finish latencies (a container's
// end to its outcome recorded). The start model is the one berth-plan fits
// to a berthd's metrics (planner/starts/start_fit.h FitStarts over the
// per-level medians: latency alone plus what each other start in flight
// adds); the finish latency is the median. Until `min_samples` of a kind
// are measured, that part of the initial model stands (a fresh berthd
// forecasts with berth-plan's defaults). start_parallelism and
// plan_at_starts are the initial model's: configured, not measured.
//
// Every observation that changes the model passes it to the PlanCache, so
// the next plan's forecast uses it (a plan already made keeps its model).
//
// Thread-safe: observations come from the pass's and the starts' threads.
#ifndef BERTH_EXECUTOR_RECONCILE_MEASURED_EXECUTOR_H_
#define BERTH_EXECUTOR_RECONCILE_MEASURED_EXECUTOR_H_

#include <cstddef>
#include <deque>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "executor/reconcile/plan_snapshot.h"
#include "executor/reconcile/reconciler.h"
#include "planner/forecast/eta.h"

namespace berth {

struct MeasuredExecutorOptions {
  // Observations kept of each kind (the latest).
  size_t window = 256;
  // Observations of a kind before they replace the initial model's figure.
  size_t min_samples = 8;
};

class MeasuredExecutor {
 public:
  // `plans` (may be null: Current() only) gets `initial` now and every
  // changed model later; it must outlive this object.
  MeasuredExecutor(const planner::ExecutorModel& initial, PlanCache* plans,
                   MeasuredExecutorOptions options = {});

  MeasuredExecutor(const MeasuredExecutor&) = delete;
  MeasuredExecutor& operator=(const MeasuredExecutor&) = delete;

  // A start that took `latency` with `starts` starts in flight (itself
  // included; < 1 counts as 1). Negative latencies count as 0.
  void ObserveStart(absl::Duration latency, int starts);
  // A finish latency (negative counts as 0).
  void ObserveFinish(absl::Duration latency);

  // The model the PlanCache was last given.
  planner::ExecutorModel Current() const;

  // Chains ObserveStart/ObserveFinish after `options`' own on_start_latency
  // and on_finish_latency (kept, called first). This object must outlive
  // the reconciler built with `options`.
  void Attach(ReconcilerOptions& options);

 private:
  void Refit() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const planner::ExecutorModel initial_;
  PlanCache* const plans_;
  const MeasuredExecutorOptions options_;
  mutable absl::Mutex mu_;
  std::deque<std::pair<absl::Duration, int>> starts_ ABSL_GUARDED_BY(mu_);
  std::deque<absl::Duration> finishes_ ABSL_GUARDED_BY(mu_);
  planner::ExecutorModel current_ ABSL_GUARDED_BY(mu_);
};

}  // namespace berth

#endif  // BERTH_EXECUTOR_RECONCILE_MEASURED_EXECUTOR_H_
