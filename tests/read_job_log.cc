#include "tests/read_job_log.h"

#include <chrono>

namespace berth {

JobLogRead ReadJobLog(BerthClient& client, const std::string& job, int attempt, bool follow,
                      absl::Duration timeout) {
  JobLogRead log;
  grpc::ClientContext context;
  client.Prepare(&context);
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::milliseconds(absl::ToInt64Milliseconds(timeout)));
  v1::ReadJobLogRequest request;
  request.set_job_id(job);
  request.set_attempt(attempt);
  request.set_follow(follow);
  auto reader = client.stub().ReadJobLog(&context, request);
  v1::JobLogChunk chunk;
  while (reader->Read(&chunk)) {
    if (log.attempts.empty() || log.attempts.back() != chunk.attempt()) {
      log.attempts.push_back(chunk.attempt());
    }
    if (chunk.attempt_end()) log.ended.push_back(chunk.attempt());
    if (chunk.has_cut()) {
      (chunk.stream() == v1::LOG_STREAM_KIND_STDERR ? log.err_cut : log.out_cut) = chunk.cut();
    }
    (chunk.stream() == v1::LOG_STREAM_KIND_STDERR ? log.err : log.out) += chunk.data();
  }
  log.status = FromGrpcStatus(reader->Finish());
  return log;
}

}  // namespace berth
