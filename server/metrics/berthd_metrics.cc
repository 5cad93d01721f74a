#include "server/metrics/berthd_metrics.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace berth {

void RegisterStateMetrics(MetricsRegistry& m, const PlanCache& plans, const Runtime& runtime,
                          const Store& store) {
  GaugeFamily& jobs = m.AddGauge("berth_jobs", "Non-terminal jobs by state and pool.",
                                 {"state", "pool"});
  GaugeFamily& paused = m.AddGauge("berth_admission_paused",
                                   "1 while admission is paused (Pause, Drain), else 0.");
  GaugeFamily& maintenance = m.AddGauge("berth_pools_in_maintenance",
                                        "1 while the pool is in maintenance, else 0.", {"pool"});
  GaugeFamily& budget_memory =
      m.AddGauge("berth_budget_memory_bytes", "Memory budget for jobs, in bytes.");
  GaugeFamily& budget_cpu = m.AddGauge("berth_budget_cpu_cores", "CPU budget for jobs, in cores.");
  GaugeFamily& budget_workers =
      m.AddGauge("berth_budget_workers", "Worker slots: jobs that may run at once.");
  GaugeFamily& budget_pool = m.AddGauge(
      "berth_budget_pool_workers", "Worker slots of a pool (0: no pool limit).", {"pool"});
  GaugeFamily& reserved_memory = m.AddGauge(
      "berth_reserved_memory_bytes", "Memory reserved by admitted and running jobs, in bytes.");
  GaugeFamily& reserved_cpu = m.AddGauge(
      "berth_reserved_cpu_cores", "CPU reserved by admitted and running jobs, in cores.");
  GaugeFamily& reserved_workers = m.AddGauge(
      "berth_reserved_workers", "Worker slots held by admitted and running jobs.");
  GaugeFamily& reserved_pool = m.AddGauge(
      "berth_reserved_pool_workers", "Worker slots held in a pool.", {"pool"});
  CounterFamily& docker_calls = m.AddCounter(
      "berth_docker_calls_total", "Docker API calls (attempts) since start, by endpoint.",
      {"endpoint"});
  CounterFamily& docker_errors = m.AddCounter(
      "berth_docker_errors_total", "Failed Docker API calls since start, by endpoint.",
      {"endpoint"});
  GaugeFamily& revision = m.AddGauge("berth_event_revision", "Revision of the last event written.");
  GaugeFamily& head_blocked = m.AddGauge(
      "berth_queue_head_blocked_seconds",
      "Seconds the head of the queue has been admissible by the plan (admitted, or its binding "
      "dimension has room) without starting; 0 while it waits for a reason.");
  // Per node (multi-node runtimes): one series per node of the inventory,
  // labelled by hostname and id; a node that leaves the inventory loses its
  // series, so their number stays the number of nodes.
  const std::vector<std::string> node_labels = {"node", "node_id"};
  GaugeFamily& node_memory = m.AddGauge(
      "berth_node_memory_bytes", "A node's memory for jobs (its size less the reserve), bytes.",
      node_labels);
  GaugeFamily& node_cpu = m.AddGauge(
      "berth_node_cpu_cores", "A node's CPU for jobs (its size less the reserve), cores.",
      node_labels);
  GaugeFamily& node_kept_memory = m.AddGauge(
      "berth_node_reserve_memory_bytes",
      "Memory kept back on a node for its engine and OS (--reserve_memory), bytes.",
      node_labels);
  GaugeFamily& node_reserved_memory = m.AddGauge(
      "berth_node_reserved_memory_bytes",
      "Memory reserved by the admitted and running jobs placed on a node, bytes.", node_labels);
  GaugeFamily& node_reserved_cpu = m.AddGauge(
      "berth_node_reserved_cpu_cores",
      "CPU reserved by the admitted and running jobs placed on a node, cores.", node_labels);
  GaugeFamily& node_jobs = m.AddGauge(
      "berth_node_jobs", "Admitted and running jobs placed on a node.", node_labels);
  GaugeFamily& node_observed_jobs = m.AddGauge(
      "berth_node_observed_jobs",
      "This instance's live tasks (created or running) the engine reported on a node at the "
      "last pass.",
      node_labels);
  GaugeFamily& node_observed_memory = m.AddGauge(
      "berth_node_observed_memory_bytes",
      "Reservations of the jobs whose tasks the engine reported live on a node, bytes.",
      node_labels);
  GaugeFamily& node_stray_tasks = m.AddGauge(
      "berth_node_stray_tasks",
      "This instance's tasks still running on a node that are no job's current run (leaked or "
      "orphaned) at the last pass; their memory is kept back from the node.",
      node_labels);
  GaugeFamily& node_stray_memory = m.AddGauge(
      "berth_node_stray_memory_bytes",
      "Reservations of the stray tasks on a node, bytes (kept back from its memory for jobs).",
      node_labels);
  std::vector<GaugeFamily*> node_families = {
      &node_memory,     &node_cpu,           &node_kept_memory,     &node_reserved_memory,
      &node_reserved_cpu, &node_jobs, &node_observed_jobs, &node_observed_memory,
      &node_stray_tasks, &node_stray_memory};

  // node_families by value: a local of this function.
  m.AddCollector([&, node_families] {
    // As of the newer of the last pass and the latest whole plan.
    const std::optional<PlanCache::Summary> snap = plans.CurrentSummary();
    head_blocked.WithLabels({}).Set(absl::ToDoubleSeconds(plans.HeadBlockedFor()));
    if (snap.has_value()) {
      // Every pool the budgets name, plus any a job is in; series already
      // exposed are kept (at 0) by Family.
      std::set<std::string> pools = {planner::kDefaultPool};
      for (const auto& [pool, unused] : snap->budgets.pools()) pools.insert(pool);
      const std::map<std::string, int64_t>& queued = snap->queued_by_pool;
      const std::map<std::string, int64_t>& running = snap->running_by_pool;
      for (const auto& [pool, n] : queued) pools.insert(pool);
      for (const auto& [pool, n] : running) pools.insert(pool);
      jobs.ForEachLabels([&](const std::vector<std::string>& labels) { pools.insert(labels[1]); });
      std::set<std::string> in_maintenance(snap->control.pools_in_maintenance().begin(),
                                           snap->control.pools_in_maintenance().end());
      for (const std::string& pool : pools) {
        auto q = queued.find(pool);
        auto r = running.find(pool);
        jobs.WithLabels({"queued", pool}).Set(q == queued.end() ? 0 : static_cast<double>(q->second));
        jobs.WithLabels({"running", pool})
            .Set(r == running.end() ? 0 : static_cast<double>(r->second));
        maintenance.WithLabels({pool}).Set(in_maintenance.count(pool) ? 1 : 0);
        // A pool without a cap exports no series (0 would read as "no
        // slots").
        auto b = snap->budgets.pools().find(pool);
        if (b == snap->budgets.pools().end() || b->second.max_workers() <= 0) {
          budget_pool.Remove({pool});
        } else {
          budget_pool.WithLabels({pool}).Set(b->second.max_workers());
        }
        auto u = snap->used_before.pool_workers.find(pool);
        reserved_pool.WithLabels({pool}).Set(
            u == snap->used_before.pool_workers.end() ? 0 : static_cast<double>(u->second));
      }
      paused.WithLabels({}).Set(snap->control.paused() ? 1 : 0);
      budget_memory.WithLabels({}).Set(static_cast<double>(snap->budgets.memory_bytes()));
      budget_cpu.WithLabels({}).Set(static_cast<double>(snap->budgets.cpu_millis()) / 1000);
      budget_workers.WithLabels({}).Set(snap->budgets.max_workers());
      const planner::Usage& used = snap->used_before;
      reserved_memory.WithLabels({}).Set(static_cast<double>(used.memory_bytes));
      reserved_cpu.WithLabels({}).Set(static_cast<double>(used.cpu_millis) / 1000);
      reserved_workers.WithLabels({}).Set(static_cast<double>(used.workers));
      std::set<std::vector<std::string>> live;
      for (const v1::NodeUse& u : plans.NodeUsesNow(snap->budgets)) {
        const std::vector<std::string> l = {
            u.node().hostname().empty() ? u.node().id() : u.node().hostname(), u.node().id()};
        live.insert(l);
        node_memory.WithLabels(l).Set(static_cast<double>(u.node().memory_bytes()));
        node_cpu.WithLabels(l).Set(static_cast<double>(u.node().cpu_millis()) / 1000);
        node_kept_memory.WithLabels(l).Set(static_cast<double>(u.node().reserve_memory_bytes()));
        node_reserved_memory.WithLabels(l).Set(static_cast<double>(u.reserved_memory_bytes()));
        node_reserved_cpu.WithLabels(l).Set(static_cast<double>(u.reserved_cpu_millis()) / 1000);
        node_jobs.WithLabels(l).Set(u.jobs());
        node_observed_jobs.WithLabels(l).Set(u.observed_jobs());
        node_observed_memory.WithLabels(l).Set(static_cast<double>(u.observed_memory_bytes()));
        node_stray_tasks.WithLabels(l).Set(u.node().stray_tasks());
        node_stray_memory.WithLabels(l).Set(static_cast<double>(u.node().stray_memory_bytes()));
      }
      for (GaugeFamily* f : node_families) {
        std::vector<std::vector<std::string>> gone;
        f->ForEachLabels([&](const std::vector<std::string>& labels) {
          if (live.count(labels) == 0) gone.push_back(labels);
        });
        for (const std::vector<std::string>& labels : gone) f->Remove(labels);
      }
    }
    for (const auto& [endpoint, counts] : runtime.Counters()) {
      docker_calls.WithLabels({endpoint}).SetTotal(static_cast<double>(counts.calls));
      docker_errors.WithLabels({endpoint}).SetTotal(static_cast<double>(counts.errors));
    }
    revision.WithLabels({}).Set(static_cast<double>(store.CurrentRevision()));
  });
}

