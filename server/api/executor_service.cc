#include "server/api/executor_service.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "grpcpp/support/method_handler.h"
#include "planner/base/log.h"
#include "server/api/executor_service_call.h"
#include "server/ingest/snapshot_stream.h"

namespace berth {

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

ExecutorService::ExecutorService(ExecutorCore& core, const Authenticator& auth,
                                 MetricsRegistry& metrics, Clock& clock,
                                 ExecutorServiceOptions options)
    : ExecutorService(auth, metrics, clock, options) {
  Attach(core);
}

ExecutorService::ExecutorService(const Authenticator& auth, MetricsRegistry& metrics,
                                 Clock& clock, ExecutorServiceOptions options)
    : auth_(auth),
      clock_(clock),
      options_(options),
      rpcs_(metrics.AddCounter("berth_rpcs_total", "RPCs by method and status code.",
                               {"method", "code"})),
      rpc_seconds_(metrics.AddHistogram("berth_rpc_seconds",
                                        "RPC latency by method (seconds); WatchEvents, "
                                        "as long as its client wants, is not in it.",
                                        {"method"},
                                        LatencyBuckets())),
      sync_jobs_(metrics.AddHistogram(
          "berth_sync_jobs", "Jobs per SyncSnapshot/DryRun stream.", {"method"},
          {10, 100, 1000, 10000, 100000, 1000000})),
      watch_streams_(metrics.AddGauge("berth_watch_streams",
                                      "Open WatchEvents streams (event consumers).")) {
  InstallHandlers();
}

void ExecutorService::Attach(ExecutorCore& core) {
  core_ = &core;
  notifier_ = std::thread([this] { NotifyLoop(); });
}

ExecutorService::~ExecutorService() {
  stop_notifier_ = true;
  if (notifier_.joinable()) notifier_.join();
}

void ExecutorService::InstallHandlers() {
  watch_streams_.WithLabels({}).Set(0);
  // Methods 0 and 1 of berth.v1.Executor (executor.proto's order):
  // SyncSnapshot and DryRun, read as raw bytes. The method type stays a
  // stream of requests (BIDI_STREAMING to the server core, the same on the
  // wire); reflection still describes the typed messages.
  MarkMethodStreamed(
      0, new grpc::internal::ClientStreamingHandler<ExecutorService, grpc::ByteBuffer,
                                                    v1::SyncSnapshotResponse>(
             [](ExecutorService* service, grpc::ServerContext* context,
                grpc::ServerReader<grpc::ByteBuffer>* reader,
                v1::SyncSnapshotResponse* response) {
               return service->SyncSnapshotRaw(context, reader, response);
             },
             this));
  MarkMethodStreamed(
      1, new grpc::internal::ClientStreamingHandler<ExecutorService, grpc::ByteBuffer,
                                                    v1::DryRunResponse>(
             [](ExecutorService* service, grpc::ServerContext* context,
                grpc::ServerReader<grpc::ByteBuffer>* reader, v1::DryRunResponse* response) {
               return service->DryRunRaw(context, reader, response);
             },
             this));
  // Method 2, WatchEvents, on the callback API: no thread per stream.
  MarkMethodCallback(
      2, new grpc::internal::CallbackServerStreamingHandler<v1::WatchEventsRequest, v1::Event>(
             [this](grpc::CallbackServerContext* context, const v1::WatchEventsRequest* request) {
               return WatchEventsReactor(context, request);
             }));
}

namespace {

// A refused snapshot (FAILED_PRECONDITION: stale or re-used generation, mass
// cancel) tells the client the last applied generation in trailing metadata
// "berth-last-generation", so that a job-server with a fresh state directory
// can continue above it without guessing.
void AddGenerationTrailer(const ExecutorCore& core, const absl::Status& s,
                          grpc::ServerContext* context) {
  if (s.code() != absl::StatusCode::kFailedPrecondition) return;
  context->AddTrailingMetadata("berth-last-generation",
                               absl::StrCat(core.LastAppliedGeneration()));
}

}  // namespace

grpc::Status ExecutorService::SyncSnapshotRaw(
    grpc::ServerContext* context, grpc::ServerReader<grpc::ByteBuffer>* reader,
    v1::SyncSnapshotResponse* response) {
  Call call(*this, context, "SyncSnapshot");
  if (!call.authorised()) return call.Finish(absl::OkStatus());
  ExecutorCore* core = core_.load();
  if (core == nullptr) return call.Finish(RecoveringError());
  // One setup validates the whole sync; specs the store holds unchanged are
  // dropped as they arrive.
  absl::StatusOr<ExecutorCore::SyncSetup> setup = core->BeginSync();
  if (!setup.ok()) return call.Finish(setup.status());
  std::unique_ptr<SpecFilter> filter = core->NewSyncFilter(*setup);
  absl::StatusOr<ReceivedSnapshot> snapshot =
      ReadSnapshotStream(context, reader, options_.max_snapshot_jobs,
                         options_.max_message_bytes, filter.get());
  if (!snapshot.ok()) return call.Finish(snapshot.status());
  const size_t jobs = snapshot->size();
  const uint64_t generation = snapshot->generation;
  sync_jobs_.WithLabels({"SyncSnapshot"}).Observe(static_cast<double>(jobs));
  absl::StatusOr<v1::SyncSnapshotResponse> r = core->Sync(*std::move(snapshot), *setup);
  AddGenerationTrailer(*core, r.status(), context);
  if (r.ok()) {
    *response = *std::move(r);
    Log(LogLevel::kInfo, "snapshot applied",
        {{"principal", call.principal()},
         {"generation", generation},
         {"jobs", jobs},
         {"added", response->added()},
         {"updated", response->updated()},
         {"cancelled", response->cancelled()},
         {"rejected", response->rejected()},
         {"already_applied", response->already_applied()}});
  }
  return call.Finish(r.status());
}

grpc::Status ExecutorService::DryRunRaw(grpc::ServerContext* context,
                                        grpc::ServerReader<grpc::ByteBuffer>* reader,
                                        v1::DryRunResponse* response) {
  Call call(*this, context, "DryRun");
  if (!call.authorised()) return call.Finish(absl::OkStatus());
  ExecutorCore* core = core_.load();
  if (core == nullptr) return call.Finish(RecoveringError());
  absl::StatusOr<ReceivedSnapshot> snapshot =
      ReadSnapshotStream(context, reader, options_.max_snapshot_jobs,
                         options_.max_message_bytes);
  if (!snapshot.ok()) return call.Finish(snapshot.status());
  sync_jobs_.WithLabels({"DryRun"}).Observe(static_cast<double>(snapshot->jobs.size()));
  absl::StatusOr<v1::DryRunResponse> r = core->DryRun(*std::move(snapshot));
  AddGenerationTrailer(*core, r.status(), context);
  if (r.ok()) *response = *std::move(r);
  return call.Finish(r.status());
}

template <typename Response, typename Fn>
grpc::Status ExecutorService::Unary(grpc::ServerContext* context, const char* method,
                                    Response* response, Fn fn) {
  Call call(*this, context, method);
  if (!call.authorised()) return call.Finish(absl::OkStatus());
  ExecutorCore* core = core_.load();
  if (core == nullptr) return call.Finish(RecoveringError());
  absl::StatusOr<Response> r = fn(*core);
  if (r.ok()) *response = *std::move(r);
  return call.Finish(r.status());
}

grpc::Status ExecutorService::GetPlan(grpc::ServerContext* context,
                                      const v1::GetPlanRequest* request, v1::Plan* response) {
  return Unary(context, "GetPlan", response,
               [&](ExecutorCore& core) {
                 return core.GetPlan(request->limit(), request->include_state());
               });
}

grpc::Status ExecutorService::ListJobs(grpc::ServerContext* context,
                                       const v1::ListJobsRequest* request,
                                       v1::ListJobsResponse* response) {
  return Unary(context, "ListJobs", response,
               [&](ExecutorCore& core) { return core.ListJobs(*request); });
}

grpc::Status ExecutorService::GetJob(grpc::ServerContext* context, const v1::GetJobRequest* request,
                                     v1::Job* response) {
  return Unary(context, "GetJob", response,
               [&](ExecutorCore& core) { return core.GetJob(request->job_id()); });
}

grpc::Status ExecutorService::ExplainJob(grpc::ServerContext* context,
                                         const v1::ExplainJobRequest* request,
                                         v1::Explanation* response) {
  return Unary(context, "ExplainJob", response,
               [&](ExecutorCore& core) { return core.ExplainJob(request->job_id()); });
}

grpc::Status ExecutorService::GetBudgets(grpc::ServerContext* context, const v1::GetBudgetsRequest*,
                                         v1::Budgets* response) {
  return Unary(context, "GetBudgets", response,
               [&](ExecutorCore& core) { return core.GetBudgets(); });
}

grpc::Status ExecutorService::SetBudgets(grpc::ServerContext* context,
                                         const v1::SetBudgetsRequest* request,
                                         v1::Budgets* response) {
  // Not Unary(): the audit log line names who changed the budgets.
  Call call(*this, context, "SetBudgets");
  if (!call.authorised()) return call.Finish(absl::OkStatus());
  ExecutorCore* core = core_.load();
  if (core == nullptr) return call.Finish(RecoveringError());
  absl::StatusOr<v1::Budgets> r = core->SetBudgets(*request);
  if (r.ok()) {
    *response = *std::move(r);
    Log(LogLevel::kInfo, "budgets set",
        {{"principal", call.principal()}, {"budgets", response->ShortDebugString()}});
  }
  return call.Finish(r.status());
}

grpc::Status ExecutorService::Pause(grpc::ServerContext* context, const v1::PauseRequest* request,
                                    v1::ControlState* response) {
  return Unary(context, "Pause", response,
               [&](ExecutorCore& core) { return core.Pause(request->reason()); });
}

grpc::Status ExecutorService::Resume(grpc::ServerContext* context, const v1::ResumeRequest*,
                                     v1::ControlState* response) {
  return Unary(context, "Resume", response,
               [&](ExecutorCore& core) { return core.Resume(); });
}

grpc::Status ExecutorService::SetPoolMaintenance(grpc::ServerContext* context,
                                                 const v1::SetPoolMaintenanceRequest* request,
                                                 v1::SetPoolMaintenanceResponse* response) {
  return Unary(context, "SetPoolMaintenance", response,
               [&](ExecutorCore& core) { return core.SetPoolMaintenance(*request); });
}

grpc::Status ExecutorService::Drain(grpc::ServerContext* context, const v1::DrainRequest* request,
                                    v1::DrainResponse* response) {
  return Unary(context, "Drain", response,
               [&](ExecutorCore& core) { return core.Drain(*request); });
}

grpc::Status ExecutorService::RightSize(grpc::ServerContext* context,
                                        const v1::RightSizeRequest* request,
                                        v1::RightSizeResponse* response) {
  return Unary(context, "RightSize", response,
               [&](ExecutorCore& core) { return core.RightSize(*request); });
}

grpc::Status ExecutorService::Backup(grpc::ServerContext* context,
                                     const v1::BackupRequest* request,
                                     v1::BackupResponse* response) {
  return Unary(context, "Backup", response,
               [&](ExecutorCore& core) { return core.Backup(*request); });
}

}  // namespace berth
