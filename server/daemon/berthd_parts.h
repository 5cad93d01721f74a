// Berthd::Parts: everything a running berthd owns, shared by berthd.cc
// (start, serving, shutdown) and berthd_recover.cc (opening the store and
// wiring the reconcile loop). Internal to server/daemon.
#ifndef BERTH_SERVER_DAEMON_BERTHD_PARTS_H_
#define BERTH_SERVER_DAEMON_BERTHD_PARTS_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "executor/logs/job_log_reader.h"
#include "executor/logs/live_log_capture.h"
#include "executor/logs/log_archive.h"
#include "executor/reconcile/held_jobs.h"
#include "executor/reconcile/measured_executor.h"
#include "executor/reconcile/node_budgets.h"
#include "executor/reconcile/plan_snapshot.h"
#include "executor/reconcile/reconcile_loop.h"
#include "executor/reconcile/reconciler.h"
#include "executor/runtime/image_catalog.h"
#include "executor/store/rocks_store.h"
#include "executor/usage/usage_tracker.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"
#include "httplib.h"
#include "server/api/auth.h"
#include "server/api/executor_service.h"
#include "server/api/reflection_service.h"
#include "server/core/executor_core.h"
#include "server/daemon/berthd.h"
#include "server/daemon/runtime_health.h"
#include "server/metrics/metrics.h"
#include "server/web/dashboard.h"
#include "server/web/usage_sampler.h"

namespace berth {
namespace berthd_internal {

// The gRPC health service's name for "the engine answers".
inline constexpr char kRuntimeHealth[] = "berth.runtime";
// The gRPC health service's name for "the store accepts writes".
inline constexpr char kStoreHealth[] = "berth.store";
// Retention (compaction) runs from the loop thread at most this often.
inline constexpr absl::Duration kCompactionInterval = absl::Minutes(10);

}  // namespace berthd_internal

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
  UsageTracker usage;  // running jobs' observed use
  HeldJobs held;       // jobs held because their Swarm node was lost
  std::unique_ptr<PlanCache> plans;
  // The forecast's executor model, fitted to the reconciler's starts.
  std::unique_ptr<MeasuredExecutor> measured_executor;
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
      health->SetServingStatus(berthd_internal::kRuntimeHealth, serving);
      runtime_serving = serving;
    }
  }
  // "berth.store" is SERVING while the store accepts writes: NOT_SERVING
  // after an I/O error (a full disk) until its probe finds room
  // (RocksStoreOptions::on_write_health). Before berthd is ready it stays
  // NOT_SERVING, like the others.
  std::atomic<bool> store_writable{true};
  std::atomic<bool> ready{false};
  // Sets "berth.store" from store_writable once ready. Called by the
  // store's probe thread and by Start.
  void UpdateStoreHealth() {
    if (server == nullptr || !ready) return;
    absl::MutexLock lock(&health_mu);
    if (auto* health = server->GetHealthCheckService()) {
      health->SetServingStatus(berthd_internal::kStoreHealth, store_writable.load());
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

}  // namespace berth

#endif  // BERTH_SERVER_DAEMON_BERTHD_PARTS_H_