namespace {

// The executor's latencies are read back as medians (berth-plan
// --executor-metrics interpolates inside a bucket): tenths of a second
// where starts and finishes fall on this project's machines (tens of ms to
// about a second), so that the interpolation errs by tens of ms, not
// hundreds.
std::vector<double> ExecutorLatencyBuckets() {
  return {0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5,
          0.6,   0.7,  0.8,   0.9,  1,     1.25, 1.5, 2,   2.5, 5,   10};
}

// Finer where starts lie (0.1-1 s), so that berth-plan can tell the levels
// apart (tools/plan/executor_metrics.h).
// "FAILURE_CAUSE_OOM_KILLED" -> "oom_killed".
std::string FailureCauseLabel(v1::FailureCause cause) {
  return absl::AsciiStrToLower(
      absl::StripPrefix(v1::FailureCause_Name(cause), "FAILURE_CAUSE_"));
}

std::vector<double> StartLatencyByStartsBuckets() {
  return {0.05, 0.1, 0.125, 0.15, 0.175, 0.2, 0.225, 0.25, 0.275, 0.3, 0.325, 0.35, 0.375,
          0.4,  0.45, 0.5, 0.55, 0.6, 0.7, 0.8, 0.9, 1, 1.5, 2, 5, 10};
}

}  // namespace

