#include "server/executor_service.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "grpcpp/support/method_handler.h"
#include "planner/base/log.h"
#include "server/snapshot_stream.h"

namespace berth {

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

// One RPC: authorises on construction, records the outcome on Finish().
class ExecutorService::Call {
 public:
  Call(ExecutorService& service, grpc::ServerContext* context, const char* method)
      : service_(service), method_(method), start_(service.clock_.Now()) {
    const auto& md = context->client_metadata();
    auto it = md.find("authorization");
    absl::string_view header;
    if (it != md.end()) header = absl::string_view(it->second.data(), it->second.size());
    absl::StatusOr<Principal> who = service_.auth_.Authorize(
        absl::StrCat("/berth.v1.Executor/", method_), header);
    if (who.ok()) {
      principal_ = who->name;
    } else {
      auth_status_ = who.status();
    }
  }

  bool authorised() const { return auth_status_.ok(); }
  const std::string& principal() const { return principal_; }

  grpc::Status Finish(const absl::Status& status) {
    absl::Status s = auth_status_.ok() ? status : auth_status_;
    service_.rpcs_
        .WithLabels({method_, std::string(absl::StatusCodeToString(s.code()))})
        .Increment();
    service_.rpc_seconds_.WithLabels({method_}).Observe(
        absl::ToDoubleSeconds(service_.clock_.Now() - start_));
    if (!s.ok() && s.code() != absl::StatusCode::kNotFound) {
      Log(LogLevel::kInfo, "rpc failed",
          {{"method", method_}, {"principal", principal_}, {"code",
            std::string(absl::StatusCodeToString(s.code()))},
           {"error", std::string(s.message())}});
    }
    return ToGrpcStatus(s);
  }

