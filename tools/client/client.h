// BerthClient: a small C++ client of berth.v1.Executor, for berthctl, the
// load tool and the integration tests. Adds the bearer token to every call,
// streams snapshots in batches, and returns absl::Status (gRPC codes map 1:1).
//
// Thread-safe (gRPC stubs are).
#ifndef BERTH_TOOLS_CLIENT_CLIENT_H_
#define BERTH_TOOLS_CLIENT_CLIENT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "berth/v1/executor.grpc.pb.h"
#include "berth/v1/files.pb.h"

namespace berth {

struct ClientOptions {
  // "host:port".
  std::string target = "127.0.0.1:7070";
  // Bearer token; empty sends none.
  std::string token;
  // TLS: CA of the server's certificate; with cert/key, a client certificate
  // (mTLS). Empty tls_ca: plaintext.
  std::string tls_ca_file;
  std::string tls_cert_file;
  std::string tls_key_file;
  // Per-call deadline (watch streams have none).
  absl::Duration timeout = absl::Seconds(30);
  // Jobs per SyncSnapshot batch message.
  int batch_size = 1000;
};

// grpc::Status -> absl::Status (same codes, message kept).
absl::Status FromGrpcStatus(const grpc::Status& status);

class BerthClient {
 public:
  // Creates the channel (connects lazily). INVALID_ARGUMENT / NOT_FOUND for
  // unreadable TLS files.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<BerthClient>> Connect(
      const ClientOptions& options);

  // Streams `snapshot` as header, batches, end.
  [[nodiscard]] absl::StatusOr<v1::SyncSnapshotResponse> Sync(const v1::Snapshot& snapshot);
  [[nodiscard]] absl::StatusOr<v1::DryRunResponse> DryRun(const v1::Snapshot& snapshot);
  // Sends exactly `messages` (for tests of malformed streams).
  [[nodiscard]] absl::StatusOr<v1::SyncSnapshotResponse> SyncRaw(
      const std::vector<v1::SyncSnapshotRequest>& messages);

  // With `include_state`, the answer carries Plan.state (the plan's input
  // as a berth-plan workload).
  [[nodiscard]] absl::StatusOr<v1::Plan> GetPlan(int32_t limit = 0, bool include_state = false);
  [[nodiscard]] absl::StatusOr<v1::ListJobsResponse> ListJobs(const v1::ListJobsRequest& r);
  [[nodiscard]] absl::StatusOr<v1::Job> GetJob(const std::string& id);
  [[nodiscard]] absl::StatusOr<v1::Explanation> ExplainJob(const std::string& id);
  [[nodiscard]] absl::StatusOr<v1::Budgets> GetBudgets();
  [[nodiscard]] absl::StatusOr<v1::Budgets> SetBudgets(const v1::SetBudgetsRequest& r);
  [[nodiscard]] absl::StatusOr<v1::ControlState> Pause(const std::string& reason);
  [[nodiscard]] absl::StatusOr<v1::ControlState> Resume();
  [[nodiscard]] absl::StatusOr<v1::SetPoolMaintenanceResponse> SetPoolMaintenance(
      const v1::SetPoolMaintenanceRequest& r);
  [[nodiscard]] absl::StatusOr<v1::DrainResponse> Drain(const std::string& reason);
  [[nodiscard]] absl::StatusOr<v1::RightSizeResponse> RightSize(const v1::RightSizeRequest& r);
  [[nodiscard]] absl::StatusOr<v1::BackupResponse> Backup(const std::string& name);

  // Follows WatchEvents from `from_revision`, calling `on_event` for each
  // event until it returns false (OK), the stream ends or fails (its
  // status), or `deadline` passes (DEADLINE_EXCEEDED). On OUT_OF_RANGE the
  // server's trailers are copied into *trailers if given.
  [[nodiscard]] absl::Status Watch(uint64_t from_revision,
                                   const std::function<bool(const v1::Event&)>& on_event,
                                   absl::Time deadline = absl::InfiniteFuture(),
                                   std::map<std::string, std::string>* trailers = nullptr);

  v1::Executor::Stub& stub() { return *stub_; }
  std::shared_ptr<grpc::Channel> channel() { return channel_; }
  // Sets deadline and token on a context for a direct stub call.
  void Prepare(grpc::ClientContext* context) const;

 private:
  BerthClient(ClientOptions options, std::shared_ptr<grpc::Channel> channel);
  template <typename Response>
  absl::StatusOr<Response> StreamSnapshot(
      const std::vector<v1::SyncSnapshotRequest>& messages,
      grpc::Status (*)(v1::Executor::Stub&, grpc::ClientContext*, Response*,
                       const std::vector<v1::SyncSnapshotRequest>&));

  const ClientOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Executor::Stub> stub_;
};

// The header / batches / end messages of a snapshot.
std::vector<v1::SyncSnapshotRequest> SnapshotMessages(const v1::Snapshot& snapshot,
                                                      int batch_size);

}  // namespace berth

#endif  // BERTH_TOOLS_CLIENT_CLIENT_H_
