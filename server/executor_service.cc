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
    // Who, even when the role may not call the method (for the log).
    absl::StatusOr<Principal> known = service_.auth_.Authenticate(header);
    if (known.ok()) principal_ = known->name;
    absl::StatusOr<Principal> who = service_.auth_.Authorize(
        absl::StrCat("/berth.v1.Executor/", method_), header);
    if (!who.ok()) auth_status_ = who.status();
    peer_ = context->peer();
  }

  bool authorised() const { return auth_status_.ok(); }
  const std::string& principal() const { return principal_; }

  // `record_latency`: false for streams whose length the client decides
  // (WatchEvents), which would swamp berth_rpc_seconds.
  grpc::Status Finish(const absl::Status& status, bool record_latency = true) {
    absl::Status s = auth_status_.ok() ? status : auth_status_;
    service_.rpcs_
        .WithLabels({method_, std::string(absl::StatusCodeToString(s.code()))})
        .Increment();
    if (record_latency) {
      service_.rpc_seconds_.WithLabels({method_}).Observe(
          absl::ToDoubleSeconds(service_.clock_.Now() - start_));
    }
    if (!s.ok() && s.code() != absl::StatusCode::kNotFound &&
        s.code() != absl::StatusCode::kCancelled &&
        s.code() != absl::StatusCode::kDeadlineExceeded) {
      LogFields fields = {{"method", method_}};
      if (!principal_.empty()) fields.push_back({"principal", principal_});
      fields.push_back({"peer", peer_});
      fields.push_back({"code", std::string(absl::StatusCodeToString(s.code()))});
      fields.push_back({"error", std::string(s.message())});
      Log(LogLevel::kInfo, "rpc failed", fields);
    }
    return ToGrpcStatus(s);
  }

 private:
  ExecutorService& service_;
  const std::string method_;
  const absl::Time start_;
  absl::Status auth_status_;
  std::string principal_;  // empty when the token is unknown
  std::string peer_;
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
                                        "RPC latency by method (seconds); WatchEvents, "
                                        "as long as its client wants, is not in it.",
                                        {"method"},
                                        LatencyBuckets())),
      sync_jobs_(metrics.AddHistogram(
          "berth_sync_jobs", "Jobs per SyncSnapshot/DryRun stream.", {"method"},
          {10, 100, 1000, 10000, 100000, 1000000})),
      watch_streams_(metrics.AddGauge("berth_watch_streams",
                                      "Open WatchEvents streams (event consumers).")) {
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
  if (!call.authorised()) return call.Finish(absl::OkStatus(), /*record_latency=*/false);
  watch_streams_.WithLabels({}).Add(1);
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
  watch_streams_.WithLabels({}).Add(-1);
  // A stream the client ended (its deadline, a cancel) is not a success.
  if (s.ok() && context->IsCancelled()) {
    s = context->deadline() <= std::chrono::system_clock::now()
            ? absl::DeadlineExceededError("the client's deadline ended the stream")
            : absl::CancelledError("the client cancelled the stream");
  }
  return call.Finish(s, /*record_latency=*/false);
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
