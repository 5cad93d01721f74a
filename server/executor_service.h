// ExecutorService: the berth.v1.Executor gRPC service, a thin edge over
// ExecutorCore. Each handler: authorise (Authenticator), read the request or
// stream, call the core, map absl::Status to grpc::Status (same codes), and
// count the call in the metrics.
//
// Stream errors of SyncSnapshot / DryRun: shape errors, malformed and
// oversize messages are INVALID_ARGUMENT (SnapshotAssembler,
// snapshot_stream.h); a stream the client cancels mid-way is ABORTED; all
// change nothing.
//
// Thread-safe (gRPC calls handlers concurrently).
#ifndef BERTH_SERVER_EXECUTOR_SERVICE_H_
#define BERTH_SERVER_EXECUTOR_SERVICE_H_

#include <atomic>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "berth/v1/executor.grpc.pb.h"
#include "planner/base/clock.h"
#include "server/auth.h"
#include "server/executor_core.h"
#include "server/metrics.h"

namespace berth {

struct ExecutorServiceOptions {
  // Jobs one snapshot stream may carry.
  uint64_t max_snapshot_jobs = 2'000'000;
};

// absl::Status -> grpc::Status (the canonical codes are the same numbers).
grpc::Status ToGrpcStatus(const absl::Status& status);

class ExecutorService final : public v1::Executor::Service {
 public:
  // All references must outlive the service.
  ExecutorService(ExecutorCore& core, const Authenticator& auth,
                  MetricsRegistry& metrics, Clock& clock,
                  ExecutorServiceOptions options = {});

  // Ends every WatchEvents stream (for a clean shutdown).
  void Shutdown() { shutting_down_ = true; }

  // SyncSnapshot and DryRun read their streams as raw bytes (the
  // constructor installs these handlers in place of the generated ones), so
  // that a malformed or oversize message gets INVALID_ARGUMENT naming it
  // (server/snapshot_stream.h).
  grpc::Status SyncSnapshotRaw(grpc::ServerContext* context,
                               grpc::ServerReader<grpc::ByteBuffer>* reader,
                               v1::SyncSnapshotResponse* response);
  grpc::Status DryRunRaw(grpc::ServerContext* context,
                         grpc::ServerReader<grpc::ByteBuffer>* reader,
                         v1::DryRunResponse* response);
  grpc::Status WatchEvents(grpc::ServerContext* context,
                           const v1::WatchEventsRequest* request,
                           grpc::ServerWriter<v1::Event>* writer) override;
  grpc::Status GetPlan(grpc::ServerContext* context, const v1::GetPlanRequest* request,
                       v1::Plan* response) override;
  grpc::Status ListJobs(grpc::ServerContext* context,
                        const v1::ListJobsRequest* request,
                        v1::ListJobsResponse* response) override;
  grpc::Status GetJob(grpc::ServerContext* context, const v1::GetJobRequest* request,
                      v1::Job* response) override;
  grpc::Status ExplainJob(grpc::ServerContext* context,
                          const v1::ExplainJobRequest* request,
                          v1::Explanation* response) override;
  grpc::Status GetBudgets(grpc::ServerContext* context,
                          const v1::GetBudgetsRequest* request,
                          v1::Budgets* response) override;
  grpc::Status SetBudgets(grpc::ServerContext* context,
                          const v1::SetBudgetsRequest* request,
                          v1::Budgets* response) override;
  grpc::Status Pause(grpc::ServerContext* context, const v1::PauseRequest* request,
                     v1::ControlState* response) override;
  grpc::Status Resume(grpc::ServerContext* context, const v1::ResumeRequest* request,
                      v1::ControlState* response) override;
  grpc::Status SetPoolMaintenance(grpc::ServerContext* context,
                                  const v1::SetPoolMaintenanceRequest* request,
                                  v1::SetPoolMaintenanceResponse* response) override;
  grpc::Status Drain(grpc::ServerContext* context, const v1::DrainRequest* request,
                     v1::DrainResponse* response) override;

 private:
  class Call;
  // Authorise, run `fn` (returning absl::StatusOr<Response>), copy its
  // value into *response, record the call: every unary RPC.
  template <typename Response, typename Fn>
  grpc::Status Unary(grpc::ServerContext* context, const char* method, Response* response,
                     Fn fn);

  ExecutorCore& core_;
  const Authenticator& auth_;
  Clock& clock_;
  const ExecutorServiceOptions options_;
  std::atomic<bool> shutting_down_{false};

  CounterFamily& rpcs_;
  HistogramFamily& rpc_seconds_;
  HistogramFamily& sync_jobs_;
  GaugeFamily& watch_streams_;
};

}  // namespace berth

#endif  // BERTH_SERVER_EXECUTOR_SERVICE_H_
