// Berthd::Recover: opens the store, connects the runtime, builds the
// planner, the reconcile loop and the core (berthd.cc starts and serves).
#include "server/daemon/berthd.h"

#include <sys/socket.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include <algorithm>
#include <atomic>
#include <limits>
#include <optional>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "executor/logs/job_log_reader.h"
#include "executor/logs/live_log_capture.h"
#include "executor/logs/log_archive.h"
#include "executor/runtime/runtime_limits.h"
#include "executor/reconcile/node_budgets.h"
#include "executor/runtime/swarm/swarm_housekeeping.h"
#include "executor/reconcile/plan_snapshot.h"
#include "executor/reconcile/reconcile_loop.h"
#include "executor/reconcile/reconciler.h"
#include "executor/runtime/docker/docker_runtime.h"
#include "executor/runtime/docker/workspace_dir.h"
#include "executor/runtime/image_catalog.h"
#include "executor/store/rocks_store.h"
#include "executor/reconcile/held_jobs.h"
#include "executor/usage/usage_tracker.h"
#include "grpc/health/v1/health.pb.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"
#include "httplib.h"
#include "planner/ranking/ranking.h"
#include "server/api/auth.h"
#include "server/metrics/berthd_metrics.h"
#include "server/daemon/berthd_runtime.h"
#include "server/daemon/http_port.h"
#include "server/core/executor_core.h"
#include "server/api/executor_service.h"
#include "server/metrics/metrics.h"
#include "server/api/reflection_service.h"
#include "planner/base/build_info.h"
#include "planner/base/host_port.h"
#include "planner/base/log.h"
#include "planner/base/proto_json.h"
#include "planner/base/status_macros.h"
#include "server/daemon/berthd_parts.h"
#include "server/daemon/runtime_health.h"
#include "server/web/dashboard.h"
#include "server/web/usage_sampler.h"