 private:
  ExecutorService& service_;
  const std::string method_;
  const absl::Time start_;
  absl::Status auth_status_;
  std::string principal_;
};

ExecutorService::ExecutorService(ExecutorCore& core, const Authenticator& auth,
                                 MetricsRegistry& metrics, Clock& clock,
                                 ExecutorServiceOptions options)
    : core_(core),
      auth_(auth),
      clock_(clock),
      options_(options),
      rpcs_(metrics.AddCounter("berth_rpcs_total", "RPCs by method and status code.",
                               {"method", "code"})),
      rpc_seconds_(metrics.AddHistogram("berth_rpc_seconds",
                                        "RPC latency by method (seconds).", {"method"},
                                        LatencyBuckets())),
      sync_jobs_(metrics.AddHistogram(
          "berth_sync_jobs", "Jobs per SyncSnapshot/DryRun stream.", {"method"},
          {10, 100, 1000, 10000, 100000, 1000000})) {
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
}

grpc::Status ExecutorService::SyncSnapshotRaw(
    grpc::ServerContext* context, grpc::ServerReader<grpc::ByteBuffer>* reader,
    v1::SyncSnapshotResponse* response) {
  Call call(*this, context, "SyncSnapshot");
  if (!call.authorised()) return call.Finish(absl::OkStatus());
  absl::StatusOr<ReceivedSnapshot> snapshot =
      ReadSnapshotStream(context, reader, options_.max_snapshot_jobs);
  if (!snapshot.ok()) return call.Finish(snapshot.status());
  const size_t jobs = snapshot->jobs.size();
  const uint64_t generation = snapshot->generation;
  sync_jobs_.WithLabels({"SyncSnapshot"}).Observe(static_cast<double>(jobs));
  absl::StatusOr<v1::SyncSnapshotResponse> r = core_.Sync(*std::move(snapshot));
  if (r.ok()) {
    *response = *std::move(r);
    Log(LogLevel::kInfo, "snapshot applied",
        {{"principal", call.principal()},
         {"generation", absl::StrCat(generation)},
         {"jobs", absl::StrCat(jobs)},
         {"added", absl::StrCat(response->added())},
         {"updated", absl::StrCat(response->updated())},
         {"cancelled", absl::StrCat(response->cancelled())},
         {"rejected", absl::StrCat(response->rejected())},
         {"already_applied", response->already_applied() ? "true" : "false"}});
  }
  return call.Finish(r.status());
}

grpc::Status ExecutorService::DryRunRaw(grpc::ServerContext* context,
                                        grpc::ServerReader<grpc::ByteBuffer>* reader,
                                        v1::DryRunResponse* response) {
  Call call(*this, context, "DryRun");
  if (!call.authorised()) return call.Finish(absl::OkStatus());
  absl::StatusOr<ReceivedSnapshot> snapshot =
      ReadSnapshotStream(context, reader, options_.max_snapshot_jobs);
  if (!snapshot.ok()) return call.Finish(snapshot.status());
  sync_jobs_.WithLabels({"DryRun"}).Observe(static_cast<double>(snapshot->jobs.size()));
  absl::StatusOr<v1::DryRunResponse> r = core_.DryRun(*std::move(snapshot));
  if (r.ok()) *response = *std::move(r);
  return call.Finish(r.status());
}

grpc::Status ExecutorService::WatchEvents(grpc::ServerContext* context,
                                          const v1::WatchEventsRequest* request,
                                          grpc::ServerWriter<v1::Event>* writer) {
  Call call(*this, context, "WatchEvents");
  if (!call.authorised()) return call.Finish(absl::OkStatus());
  absl::Status s = core_.Watch(
      request->from_revision(),
      [writer](const v1::Event& e) { return writer->Write(e); },
      [this, context] { return context->IsCancelled() || shutting_down_.load(); });
  if (s.code() == absl::StatusCode::kOutOfRange) {
    // Machine-readable for clients that must re-list (executor.proto).
    ExecutorCore::Revisions r = core_.CurrentRevisions();
    context->AddTrailingMetadata("berth-oldest-revision", absl::StrCat(r.oldest));
    context->AddTrailingMetadata("berth-current-revision", absl::StrCat(r.current));
  }
  return call.Finish(s);
}

template <typename Response, typename Fn>
grpc::Status ExecutorService::Unary(grpc::ServerContext* context, const char* method,
                                    Response* response, Fn fn) {
  Call call(*this, context, method);
  if (!call.authorised()) return call.Finish(absl::OkStatus());
  absl::StatusOr<Response> r = fn();
  if (r.ok()) *response = *std::move(r);
  return call.Finish(r.status());
}

grpc::Status ExecutorService::GetPlan(grpc::ServerContext* context,
                                      const v1::GetPlanRequest* request, v1::Plan* response) {
  return Unary(context, "GetPlan", response, [&] { return core_.GetPlan(request->limit()); });
}

grpc::Status ExecutorService::ListJobs(grpc::ServerContext* context,
                                       const v1::ListJobsRequest* request,
                                       v1::ListJobsResponse* response) {
  return Unary(context, "ListJobs", response, [&] { return core_.ListJobs(*request); });
}

grpc::Status ExecutorService::GetJob(grpc::ServerContext* context, const v1::GetJobRequest* request,
                                     v1::Job* response) {
  return Unary(context, "GetJob", response, [&] { return core_.GetJob(request->job_id()); });
}

grpc::Status ExecutorService::ExplainJob(grpc::ServerContext* context,
                                         const v1::ExplainJobRequest* request,
                                         v1::Explanation* response) {
  return Unary(context, "ExplainJob", response,
               [&] { return core_.ExplainJob(request->job_id()); });
}

grpc::Status ExecutorService::GetBudgets(grpc::ServerContext* context, const v1::GetBudgetsRequest*,
                                         v1::Budgets* response) {
  return Unary(context, "GetBudgets", response, [&] { return core_.GetBudgets(); });
}

grpc::Status ExecutorService::SetBudgets(grpc::ServerContext* context,
                                         const v1::SetBudgetsRequest* request,
                                         v1::Budgets* response) {
  // Not Unary(): the audit log line names who changed the budgets.
  Call call(*this, context, "SetBudgets");
  if (!call.authorised()) return call.Finish(absl::OkStatus());
  absl::StatusOr<v1::Budgets> r = core_.SetBudgets(*request);
  if (r.ok()) {
    *response = *std::move(r);
    Log(LogLevel::kInfo, "budgets set",
        {{"principal", call.principal()}, {"budgets", response->ShortDebugString()}});
  }
  return call.Finish(r.status());
}

grpc::Status ExecutorService::Pause(grpc::ServerContext* context, const v1::PauseRequest* request,
                                    v1::ControlState* response) {
  return Unary(context, "Pause", response, [&] { return core_.Pause(request->reason()); });
}

grpc::Status ExecutorService::Resume(grpc::ServerContext* context, const v1::ResumeRequest*,
                                     v1::ControlState* response) {
  return Unary(context, "Resume", response, [&] { return core_.Resume(); });
}

grpc::Status ExecutorService::SetPoolMaintenance(grpc::ServerContext* context,
                                                 const v1::SetPoolMaintenanceRequest* request,
                                                 v1::SetPoolMaintenanceResponse* response) {
  return Unary(context, "SetPoolMaintenance", response,
               [&] { return core_.SetPoolMaintenance(*request); });
}

grpc::Status ExecutorService::Drain(grpc::ServerContext* context, const v1::DrainRequest* request,
                                    v1::DrainResponse* response) {
  return Unary(context, "Drain", response, [&] { return core_.Drain(*request); });
}

}  // namespace berth
