#include "tools/ctl/logs.h"

#include <limits>
#include <memory>

#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "planner/base/status_macros.h"
#include "tools/ctl/args.h"
#include "tools/ctl/format_attempts.h"
#include "tools/ctl/stop_on_signal.h"

namespace berth {
namespace ctl {

absl::Status RunLogs(CommandContext& ctx) {
  v1::ReadJobLogRequest request;
  request.set_job_id(ctx.args.positional.at(1));
  request.set_follow(ctx.args.Has("follow"));
  if (ctx.args.Has("attempt")) {
    ASSIGN_OR_RETURN(int64_t a, ParseInt("--attempt", ctx.args.Get("attempt"), 1,
                                         std::numeric_limits<int32_t>::max()));
    request.set_attempt(static_cast<int32_t>(a));
  }
  if (ctx.args.Has("stdout-only") && ctx.args.Has("stderr-only")) {
    return UsageError("berthctl logs: --stdout-only and --stderr-only exclude each other");
  }
  if (ctx.args.Has("stdout-only")) request.set_stream(v1::LOG_STREAM_KIND_STDOUT);
  if (ctx.args.Has("stderr-only")) request.set_stream(v1::LOG_STREAM_KIND_STDERR);
  ASSIGN_OR_RETURN(BerthClient* client, ctx.connect());
  grpc::ClientContext context;
  if (!ctx.token.empty()) context.AddMetadata("authorization", "Bearer " + ctx.token);
  StopOnSignal stop;
  stop.Attach(&context);
  std::unique_ptr<grpc::ClientReader<v1::JobLogChunk>> reader =
      client->stub().ReadJobLog(&context, request);
  v1::JobLogChunk chunk;
  int attempt = 0;
  while (reader->Read(&chunk)) {
    if (chunk.attempt() != attempt) {
      if (attempt != 0) *ctx.err << "berthctl: attempt " << chunk.attempt() << " follows\n";
      attempt = chunk.attempt();
    }
    std::ostream& to = chunk.stream() == v1::LOG_STREAM_KIND_STDERR ? *ctx.err : *ctx.out;
    to << chunk.data();
    if (chunk.cut().dropped_bytes() > 0) {
      // Said apart from the log itself (which holds the marker line too).
      to.flush();
      *ctx.err << "berthctl: attempt " << chunk.attempt() << " "
               << (chunk.stream() == v1::LOG_STREAM_KIND_STDERR ? "stderr" : "stdout")
               << " cut: " << FormatLogCut(chunk.cut()) << "\n";
    }
    if (request.follow()) to.flush();
  }
  grpc::Status status = reader->Finish();
  ctx.out->flush();
  if (stop.stopped()) return absl::OkStatus();
  return FromGrpcStatus(status);
}

}  // namespace ctl
}  // namespace berth
