// DockerRuntime::LogsTail and the log stream demultiplexer.
#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "executor/runtime/docker/docker_runtime.h"
#include "planner/base/status_macros.h"

namespace berth {

absl::StatusOr<std::string> DockerRuntime::LogsTail(absl::string_view job_id,
                                                    size_t max_bytes) {
  ASSIGN_OR_RETURN(ContainerObservation obs, InspectOwned(job_id, nullptr));
  HttpRequest req;
  req.path = absl::StrCat("/containers/", obs.container_id,
                          "/logs?stdout=1&stderr=1&tail=",
                          options_.logs_tail_lines);
  const std::string ctx = absl::StrCat("logs of container ", NameOf(job_id));
  req.timeout = options_.call_timeout;
  absl::Status last;
  for (int attempt = 1; attempt <= options_.max_attempts; ++attempt) {
    if (attempt > 1) {
      clock_->SleepFor(Backoff(attempt - 1, options_.backoff_initial,
                               options_.backoff_max));
    }
    DockerLogDemuxer demux;
    std::string tail;
    const std::function<bool(absl::string_view)> sink =
        [&](absl::string_view chunk) {
          demux.Feed(chunk, &tail);
          // Keep at most 2*max_bytes buffered; trim to max_bytes at the end.
          if (tail.size() > 2 * max_bytes + 4096) {
            tail.erase(0, tail.size() - max_bytes);
          }
          return true;
        };
    std::string error_body;
    absl::StatusOr<long> status = http_->Stream(req, sink, nullptr, &error_body);
    if (status.ok() && *status < 500) {
      Count("logs", *status >= 400);
      RETURN_IF_ERROR(DockerErrorToStatus(0, "", *status, error_body, ctx));
      if (tail.size() > max_bytes) tail.erase(0, tail.size() - max_bytes);
      return tail;
    }
    Count("logs", true);
    last = status.ok() ? DockerErrorToStatus(0, "", *status, error_body, ctx)
                       : absl::Status(status.status().code(),
                                      absl::StrCat(ctx, ": ",
                                                   status.status().message()));
    if (!IsRetryableDockerError(last)) break;
  }
  return last;
}

void DockerLogDemuxer::Feed(absl::string_view chunk, std::string* out) {
  while (!chunk.empty()) {
    if (remaining_ > 0) {
      const size_t n = std::min<size_t>(remaining_, chunk.size());
      out->append(chunk.data(), n);
      chunk.remove_prefix(n);
      remaining_ -= static_cast<uint32_t>(n);
      continue;
    }
    const size_t need = 8 - header_.size();
    const size_t n = std::min(need, chunk.size());
    header_.append(chunk.data(), n);
    chunk.remove_prefix(n);
    if (header_.size() == 8) {
      const auto* h = reinterpret_cast<const unsigned char*>(header_.data());
      remaining_ = (uint32_t{h[4]} << 24) | (uint32_t{h[5]} << 16) |
                   (uint32_t{h[6]} << 8) | uint32_t{h[7]};
      header_.clear();
    }
  }
}

}  // namespace berth
