// ExecutorService::Call, shared by executor_service.cc and
// executor_service_watch.cc. Internal to //server/api:executor_service.
#ifndef BERTH_SERVER_API_EXECUTOR_SERVICE_CALL_H_
#define BERTH_SERVER_API_EXECUTOR_SERVICE_CALL_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "planner/base/log.h"
#include "server/api/executor_service.h"

namespace berth {

// One RPC: authorises on construction, records the outcome on Finish().
class ExecutorService::Call {
 public:
  Call(ExecutorService& service, grpc::ServerContextBase* context, const char* method)
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

// What every RPC answers until the core is attached.
inline absl::Status RecoveringError() {
  return absl::UnavailableError(
      "berthd is recovering (loading its store); retry, or watch the health of "
      "berth.v1.Executor");
}

}  // namespace berth

#endif  // BERTH_SERVER_API_EXECUTOR_SERVICE_CALL_H_
