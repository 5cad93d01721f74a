// The metrics berthd exposes about its state, named by Prometheus's
// conventions (https://prometheus.io/docs/practices/naming/): counters end in
// _total, a unit is in the name (bytes, cores, seconds), one metric measures
// one thing in one unit, and a series once exposed stays (at 0) when what it
// counts is gone — so `berth_jobs{state="queued",pool="database"} == 0` is
// visible rather than absent.
//
// Scrape-time metrics, refreshed on every scrape from the latest plan, the
// runtime's call counters and the store:
//   berth_jobs{state,pool}                  queued / running jobs (gauge)
//   berth_admission_paused                  1 while admission is paused
//   berth_pools_in_maintenance{pool}        1 while the pool is in maintenance
//   berth_budget_memory_bytes, berth_budget_cpu_cores, berth_budget_workers,
//   berth_budget_pool_workers{pool}         the budgets (a pool without a worker
//                                           cap has no budget_pool_workers series)
//   berth_reserved_memory_bytes, berth_reserved_cpu_cores, berth_reserved_workers,
//   berth_reserved_pool_workers{pool}       held by admitted and running jobs
//   berth_docker_calls_total{endpoint}      Docker API calls (attempts)
//   berth_docker_errors_total{endpoint}     failed Docker API calls
//   berth_event_revision                    revision of the last event written
//   berth_queue_head_blocked_seconds        how long the head of the queue has been
//                                           admissible by the plan without starting
//                                           (QueueHeadWatch; 0 while its wait is
//                                           explained)
//
// Pass-time metrics (PassMetrics), fed by the reconcile loop and reconciler:
//   berth_reconcile_passes_total{outcome}   passes: ok, runtime_unavailable, error
//                                           (each exported from the start, at 0)
//   berth_jobs_finished_total{outcome,cause} outcomes the reconciler recorded:
//                                           succeeded/none, failed/<cause>
//                                           (nonzero_exit, oom_killed, timed_out,
//                                           start_failed, lost,
//                                           dependency_failed, unspecified),
//                                           cancelled/none; all from the start,
//                                           at 0. A queued job a snapshot
//                                           cancels never reached the
//                                           reconciler and is not counted.
//   berth_reconcile_actions_total{action}   admitted, started, finalised, ...
//   berth_plan_seconds                      reading the store and planning
//   berth_runtime_up                        1 if the last pass reached Docker
//   berth_start_latency_seconds             admission to RUNNING recorded
//   berth_start_latency_by_starts_seconds{starts}  the same, by how many
//                                           starts were in flight together
//   berth_finish_latency_seconds            a container's exit to its outcome
//
// Thread-safe: the collector runs on the scraping thread.
#ifndef BERTH_SERVER_METRICS_BERTHD_METRICS_H_
#define BERTH_SERVER_METRICS_BERTHD_METRICS_H_

#include "absl/status/statusor.h"
#include "executor/reconcile/plan_snapshot.h"
#include "executor/reconcile/reconciler.h"
#include "executor/runtime/runtime.h"
#include "executor/store/store.h"
#include "server/metrics/metrics.h"

namespace berth {

// Registers the families above and a collector that fills them. The
// references must outlive `registry`'s last Render().
void RegisterStateMetrics(MetricsRegistry& registry, const PlanCache& plans,
                          const Runtime& runtime, const Store& store);

// The pass-time families above, registered once; a copy refers to the same
// families (owned by the registry, which must outlive every copy).
class PassMetrics {
 public:
  explicit PassMetrics(MetricsRegistry& registry);

  // Points options.on_start_latency / on_finish_latency at the histograms
  // and options.on_job_finished at berth_jobs_finished_total.
  void Attach(ReconcilerOptions& options) const;
  // Counts one pass (the reconcile loop's callback).
  void Observe(const absl::StatusOr<PassStats>& stats) const;

 private:
  CounterFamily& passes_;
  CounterFamily& actions_;
  HistogramFamily& plan_seconds_;
  GaugeFamily& runtime_up_;
  HistogramFamily& start_latency_;
  HistogramFamily& start_latency_by_starts_;
  HistogramFamily& finish_latency_;
  CounterFamily& finished_;
};

}  // namespace berth

#endif  // BERTH_SERVER_METRICS_BERTHD_METRICS_H_
