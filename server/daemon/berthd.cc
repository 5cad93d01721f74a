#include "server/daemon/berthd.h"

#include <sys/socket.h>

#include <cstdlib>

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
#include "server/daemon/runtime_health.h"
#include "server/web/dashboard.h"
#include "server/web/usage_sampler.h"

namespace berth {
namespace {

constexpr char kServiceName[] = "berth.v1.Executor";
constexpr char kRuntimeHealth[] = "berth.runtime";
constexpr absl::Duration kCompactionInterval = absl::Minutes(10);

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> Credentials(
    const BerthdConfig& c) {
  if (c.tls_cert_file.empty()) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions ssl;
  ASSIGN_OR_RETURN(std::string cert, ReadFileToString(c.tls_cert_file));
  ASSIGN_OR_RETURN(std::string key, ReadFileToString(c.tls_key_file));
  ssl.pem_key_cert_pairs.push_back({key, cert});
  if (!c.tls_client_ca_file.empty()) {
    ASSIGN_OR_RETURN(ssl.pem_root_certs, ReadFileToString(c.tls_client_ca_file));
    ssl.client_certificate_request =
        GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(ssl);
}

}  // namespace

struct Berthd::Parts {
  BerthdConfig config;
  std::unique_ptr<Authenticator> auth;
  std::unique_ptr<RocksStore> store;
  std::unique_ptr<LogArchive> logs;  // <data_dir>/logs
  std::unique_ptr<JobLogReader> log_reader;
  std::unique_ptr<Runtime> runtime;
  // Follows running jobs' logs (--follow_logs, Docker); used by the
  // reconciler, so declared before it (destroyed after it).
  std::unique_ptr<LiveLogCapture> live_logs;
  // The engine's images for ingest (IMAGE_NOT_FOUND); views `runtime`.
  std::unique_ptr<ImageCatalog> images;
  std::function<bool(absl::string_view)> image_allowed;
  std::string engine_url;  // BerthdRuntime::engine_url, for the startup log
  MetricsRegistry metrics;
  std::unique_ptr<NodeBudgets> node_budgets;  // --runtime=swarm only
  UsageTracker usage;  // running jobs' observed use (issue 16)
  HeldJobs held;       // jobs held because their Swarm node was lost
  std::unique_ptr<PlanCache> plans;
  std::unique_ptr<Reconciler> reconciler;
  std::unique_ptr<ReconcileLoop> loop;
  std::unique_ptr<ExecutorCore> core;
  std::unique_ptr<ExecutorService> service;
  std::unique_ptr<ReflectionService> reflection;
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<EventSubscription> events;
  std::unique_ptr<httplib::Server> http;
  std::unique_ptr<web::Dashboard> dashboard;  // /ui on the HTTP port
  web::UsageRing usage_ring;  // the dashboard's 24-hour chart
  std::unique_ptr<web::UsageSampler> usage_sampler;  // fills it after each pass
  // "berth.runtime" is SERVING while the probe's pings answer within their
  // deadline and the last reconcile pass reached the engine.
  std::unique_ptr<RuntimeHealthProbe> probe;
  std::atomic<bool> probe_ok{false};
  std::atomic<bool> pass_ok{false};
  // Sets "berth.runtime" on change only: gRPC's health service sends every
  // set to each Health/Watch stream, changed or not. Called by the loop and
  // the probe threads.
  void UpdateRuntimeHealth() {
    if (server == nullptr) return;
    const bool serving = probe_ok && pass_ok;
    absl::MutexLock lock(&health_mu);
    if (serving == runtime_serving) return;
    if (auto* health = server->GetHealthCheckService()) {
      health->SetServingStatus(kRuntimeHealth, serving);
      runtime_serving = serving;
    }
  }
  std::thread http_thread;
  int port = 0;
  int metrics_port = 0;
  // What "berth.runtime" health says now.
  absl::Mutex health_mu;
  bool runtime_serving ABSL_GUARDED_BY(health_mu) = false;
  // Retention runs from the loop thread at most this often.
  absl::Time last_compaction = absl::InfinitePast();
  absl::Notification stopped;
  absl::Mutex shutdown_mu;
  bool shut_down = false;
};

Berthd::Berthd(std::unique_ptr<Parts> parts) : p_(std::move(parts)) {}

Berthd::~Berthd() { Shutdown(); }

int Berthd::port() const { return p_->port; }
int Berthd::metrics_port() const { return p_->metrics_port; }

void Berthd::Wait() { p_->stopped.WaitForNotification(); }

absl::Status Berthd::ReloadTokens() {
  absl::Status s = p_->auth->ReloadFromFile(p_->config.token_file);
  if (s.ok()) {
    Log(LogLevel::kInfo, "tokens reloaded",
        {{"token_file", p_->config.token_file}, {"tokens", p_->auth->size()}});
  } else {
    Log(LogLevel::kWarning, "token reload refused; the old tokens stay",
        {{"token_file", p_->config.token_file}, {"error", s.ToString()}});
  }
  return s;
}

void Berthd::Shutdown() {
  {
    absl::MutexLock lock(&p_->shutdown_mu);
    if (p_->shut_down) return;
    p_->shut_down = true;
  }
  Log(LogLevel::kInfo, "shutting down");
  if (p_->server) {
    if (auto* health = p_->server->GetHealthCheckService()) health->Shutdown();
  }
  p_->probe.reset();
  if (p_->service) p_->service->Shutdown();
  if (p_->server) p_->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  // No page or background forecast of the dashboard holds the stop up.
  if (p_->dashboard) {
    const absl::Time start = absl::Now();
    p_->dashboard->Stop();
    Log(LogLevel::kInfo, "dashboard stopped",
        {{"seconds", absl::ToDoubleSeconds(absl::Now() - start)}});
  }
  if (p_->http) p_->http->stop();
  if (p_->http_thread.joinable()) p_->http_thread.join();
  p_->events.reset();
  if (p_->loop) p_->loop->Stop();
  // Starts in flight finish (and are recorded) before the store closes;
  // queued ones stay ADMITTED for the next start's recovery pass.
  if (p_->reconciler) p_->reconciler->StopStarts();
  p_->store.reset();  // flushes and closes RocksDB
  p_->stopped.Notify();
}

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
  // A pass never waits for Docker to start a container (issue 15).
  rec.background_starts = true;
  // The executor's latencies (berth-plan --start-latency/--finish-latency)
  // and the pass counters (server/metrics/berthd_metrics.h).
  const PassMetrics pass_metrics(p->metrics);
  pass_metrics.Attach(rec);
  rec.usage = &p->usage;
  rec.held = &p->held;
  rec.log_archive = p->logs.get();
  if (c.follow_logs && c.runtime != "swarm") {
    p->live_logs = std::make_unique<LiveLogCapture>(*p->logs, *p->runtime);
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

absl::StatusOr<std::unique_ptr<Berthd>> Berthd::Start(const BerthdConfig& config,
                                                      const BerthdTestHooks& hooks) {
  RETURN_IF_ERROR(ValidateConfig(config));
  ASSIGN_OR_RETURN(const HostPort listen, ParseHostPort(config.listen));
  auto p = std::make_unique<Parts>();
  p->config = config;
  const BerthdConfig& c = p->config;

  ASSIGN_OR_RETURN(Authenticator auth, Authenticator::FromFile(c.token_file));
  p->auth = std::make_unique<Authenticator>(std::move(auth));
  p->auth->set_readers_read_logs(c.readers_read_logs);

  // The gRPC server first, so that health and reflection answer while the
  // store loads (the recovery of a large store takes seconds).
  ExecutorServiceOptions service_options;
  service_options.max_snapshot_jobs = c.max_snapshot_jobs;
  service_options.max_message_bytes = static_cast<size_t>(c.max_snapshot_message_bytes);
  p->service =
      std::make_unique<ExecutorService>(*p->auth, p->metrics, *Clock::Real(), service_options);
  // gRPC: the Executor, health (with its descriptors linked in, so
  // reflection can describe it) and reflection.
  ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> creds, Credentials(c));
  (void)grpc::health::v1::HealthCheckRequest::descriptor();
  grpc::EnableDefaultHealthCheckService(true);
  // Reflection serves the descriptors of the .proto files (JSON names and
  // comments included): server/api/reflection_service.h.
  ASSIGN_OR_RETURN(p->reflection,
                   ReflectionService::ForBerthd({kServiceName, "grpc.health.v1.Health",
                                                 "grpc.reflection.v1alpha.ServerReflection"}));
  grpc::ServerBuilder builder;
  // gRPC sets SO_REUSEPORT by default: a second berthd on the same port
  // would bind it too and RPCs would land on either. Refuse instead.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddListeningPort(c.listen, creds, &p->port);
  builder.RegisterService(p->service.get());
  builder.RegisterService(p->reflection.get());
  // berthd refuses snapshot messages over max_snapshot_message_bytes itself,
  // with INVALID_ARGUMENT naming the message (server/ingest/snapshot_stream.h);
  // gRPC's own limit (4x that, at least 64 MiB) only stops what is far
  // larger.
  builder.SetMaxReceiveMessageSize(static_cast<int>(
      std::min<int64_t>(std::max<int64_t>(int64_t{64} << 20, 4 * c.max_snapshot_message_bytes),
                        std::numeric_limits<int>::max())));
  builder.SetMaxSendMessageSize(64 << 20);
  p->server = builder.BuildAndStart();
  if (p->server == nullptr || p->port == 0) {
    return absl::UnavailableError(absl::StrCat("listen: cannot bind ", c.listen));
  }
  // Recovering: the server answers health and reflection; the Executor's
  // RPCs answer UNAVAILABLE "recovering" until the store has loaded.
  if (auto* health = p->server->GetHealthCheckService()) {
    health->SetServingStatus(false);
    health->SetServingStatus(kServiceName, false);
    health->SetServingStatus(kRuntimeHealth, false);  // until the first pass
  }
  // The metrics port is bound before recovery too, so that a port in use
  // stops berthd before it touches its store or containers; it serves once
  // recovered.
  if (!c.metrics_listen.empty()) {
    absl::StatusOr<HttpPort> http = BindHttpPort(c);
    if (!http.ok()) {
      p->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
      return http.status();
    }
    p->http = std::move(http->server);
    p->metrics_port = http->port;
    Parts* parts = p.get();
    p->http->Get("/metrics", [parts](const httplib::Request&, httplib::Response& res) {
      res.set_content(parts->metrics.Render(), "text/plain; version=0.0.4");
    });
  }
  Log(LogLevel::kInfo, "berthd recovering",
      {{"listen", absl::StrCat(listen.host, ":", p->port)},
       {"data_dir", c.data_dir}});

  if (hooks.while_recovering) hooks.while_recovering(p->port);
  absl::Status recovered = Recover(*p, hooks);
  if (!recovered.ok()) {
    if (auto* health = p->server->GetHealthCheckService()) health->Shutdown();
    p->server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
    return recovered;
  }
  Parts* parts = p.get();
  ReconcileLoop* loop = p->loop.get();

  if (p->http != nullptr) {
    httplib::Server* http = p->http.get();
    // The dashboard (/ui): plaintext only on loopback, as for gRPC.
    web::DashboardOptions wo;
    wo.secure = !c.tls_cert_file.empty();  // the cookie is "Secure" over TLS
    wo.plaintext_refused = DashboardRefusesPlaintext(c);
    p->dashboard = std::make_unique<web::Dashboard>(*p->auth, *p->core, *p->plans,
                                                    *p->log_reader, p->usage_ring, wo);
    p->dashboard->Register(*http);
    p->http_thread = std::thread([http] { http->listen_after_bind(); });
  }

  // A hung engine shows within a tick, not after a list's retries.
  RuntimeHealthOptions ho;
  ho.interval = c.tick / 2;
  // The Docker client's one-attempt ping limit (the Swarm runtime pings the
  // manager through the same client).
  ho.deadline = std::min(c.tick / 2, DockerRuntimeOptions{}.ping_timeout);
  p->probe = std::make_unique<RuntimeHealthProbe>(*p->runtime, ho, [parts](bool healthy) {
    parts->probe_ok = healthy;
    parts->UpdateRuntimeHealth();
  });
  Reconciler* reconciler = p->reconciler.get();
  // Each finished start is followed by a pass (a stop or exit that came
  // meanwhile, or capacity a failed start gave back).
  reconciler->set_on_start_done([loop] { loop->Trigger(); });
  p->events = p->runtime->SubscribeEvents([loop, reconciler](const RuntimeEvent& e) {
    reconciler->OnRuntimeEvent(e);  // a "die" is finalised without waiting for the list
    loop->Trigger();
  });
  p->loop->Start();
  Log(LogLevel::kInfo, "berthd started",
      {{"listen", absl::StrCat(listen.host, ":", p->port)},
       {"version", GetBuildInfo().version},
       {"commit", GetBuildInfo().commit},
       {"mode", GetBuildInfo().mode},
       {"data_dir", c.data_dir},
       {"runtime", c.runtime},
       {"docker", p->engine_url},
       {"instance", c.instance},
       {"metrics_port", p->metrics_port}});
  // Ready: the Executor's RPCs are served.
  if (auto* health = p->server->GetHealthCheckService()) {
    health->SetServingStatus(true);
    health->SetServingStatus(kServiceName, true);
  }
  return std::unique_ptr<Berthd>(new Berthd(std::move(p)));
}

}  // namespace berth