PassMetrics::PassMetrics(MetricsRegistry& m)
    : passes_(m.AddCounter("berth_reconcile_passes_total", "Reconcile passes by outcome.",
                           {"outcome"})),
      actions_(m.AddCounter(
          "berth_reconcile_actions_total",
          "Jobs admitted, started, finalised, failed to start, orphans stopped.", {"action"})),
      plan_seconds_(m.AddHistogram("berth_plan_seconds",
                                   "Time to read the store and plan (seconds).", {},
                                   LatencyBuckets())),
      runtime_up_(m.AddGauge("berth_runtime_up", "1 if the last pass reached Docker.", {})),
      start_latency_(m.AddHistogram(
          "berth_start_latency_seconds",
          "Admission to RUNNING recorded: Docker creating and starting a job's container "
          "(seconds).",
          {}, ExecutorLatencyBuckets())),
      start_latency_by_starts_(m.AddHistogram(
          "berth_start_latency_by_starts_seconds",
          "berth_start_latency_seconds by how many starts were in flight together (itself "
          "included, at most --start_parallelism): starts slow each other.",
          {"starts"}, StartLatencyByStartsBuckets())),
      finish_latency_(m.AddHistogram(
          "berth_finish_latency_seconds",
          "A container's exit (Docker's clock) to its job's outcome recorded (seconds).", {},
          ExecutorLatencyBuckets())),
      finished_(m.AddCounter("berth_jobs_finished_total",
                             "Jobs the reconciler finished, by outcome and failure cause.",
                             {"outcome", "cause"})) {
  // Every series from the start, so that rate() and increase() see a 0
  // before the first error, OOM or failure.
  for (const char* outcome : {"ok", "runtime_unavailable", "error"}) {
    passes_.WithLabels({outcome}).Increment(0);
  }
  finished_.WithLabels({"succeeded", "none"}).Increment(0);
  finished_.WithLabels({"cancelled", "none"}).Increment(0);
  for (int c = v1::FailureCause_MIN; c <= v1::FailureCause_MAX; ++c) {
    if (!v1::FailureCause_IsValid(c)) continue;
    finished_.WithLabels({"failed", FailureCauseLabel(static_cast<v1::FailureCause>(c))})
        .Increment(0);
  }
}

