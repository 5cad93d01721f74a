// Reading a SyncSnapshot / DryRun request stream from gRPC as raw bytes, so
// that berthd -- not gRPC's deserializer -- decides what a bad message is
// answered with (a garbage or non-UTF-8 message used to look like
// a truncated stream, an oversize batch got gRPC's RESOURCE_EXHAUSTED).
//
// Every message is parsed here as a berth.v1.SyncSnapshotRequest and fed to
// a SnapshotAssembler. Errors (nothing is applied; all INVALID_ARGUMENT
// unless said otherwise):
//   - message N larger than max_message_bytes (berthd
//     --max_snapshot_message_bytes, default 16 MiB): names the size and the
//     limit ("split the batch"); messages above gRPC's own receive limit
//     (4x that, at least 64 MiB, in berthd) are refused by gRPC before berthd
//     sees them, with RESOURCE_EXHAUSTED;
//   - a header announcing more than `max_jobs` (berthd --max_snapshot_jobs):
//     RESOURCE_EXHAUSTED, answered at once: no batch is read or kept;
//   - message N not a valid SyncSnapshotRequest (malformed protobuf, or a
//     string field that is not valid UTF-8);
//   - the assembler's shape errors (server/ingest/snapshot_assembler.h);
//   - the client cancelling mid-stream: ABORTED.
// Thread-compatible: one call per stream.
#ifndef BERTH_SERVER_INGEST_SNAPSHOT_STREAM_H_
#define BERTH_SERVER_INGEST_SNAPSHOT_STREAM_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/support/sync_stream.h"
#include "server/ingest/snapshot_assembler.h"

namespace berth {

inline constexpr size_t kMaxSnapshotMessageBytes = size_t{16} << 20;

// `filter` (may be null) is handed to the SnapshotAssembler.
[[nodiscard]] absl::StatusOr<ReceivedSnapshot> ReadSnapshotStream(
    grpc::ServerContext* context, grpc::ServerReader<grpc::ByteBuffer>* reader,
    uint64_t max_jobs, size_t max_message_bytes = kMaxSnapshotMessageBytes,
    SpecFilter* filter = nullptr);

}  // namespace berth

#endif  // BERTH_SERVER_INGEST_SNAPSHOT_STREAM_H_
