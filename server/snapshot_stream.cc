#include "server/snapshot_stream.h"

#include "absl/strings/str_cat.h"
#include "berth/v1/executor.pb.h"
#include "grpcpp/support/proto_buffer_reader.h"
#include "grpcpp/support/sync_stream.h"
#include "planner/base/units.h"

namespace berth {

absl::StatusOr<ReceivedSnapshot> ReadSnapshotStream(
    grpc::ServerContext* context, grpc::ServerReader<grpc::ByteBuffer>* reader,
    uint64_t max_jobs, size_t max_message_bytes, SpecFilter* filter) {
  SnapshotAssembler assembler(max_jobs, filter);
  grpc::ByteBuffer buffer;
  v1::SyncSnapshotRequest message;
  uint64_t index = 0;
  while (reader->Read(&buffer)) {
    ++index;
    const size_t size = buffer.Length();
    if (size > max_message_bytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "message ", index, " of the stream is ", FormatBytes(static_cast<int64_t>(size)),
          "; the maximum is ", FormatBytes(static_cast<int64_t>(max_message_bytes), Rounding::kDown),
          " (berthd --max_snapshot_message_bytes): split the jobs into smaller batches"));
    }
    message.Clear();
    bool parsed = false;
    {
      grpc::ProtoBufferReader bytes(&buffer);
      parsed = message.ParseFromZeroCopyStream(&bytes);
    }
    buffer.Clear();
    if (!parsed) {
      return absl::InvalidArgumentError(absl::StrCat(
          "message ", index, " of the stream is not a valid berth.v1.SyncSnapshotRequest "
          "(malformed protobuf, or a string field that is not valid UTF-8); nothing was "
          "applied"));
    }
    absl::Status added = assembler.Add(message);
    if (!added.ok()) return added;
  }
  if (context->IsCancelled()) {
    return absl::AbortedError(
        "the snapshot stream broke before its end; nothing was applied");
  }
  return assembler.Finish();
}

}  // namespace berth