void PassMetrics::Attach(ReconcilerOptions& options) const {
  // By pointer: the families are the registry's; this object may be gone.
  HistogramFamily* start = &start_latency_;
  HistogramFamily* by_starts = &start_latency_by_starts_;
  HistogramFamily* finish = &finish_latency_;
  options.on_start_latency = [start, by_starts](absl::Duration d, int starts) {
    start->WithLabels({}).Observe(absl::ToDoubleSeconds(d));
    by_starts->WithLabels({absl::StrCat(starts)}).Observe(absl::ToDoubleSeconds(d));
  };
  options.on_finish_latency = [finish](absl::Duration d) {
    finish->WithLabels({}).Observe(absl::ToDoubleSeconds(d));
  };
  CounterFamily* finished = &finished_;
  options.on_job_finished = [finished](v1::JobState state, v1::FailureCause cause) {
    switch (state) {
      case v1::JOB_STATE_SUCCEEDED:
        finished->WithLabels({"succeeded", "none"}).Increment();
        break;
      case v1::JOB_STATE_CANCELLED:
        finished->WithLabels({"cancelled", "none"}).Increment();
        break;
      case v1::JOB_STATE_FAILED:
        finished->WithLabels({"failed", FailureCauseLabel(cause)}).Increment();
        break;
      default:
        break;
    }
  };
}

void PassMetrics::Observe(const absl::StatusOr<PassStats>& s) const {
  if (!s.ok()) {
    passes_.WithLabels({"error"}).Increment();
    return;
  }
  passes_.WithLabels({s->runtime_ok ? "ok" : "runtime_unavailable"}).Increment();
  runtime_up_.WithLabels({}).Set(s->runtime_ok ? 1 : 0);
  if (s->planned) plan_seconds_.WithLabels({}).Observe(absl::ToDoubleSeconds(s->plan_latency));
  actions_.WithLabels({"admitted"}).Increment(s->admitted);
  actions_.WithLabels({"started"}).Increment(s->started);
  actions_.WithLabels({"finalised"}).Increment(s->finalised);
  actions_.WithLabels({"start_failed"}).Increment(s->start_failed);
  actions_.WithLabels({"orphan_stopped"}).Increment(s->orphans_stopped);
  actions_.WithLabels({"dependency_failed"}).Increment(s->dependency_failed);
}

}  // namespace berth
