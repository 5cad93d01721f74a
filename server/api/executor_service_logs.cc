// ExecutorService::ReadJobLog: a job's logs (executor/logs/job_log_reader.h)
// as a stream of JobLogChunk.
#include "absl/strings/str_cat.h"
#include "server/api/executor_service.h"
#include "server/api/executor_service_call.h"
#include "server/core/request_limits.h"

namespace berth {

void ExecutorService::AttachLogs(const JobLogReader& reader) { logs_ = &reader; }

grpc::Status ExecutorService::ReadJobLog(grpc::ServerContext* context,
                                         const v1::ReadJobLogRequest* request,
                                         grpc::ServerWriter<v1::JobLogChunk>* writer) {
  Call call(*this, context, "ReadJobLog");
  if (!call.authorised()) return call.Finish(absl::OkStatus(), false);
  // Bounded like GetJob's: the id would otherwise come back whole in the
  // NOT_FOUND message, past what a client accepts as metadata.
  if (absl::Status s = CheckLength("job_id", request->job_id(), kMaxNameBytes); !s.ok()) {
    return call.Finish(s, false);
  }
  const JobLogReader* reader = logs_.load();
  if (core_.load() == nullptr || reader == nullptr) {
    return call.Finish(RecoveringError(), false);
  }
  JobLogRequest r;
  r.job_id = request->job_id();
  r.attempt = request->attempt();
  switch (request->stream()) {
    case v1::LOG_STREAM_KIND_STDOUT: r.only = LogStream::kStdout; break;
    case v1::LOG_STREAM_KIND_STDERR: r.only = LogStream::kStderr; break;
    case v1::LOG_STREAM_KIND_UNSPECIFIED: break;
    default:
      return call.Finish(absl::InvalidArgumentError(
                             absl::StrCat("stream: unknown value ", request->stream())),
                         false);
  }
  r.stdout_offset = request->stdout_offset();
  r.stderr_offset = request->stderr_offset();
  r.follow = request->follow();
  absl::Status s = reader->Read(
      r,
      [&](const JobLogPiece& piece) {
        v1::JobLogChunk chunk;
        chunk.set_attempt(piece.attempt);
        chunk.set_stream(piece.stream == LogStream::kStderr ? v1::LOG_STREAM_KIND_STDERR
                                                            : v1::LOG_STREAM_KIND_STDOUT);
        chunk.set_offset(piece.offset);
        chunk.set_data(piece.data.data(), piece.data.size());
        chunk.set_attempt_end(piece.attempt_end);
        if (piece.cut.has_value()) *chunk.mutable_cut() = LogCutProto(*piece.cut);
        return writer->Write(chunk);
      },
      [&] { return context->IsCancelled() || shutting_down_.load(); });
  return call.Finish(s, !r.follow);
}

}  // namespace berth
