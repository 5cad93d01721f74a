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
#include "server/daemon/berthd_parts.h"
#include "server/daemon/runtime_health.h"
#include "server/web/dashboard.h"
#include "server/web/usage_sampler.h"

namespace berth {
namespace {

using berthd_internal::kRuntimeHealth;

constexpr char kServiceName[] = "berth.v1.Executor";

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
  // Keepalive. berthd pings each connection after 30 s without a frame and
  // drops it if the ping is not answered within 10 s, so a watcher that
  // hung or vanished frees its stream. Clients' own pings are welcome from
  // every 5 s, with or without a call: berthctl and the Python client ping
  // every 10 s to notice a berthd that stopped answering (a default server
  // would answer such pings with GOAWAY "too_many_pings").
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 30'000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10'000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 5'000);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
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
    health->SetServingStatus(berthd_internal::kStoreHealth, false);  // until ready
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
    wo.log_cap_bytes = c.log_cap_bytes;
    p->dashboard = std::make_unique<web::Dashboard>(*p->auth, *p->core, *p->store, *p->plans,
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
  p->ready = true;
  p->UpdateStoreHealth();
  return std::unique_ptr<Berthd>(new Berthd(std::move(p)));
}

}  // namespace berth
