// DockerRuntime::LogsTail and ReadLogs (the streaming itself is EngineClient's).
#include <string>

#include "absl/strings/str_cat.h"
#include "executor/runtime/docker/docker_runtime.h"
#include "planner/base/status_macros.h"

namespace berth {

absl::StatusOr<std::string> DockerRuntime::LogsTail(absl::string_view job_id,
                                                    size_t max_bytes) {
  ASSIGN_OR_RETURN(ContainerObservation obs, InspectOwned(job_id, nullptr));
  return engine_->LogsTail(absl::StrCat("/containers/", obs.container_id, "/logs"),
                           max_bytes,
                           absl::StrCat("logs of container ", NameOf(job_id)));
}

absl::Status DockerRuntime::ReadLogs(absl::string_view job_id,
                                     const LogReadOptions& options,
                                     const LogSink& sink) {
  ASSIGN_OR_RETURN(ContainerObservation obs, InspectOwned(job_id, nullptr));
  return engine_->StreamLogs(
      absl::StrCat("/containers/", obs.container_id, "/logs"), options,
      options.follow ? absl::ZeroDuration() : options_.logs_read_timeout, sink,
      absl::StrCat("logs of container ", NameOf(job_id)));
}

}  // namespace berth
