#include "tools/client/client.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "planner/base/status_macros.h"
#include "planner/base/proto_json.h"

namespace berth {
namespace {

std::chrono::system_clock::time_point ToChrono(absl::Time t) {
  return absl::ToChronoTime(t);
}

template <typename Response>
grpc::Status WriteAll(std::unique_ptr<grpc::ClientWriter<v1::SyncSnapshotRequest>> writer,
                      const std::vector<v1::SyncSnapshotRequest>& messages) {
  for (const v1::SyncSnapshotRequest& m : messages) {
    if (!writer->Write(m)) break;  // the server ended the call early: Finish says why
  }
  writer->WritesDone();
  return writer->Finish();
}

grpc::Status CallSync(v1::Executor::Stub& stub, grpc::ClientContext* context,
                      v1::SyncSnapshotResponse* response,
                      const std::vector<v1::SyncSnapshotRequest>& messages) {
  return WriteAll<v1::SyncSnapshotResponse>(stub.SyncSnapshot(context, response), messages);
}

grpc::Status CallDryRun(v1::Executor::Stub& stub, grpc::ClientContext* context,
                        v1::DryRunResponse* response,
                        const std::vector<v1::SyncSnapshotRequest>& messages) {
  return WriteAll<v1::DryRunResponse>(stub.DryRun(context, response), messages);
}

}  // namespace

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      status.error_message());
}

std::vector<v1::SyncSnapshotRequest> SnapshotMessages(const v1::Snapshot& snapshot,
                                                      int batch_size) {
  std::vector<v1::SyncSnapshotRequest> out;
  v1::SyncSnapshotRequest header;
  header.mutable_header()->set_generation(snapshot.generation());
  header.mutable_header()->set_expected_job_count(snapshot.jobs_size());
  header.mutable_header()->set_allow_mass_cancel(snapshot.allow_mass_cancel());
  header.mutable_header()->set_fill_memory_from_history(snapshot.fill_memory_from_history());
  header.mutable_header()->set_requeue_oom_once(snapshot.requeue_oom_once());
  out.push_back(std::move(header));
  const int n = snapshot.jobs_size();
  const int size = std::max(1, batch_size);
  for (int start = 0; start < n; start += size) {
    v1::SyncSnapshotRequest batch;
    for (int i = start; i < std::min(n, start + size); ++i) {
      *batch.mutable_batch()->add_jobs() = snapshot.jobs(i);
    }
    out.push_back(std::move(batch));
  }
  v1::SyncSnapshotRequest end;
  end.mutable_end()->set_job_count(n);
  out.push_back(std::move(end));
  return out;
}

absl::StatusOr<std::unique_ptr<BerthClient>> BerthClient::Connect(
    const ClientOptions& options) {
  std::shared_ptr<grpc::ChannelCredentials> creds;
  if (options.tls_ca_file.empty()) {
    creds = grpc::InsecureChannelCredentials();
  } else {
    grpc::SslCredentialsOptions ssl;
    ASSIGN_OR_RETURN(ssl.pem_root_certs, ReadFileToString(options.tls_ca_file));
    if (!options.tls_cert_file.empty()) {
      ASSIGN_OR_RETURN(ssl.pem_cert_chain, ReadFileToString(options.tls_cert_file));
      ASSIGN_OR_RETURN(ssl.pem_private_key, ReadFileToString(options.tls_key_file));
    }
    creds = grpc::SslCredentials(ssl);
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(256 << 20);
  args.SetMaxSendMessageSize(64 << 20);
  // Keepalive: a ping every 10 s on a connection with a call, however long
  // it has been quiet (a watch waiting for events), and the connection
  // fails if one goes unanswered for 5 s. So a berthd that stops answering
  // (stopped, hung, its host gone) fails a call within about 15 s instead
  // of never; berthd permits pings from every 5 s.
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10'000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5'000);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  auto channel = grpc::CreateCustomChannel(options.target, creds, args);
  return std::unique_ptr<BerthClient>(new BerthClient(options, std::move(channel)));
}

BerthClient::BerthClient(ClientOptions options, std::shared_ptr<grpc::Channel> channel)
    : options_(std::move(options)),
      channel_(std::move(channel)),
      stub_(v1::Executor::NewStub(channel_)) {}

void BerthClient::Prepare(grpc::ClientContext* context) const {
  if (options_.timeout > absl::ZeroDuration()) {
    context->set_deadline(ToChrono(absl::Now() + options_.timeout));
  }
  if (!options_.token.empty()) {
    context->AddMetadata("authorization", absl::StrCat("Bearer ", options_.token));
  }
}

template <typename Response>
absl::StatusOr<Response> BerthClient::StreamSnapshot(
    const std::vector<v1::SyncSnapshotRequest>& messages,
    grpc::Status (*call)(v1::Executor::Stub&, grpc::ClientContext*, Response*,
                         const std::vector<v1::SyncSnapshotRequest>&)) {
  grpc::ClientContext context;
  Prepare(&context);
  Response response;
  RETURN_IF_ERROR(FromGrpcStatus(call(*stub_, &context, &response, messages)));
  return response;
}

