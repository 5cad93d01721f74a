// ExecutorService: the berth.v1.Executor gRPC service, a thin edge over
// ExecutorCore. Each handler: authorise (Authenticator), read the request or
// stream, call the core, map absl::Status to grpc::Status (same codes), and
// count the call in the metrics.
//
// Recovery: the service can be registered (and berthd's gRPC server started)
// before the store has loaded. Until Attach() gives it the core, every RPC
// is authorised as usual and then answers UNAVAILABLE "berthd is recovering
// ...": a client retries as for any UNAVAILABLE.
//
// WatchEvents uses gRPC's callback API: a stream holds no thread while it
// waits. One notifier thread per service waits for new store revisions and
// wakes the streams that have sent everything (executor_service_watch.cc).
//
// Stream errors of SyncSnapshot / DryRun: shape errors, malformed and
// oversize messages are INVALID_ARGUMENT (SnapshotAssembler,
// snapshot_stream.h); a stream the client cancels mid-way is ABORTED; all
// change nothing.
//
// Thread-safe (gRPC calls handlers concurrently).
#ifndef BERTH_SERVER_API_EXECUTOR_SERVICE_H_
#define BERTH_SERVER_API_EXECUTOR_SERVICE_H_

#include <atomic>
#include <cstdint>
#include <set>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "berth/v1/executor.grpc.pb.h"
#include "planner/base/clock.h"
#include "executor/logs/job_log_reader.h"
#include "server/api/auth.h"
#include "server/core/executor_core.h"
#include "server/metrics/metrics.h"
#include "server/ingest/snapshot_stream.h"

namespace berth {

struct ExecutorServiceOptions {
  // Jobs one snapshot stream may carry: a header announcing more is refused
  // with RESOURCE_EXHAUSTED before any batch is read (berthd
  // --max_snapshot_jobs).
  uint64_t max_snapshot_jobs = 2'000'000;
  // The largest message of a snapshot stream (berthd
  // --max_snapshot_message_bytes): INVALID_ARGUMENT naming it above.
  size_t max_message_bytes = kMaxSnapshotMessageBytes;
};

// absl::Status -> grpc::Status (the canonical codes are the same numbers).
grpc::Status ToGrpcStatus(const absl::Status& status);

class ExecutorService final : public v1::Executor::Service {
 public:
  // All references must outlive the service. Serves at once.
  ExecutorService(ExecutorCore& core, const Authenticator& auth,
                  MetricsRegistry& metrics, Clock& clock,
                  ExecutorServiceOptions options = {});
  // Answers UNAVAILABLE "recovering" until Attach().
  ExecutorService(const Authenticator& auth, MetricsRegistry& metrics, Clock& clock,
                  ExecutorServiceOptions options = {});
  // Stops the notifier. REQUIRES: no call in flight (the server is shut down).
  ~ExecutorService() override;

  // Starts serving from `core` (which must outlive the service, or at least
  // its Shutdown()). Once only.
  void Attach(ExecutorCore& core);

  // Ends every WatchEvents stream (for a clean shutdown) with OK, and stops
  // (joins) the thread that waits on the core's store: after it returns
  // the service no longer calls the core on its own, so the store may
  // close. Not concurrently with itself.
  void Shutdown();

  // SyncSnapshot and DryRun read their streams as raw bytes (the
  // constructor installs these handlers in place of the generated ones), so
  // that a malformed or oversize message gets INVALID_ARGUMENT naming it
  // (server/ingest/snapshot_stream.h).
  grpc::Status SyncSnapshotRaw(grpc::ServerContext* context,
                               grpc::ServerReader<grpc::ByteBuffer>* reader,
                               v1::SyncSnapshotResponse* response);
  grpc::Status DryRunRaw(grpc::ServerContext* context,
                         grpc::ServerReader<grpc::ByteBuffer>* reader,
                         v1::DryRunResponse* response);
  // The callback-API WatchEvents (installed by the constructor): the events
  // after request.from_revision, then new ones as they are written, in
  // contiguous revisions; OUT_OF_RANGE with trailers berth-oldest-revision
  // and berth-current-revision below retention.
  grpc::ServerWriteReactor<v1::Event>* WatchEventsReactor(
      grpc::CallbackServerContext* context, const v1::WatchEventsRequest* request);
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
  grpc::Status RightSize(grpc::ServerContext* context, const v1::RightSizeRequest* request,
                         v1::RightSizeResponse* response) override;
  grpc::Status Backup(grpc::ServerContext* context, const v1::BackupRequest* request,
                      v1::BackupResponse* response) override;

  // Job logs. AttachLogs gives the reader (which must outlive the
  // service); until then ReadJobLog answers UNAVAILABLE like every RPC while
  // recovering. ReadJobLog holds its thread while it streams (a follow
  // lasts until the job ends or the client cancels); Shutdown ends it.
  void AttachLogs(const JobLogReader& reader);
  grpc::Status ReadJobLog(grpc::ServerContext* context, const v1::ReadJobLogRequest* request,
                          grpc::ServerWriter<v1::JobLogChunk>* writer) override;

 private:
  class Call;
  class WatchReactor;
  // Authorise, run `fn` (returning absl::StatusOr<Response>), copy its
  // value into *response, record the call: every unary RPC.
  template <typename Response, typename Fn>
  grpc::Status Unary(grpc::ServerContext* context, const char* method, Response* response,
                     Fn fn);
  void InstallHandlers();
  // Waits for new revisions and wakes idle WatchEvents streams.
  void NotifyLoop();
  // Wakes every registered stream (reads new events, or finishes it).
  void PokeWatchers();
  void Unregister(WatchReactor* reactor);

  // Null while recovering; set once by Attach().
  std::atomic<ExecutorCore*> core_{nullptr};
  std::atomic<const JobLogReader*> logs_{nullptr};
  const Authenticator& auth_;
  Clock& clock_;
  const ExecutorServiceOptions options_;
  std::atomic<bool> shutting_down_{false};

  CounterFamily& rpcs_;
  HistogramFamily& rpc_seconds_;
  HistogramFamily& sync_jobs_;
  GaugeFamily& watch_streams_;

  std::thread notifier_;
  std::atomic<bool> stop_notifier_{false};
  absl::Mutex watch_mu_;
  // Open streams, and how many pokes are in flight on each (a stream whose
  // call is done is deleted by the last of OnDone() and the poke).
  std::set<WatchReactor*> watchers_ ABSL_GUARDED_BY(watch_mu_);
};

}  // namespace berth

#endif  // BERTH_SERVER_API_EXECUTOR_SERVICE_H_