namespace berth {

using berthd_internal::kCompactionInterval;

// Opens the store, connects the runtime, builds the planner, the reconcile
// loop and the core, and attaches the core to the (already serving) service.
absl::Status Berthd::Recover(Parts& recovering, const BerthdTestHooks& hooks) {
  Parts* p = &recovering;
  const BerthdConfig& c = p->config;
  RocksStoreOptions store_options;
  store_options.writer = VersionLine("berthd");
  store_options.retention.max_terminal_jobs = c.retain_terminal_jobs;
  store_options.retention.terminal_job_retention = c.retain_terminal_for;
  store_options.retention.max_events = c.retain_events;
  store_options.retention.max_event_age = c.retain_events_for;
  // Serve as soon as the meta is read: the jobs load on the store's own
  // thread (a million take seconds), the calls that need them wait for it,
  // and GetJob reads RocksDB meanwhile (executor/store/store_core.h).
  store_options.background_load = true;
  store_options.before_background_load = hooks.before_jobs_load;
  // A full disk: the store refuses writes (reads go on) until its probe
  // finds room; "berth.store" health says which.
  store_options.on_write_health = [p](const absl::Status& s) {
    p->store_writable = s.ok();
    p->UpdateStoreHealth();
  };
  const absl::Time load_start = absl::Now();
  store_options.after_background_load = [p, load_start](const absl::Status& s, size_t jobs) {
    if (s.ok()) {
      Log(LogLevel::kInfo, "store jobs loaded",
          {{"jobs", static_cast<int64_t>(jobs)},
           {"seconds", absl::ToDoubleSeconds(absl::Now() - load_start)}});
      return;
    }
    if (s.code() == absl::StatusCode::kCancelled) return;  // shutting down
    // Exit before the calls waiting for the jobs are released with the
    // error: a reconcile pass must never act on a store without its jobs
    // (it would take every container for an orphan). Nothing was written
    // since the open (writes wait for the load); the containers run on and
    // the next berthd adopts them.
    Log(LogLevel::kError, "loading the store failed; berthd stops",
        {{"data_dir", p->config.data_dir}, {"error", s.ToString()}, {"exit_status", 1}});
    std::_Exit(1);
  };
  absl::StatusOr<std::unique_ptr<RocksStore>> store = RocksStore::Open(c.data_dir, store_options);
  if (!store.ok()) {
    return absl::Status(store.status().code(),
                        absl::StrCat("data_dir ", c.data_dir, ": ", store.status().message()));
  }
  p->store = *std::move(store);
  if (p->store->migrated_from() != 0) {
    Log(LogLevel::kInfo, "store upgraded",
        {{"data_dir", c.data_dir},
         {"from_schema_version", p->store->migrated_from()},
         {"to_schema_version", kRocksStoreSchemaVersion}});
  }
  const StoreEpoch epoch = p->store->Epoch();
  if (epoch.began_at_open) {
    // A backup copy opened for the first time: a new history epoch (events
    // after `since` in the original were other events), and a check that
    // the logs the backup copied came with it.
    int64_t manifest_files = -1;
    if (absl::StatusOr<v1::BackupResponse> m = ReadJsonFile<v1::BackupResponse>(
            absl::StrCat(c.data_dir, "/BERTH_BACKUP.json"));
        m.ok()) {
      manifest_files = m->log_files();
    }
    std::error_code ec;
    const bool have_logs = std::filesystem::is_directory(absl::StrCat(c.data_dir, "/logs"), ec);
    Log(LogLevel::kInfo, "store restored from a backup: new history epoch",
        {{"data_dir", c.data_dir},
         {"epoch", epoch.id},
         {"previous_epoch", epoch.parent},
         {"backup_revision", static_cast<int64_t>(epoch.since)},
         {"backup_log_files", manifest_files}});
    if (manifest_files > 0 && !have_logs) {
      Log(LogLevel::kWarning, "the backup's job logs are missing from the restored data dir",
          {{"data_dir", c.data_dir},
           {"expected", absl::StrCat(c.data_dir, "/logs with ", manifest_files, " files")},
           {"fix", "copy the whole backup directory, logs/ included (docs/OPERATIONS.md "
                   "\"Backup and restore\")"}});
    }
  }
  absl::StatusOr<std::unique_ptr<LogArchive>> logs =
      LogArchive::Open({absl::StrCat(c.data_dir, "/logs"), c.log_cap_bytes});
  if (!logs.ok()) {
    return absl::Status(logs.status().code(),
                        absl::StrCat("data_dir ", c.data_dir, ": ", logs.status().message()));
  }
  p->logs = *std::move(logs);

  ASSIGN_OR_RETURN(BerthdRuntime engine, ConnectRuntime(c));
  EngineSize engine_size;
  ASSIGN_OR_RETURN(v1::Budgets defaults, ResolveDefaultBudgets(c, engine, &engine_size));
  p->runtime = std::move(engine.runtime);
  p->images = std::make_unique<ImageCatalog>(*p->runtime, *Clock::Real());
  p->image_allowed = std::move(engine.image_allowed);
  p->engine_url = std::move(engine.engine_url);

  planner::Policy policy;
  policy.default_duration = c.default_duration;
  policy.aging_interval = c.aging_interval;
  policy.aging_top_memory = c.aging_top_memory;
  absl::StatusOr<const planner::RankingPolicy*> ranking =
      planner::FindRankingPolicy(c.ranking);
  if (!ranking.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("ranking: ", ranking.status().message()));
  }
  policy.ranking = *ranking;
  p->plans = std::make_unique<PlanCache>(*p->store, *Clock::Real(), defaults, policy);
  // ETAs forecast on the executor berthd is: its start slots, and the start
  // and finish latencies it measures itself (MeasuredExecutor: fitted to its
  // latest starts and finishes), berth-plan's defaults (measured on this
  // project's machines, docs/BENCHMARKS.md) until it has measured enough, so
  // that they hold once the starts' latency has shifted the queue
  // (docs/DESIGN.md "Promises").
  planner::ExecutorModel executor;
  executor.start_latency = absl::Milliseconds(250);
  executor.start_contention = absl::Milliseconds(70);
  executor.start_parallelism = c.start_parallelism;
  executor.finish_latency = absl::Milliseconds(50);
  p->measured_executor = std::make_unique<MeasuredExecutor>(executor, p->plans.get());
  p->usage_sampler = std::make_unique<web::UsageSampler>(*p->plans, p->usage, p->usage_ring);
  if (c.runtime == "swarm") {
    // Per-node budgets from the swarm's node list, refreshed every pass.
    NodeBudgetsOptions no;
    no.reserve_memory_bytes = c.reserve_memory_bytes;
    no.reserve_cpu_millis = c.reserve_cpu_millis;
    no.auto_memory = c.memory_bytes == 0;
    no.auto_cpu = c.cpu_millis == 0;
    p->node_budgets = std::make_unique<NodeBudgets>(no);
    absl::StatusOr<std::vector<NodeInfo>> nodes = p->runtime->ListNodes();
    if (nodes.ok()) p->node_budgets->Update(*nodes);
    // Finished tasks' records and containers that the engine keeps.
    if (std::optional<std::string> w =
            nodes.ok() ? SwarmHousekeepingWarning(*nodes, c.instance) : std::nullopt) {
      Log(LogLevel::kWarning, "swarm keeps finished jobs' tasks and containers", {{"fix", *w}});
    }
    p->plans->set_node_budgets(p->node_budgets.get());
  }
  ReconcilerOptions rec;
  rec.start_parallelism = c.start_parallelism;
  rec.stop_grace = c.stop_grace;
  rec.mount_workspaces = !c.workspaces_root.empty();
  rec.pool_networks = c.pool_networks;
  rec.node_budgets = p->node_budgets.get();
  // A pass never waits for Docker to start a container.
  rec.background_starts = true;
  rec.background_log_capture = true;
  // Containers of jobs submitted after the backup: kept until the first
  // sync says whether the job-server still wants them (DESIGN "Recovery").
  // Also after a restart on the restored store before that sync: the epoch
  // record keeps the backup's generation.
  rec.hold_orphans_until_sync =
      p->store->Epoch().AwaitsFirstSyncAfterRestore(p->store->LastAppliedGeneration());
  // The executor's latencies (berth-plan --start-latency/--finish-latency)
  // and the pass counters (server/metrics/berthd_metrics.h).
  const PassMetrics pass_metrics(p->metrics);
  pass_metrics.Attach(rec);
  p->measured_executor->Attach(rec);
  rec.usage = &p->usage;
  rec.held = &p->held;
  rec.log_archive = p->logs.get();
  if (c.follow_logs && c.runtime != "swarm") {
    // The follows only add what Docker's retention loses (the record is that
    // retention read whole at the end), so they get the cores last, where
    // berthd may bring an awaited follow back (LiveLogCaptureOptions).
    LiveLogCaptureOptions follow;
    follow.idle_class = CanLeaveIdleClass();
    p->live_logs = std::make_unique<LiveLogCapture>(*p->logs, *p->runtime, follow);
    rec.live_logs = p->live_logs.get();
  }
  if (c.write_run_metadata) {
    // The files' group: the researchers' (--workspace_group) or the jobs'.
    RunMetadataOptions meta;
    meta.workspaces_root = c.workspaces_root;
    absl::StatusOr<ContainerUser> user = ParseContainerUser(c.container_user);
    if (!user.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("container_user: ", user.status().message()));
    }
    meta.gid = c.workspace_gid > 0 ? c.workspace_gid : user->gid;
    meta.pending_dir = absl::StrCat(c.data_dir, "/logs/.metadata-pending");
    rec.run_metadata = meta;
  }
  rec.requeue_oom_pools.insert(c.requeue_oom_pools.begin(), c.requeue_oom_pools.end());
  p->reconciler = std::make_unique<Reconciler>(*p->store, *p->runtime, *Clock::Real(),
                                               *p->plans, rec);

  MetricsRegistry& m = p->metrics;
  Parts* parts = p;
  p->loop = std::make_unique<ReconcileLoop>(
      *p->reconciler, c.tick, [parts, pass_metrics](const absl::StatusOr<PassStats>& s) {
        pass_metrics.Observe(s);
        if (!s.ok()) return;
        parts->pass_ok = s->runtime_ok;
        parts->UpdateRuntimeHealth();
        parts->usage_sampler->MaybeSample(Clock::Real()->Now());
        // Event and terminal-job retention (executor/store.h RetentionOptions).
        absl::Time now = Clock::Real()->Now();
        if (now - parts->last_compaction >= kCompactionInterval) {
          parts->last_compaction = now;
          absl::StatusOr<CompactionStats> c = parts->store->Compact(now);
          if (!c.ok()) {
            Log(LogLevel::kWarning, "compaction failed", {{"error", c.status().ToString()}});
          } else if (c->events_deleted > 0 || c->jobs_deleted > 0) {
            Log(LogLevel::kInfo, "compacted",
                {{"events_deleted", c->events_deleted}, {"jobs_deleted", c->jobs_deleted}});
          }
          // Logs go with their job's record (kept on any doubt).
          absl::StatusOr<int> swept = parts->logs->Sweep([parts](const std::string& id) {
            return parts->store->GetJob(id).status().code() != absl::StatusCode::kNotFound;
          });
          if (!swept.ok()) {
            Log(LogLevel::kWarning, "log retention failed",
                {{"error", swept.status().ToString()}});
          } else if (*swept > 0) {
            Log(LogLevel::kInfo, "job logs removed with their records", {{"jobs", *swept}});
          }
        }
      });

  ExecutorCoreOptions co;
  co.image_allowed = p->image_allowed;
  // A new job naming an image the engine is known not to hold is REJECTED
  // (IMAGE_NOT_FOUND); while the engine does not answer, none is.
  co.image_missing = [images = p->images.get()](absl::string_view image) {
    return images->Check(image) == ImagePresence::kMissing;
  };
  if (!c.workspaces_root.empty()) {
    // A missing workspace directory is REJECTED at sync, naming the field.
    // (On a swarm the root is a share mounted at the same path on berthd's
    // host and on every node: what berthd sees is what the task sees.)
    co.workspace_exists = [root = c.workspaces_root](absl::string_view ws) {
      return WorkspaceDirExists(root, ws);
    };
  }
  co.max_cancel_fraction = c.max_cancel_fraction;
  co.mass_cancel_min_jobs = c.mass_cancel_min_jobs;
  co.fill_memory_pools.insert(c.fill_memory_pools.begin(), c.fill_memory_pools.end());
  co.backup_root = c.backup_root;
  // The kept logs (and run metadata owed) go with the store's copy, as of
  // its state: after a restore `berthctl logs` reads them.
  co.backup_files = [logs = p->logs.get()](const std::string& dir) {
    return logs->CopyTo(absl::StrCat(dir, "/logs"));
  };
  co.workspaces_root = c.workspaces_root;
  co.version = VersionLine("berthd");
  co.engine = engine_size;
  ReconcileLoop* loop = p->loop.get();
  co.trigger = [loop] { loop->Trigger(); };
  co.usage = &p->usage;
  co.held = &p->held;
  p->core = std::make_unique<ExecutorCore>(*p->store, *p->plans, *Clock::Real(),
                                           p->reconciler->admission_mutex(), co);

  // Scrape-time metrics: queue, budgets and use from the latest plan;
  // Docker calls from the runtime's counters (server/metrics/berthd_metrics.h).
  RegisterStateMetrics(m, *p->plans, *p->runtime, *p->store);
  GaugeFamily& writable = m.AddGauge(
      "berth_store_writable",
      "1 while the store accepts writes; 0 after an I/O error (a full disk) until its probe "
      "finds room.");
  m.AddCollector([p, &writable] { writable.WithLabels({}).Set(p->store_writable ? 1 : 0); });
  const BuildInfo& build = GetBuildInfo();
  m.AddGauge("berth_build_info", "Always 1; the labels say which berthd this is.",
             {"version", "commit", "mode"})
      .WithLabels({build.version, build.commit, build.mode})
      .Set(1);

  p->log_reader = std::make_unique<JobLogReader>(*p->store, *p->logs, *p->runtime);
  p->service->AttachLogs(*p->log_reader);
  p->service->Attach(*p->core);
  // The budgets as plans use them: on a swarm, its nodes each less the
  // reserve (and, with auto totals, their sums), one line per node.
  v1::Budgets shown = defaults;
  p->plans->ApplyNodes(shown, /*operator_set=*/false);
  shown = LogNodesAtStart(std::move(shown));
  Log(LogLevel::kInfo, "store loaded",
      {{"revision", p->store->CurrentRevision()},
       {"schema_version", kRocksStoreSchemaVersion},
       {"default_budgets", shown.ShortDebugString()}});
  return absl::OkStatus();
}

}  // namespace berth