absl::StatusOr<v1::SyncSnapshotResponse> BerthClient::Sync(const v1::Snapshot& snapshot) {
  return StreamSnapshot<v1::SyncSnapshotResponse>(
      SnapshotMessages(snapshot, options_.batch_size), &CallSync);
}

absl::StatusOr<v1::SyncSnapshotResponse> BerthClient::SyncRaw(
    const std::vector<v1::SyncSnapshotRequest>& messages) {
  return StreamSnapshot<v1::SyncSnapshotResponse>(messages, &CallSync);
}

absl::StatusOr<v1::DryRunResponse> BerthClient::DryRun(const v1::Snapshot& snapshot) {
  return StreamSnapshot<v1::DryRunResponse>(
      SnapshotMessages(snapshot, options_.batch_size), &CallDryRun);
}

#define BERTH_UNARY(Method, Request, Response, fill)         \
  grpc::ClientContext context;                               \
  Prepare(&context);                                         \
  Request request;                                           \
  fill;                                                      \
  Response response;                                         \
  RETURN_IF_ERROR(FromGrpcStatus(stub_->Method(&context, request, &response))); \
  return response

absl::StatusOr<v1::Plan> BerthClient::GetPlan(int32_t limit, bool include_state) {
  BERTH_UNARY(GetPlan, v1::GetPlanRequest, v1::Plan, request.set_limit(limit);
              request.set_include_state(include_state));
}

absl::StatusOr<v1::ListJobsResponse> BerthClient::ListJobs(const v1::ListJobsRequest& r) {
  BERTH_UNARY(ListJobs, v1::ListJobsRequest, v1::ListJobsResponse, request = r);
}

absl::StatusOr<v1::Job> BerthClient::GetJob(const std::string& id) {
  BERTH_UNARY(GetJob, v1::GetJobRequest, v1::Job, request.set_job_id(id));
}

absl::StatusOr<v1::Explanation> BerthClient::ExplainJob(const std::string& id) {
  BERTH_UNARY(ExplainJob, v1::ExplainJobRequest, v1::Explanation, request.set_job_id(id));
}

absl::StatusOr<v1::Budgets> BerthClient::GetBudgets() {
  BERTH_UNARY(GetBudgets, v1::GetBudgetsRequest, v1::Budgets, (void)0);
}

absl::StatusOr<v1::Budgets> BerthClient::SetBudgets(const v1::SetBudgetsRequest& r) {
  BERTH_UNARY(SetBudgets, v1::SetBudgetsRequest, v1::Budgets, request = r);
}

absl::StatusOr<v1::ControlState> BerthClient::Pause(const std::string& reason) {
  BERTH_UNARY(Pause, v1::PauseRequest, v1::ControlState, request.set_reason(reason));
}

absl::StatusOr<v1::ControlState> BerthClient::Resume() {
  BERTH_UNARY(Resume, v1::ResumeRequest, v1::ControlState, (void)0);
}

absl::StatusOr<v1::SetPoolMaintenanceResponse> BerthClient::SetPoolMaintenance(
    const v1::SetPoolMaintenanceRequest& r) {
  BERTH_UNARY(SetPoolMaintenance, v1::SetPoolMaintenanceRequest,
              v1::SetPoolMaintenanceResponse, request = r);
}

absl::StatusOr<v1::DrainResponse> BerthClient::Drain(const std::string& reason) {
  BERTH_UNARY(Drain, v1::DrainRequest, v1::DrainResponse, request.set_reason(reason));
}

absl::StatusOr<v1::RightSizeResponse> BerthClient::RightSize(const v1::RightSizeRequest& r) {
  BERTH_UNARY(RightSize, v1::RightSizeRequest, v1::RightSizeResponse, request = r);
}

absl::StatusOr<v1::BackupResponse> BerthClient::Backup(const std::string& name) {
  BERTH_UNARY(Backup, v1::BackupRequest, v1::BackupResponse, request.set_name(name));
}

#undef BERTH_UNARY

absl::Status BerthClient::Watch(uint64_t from_revision,
                                const std::function<bool(const v1::Event&)>& on_event,
                                absl::Time deadline,
                                std::map<std::string, std::string>* trailers) {
  grpc::ClientContext context;
  if (!options_.token.empty()) {
    context.AddMetadata("authorization", absl::StrCat("Bearer ", options_.token));
  }
  if (deadline != absl::InfiniteFuture()) context.set_deadline(ToChrono(deadline));
  v1::WatchEventsRequest request;
  request.set_from_revision(from_revision);
  std::unique_ptr<grpc::ClientReader<v1::Event>> reader =
      stub_->WatchEvents(&context, request);
  v1::Event event;
  while (reader->Read(&event)) {
    if (!on_event(event)) {
      context.TryCancel();
      reader->Finish();
      return absl::OkStatus();
    }
  }
  grpc::Status status = reader->Finish();
  if (trailers != nullptr) {
    for (const auto& [k, v] : context.GetServerTrailingMetadata()) {
      (*trailers)[std::string(k.data(), k.size())] = std::string(v.data(), v.size());
    }
  }
  return FromGrpcStatus(status);
}

}  // namespace berth
