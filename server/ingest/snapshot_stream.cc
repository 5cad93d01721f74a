#include "server/ingest/snapshot_stream.h"

#include <deque>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "berth/v1/executor.pb.h"
#include "grpcpp/support/proto_buffer_reader.h"
#include "grpcpp/support/sync_stream.h"
#include "planner/base/units.h"

namespace berth {
namespace {

// Messages in flight: one being assembled while the next is read and
// parsed (each is one batch, up to max_message_bytes parsed). They are
// reused, and with them their parsed objects.
constexpr size_t kMessagesInFlight = 2;

// Reads message `index` of the stream (already in `buffer`) into `message`.
absl::Status ParseMessage(uint64_t index, size_t max_message_bytes, grpc::ByteBuffer& buffer,
                          v1::SyncSnapshotRequest& message) {
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
  return absl::OkStatus();
}

// The messages after the header: the calling thread reads and parses them
// while a second thread feeds them, in order, to the assembler, so that
// reading and parsing a batch overlaps fingerprinting, filtering and
// indexing the one before. The outcome is the sequential one: an error of
// the assembler at message j wins over a read or parse error at a later
// message, which wins over the stream's end; after an assembler error at
// most one more message is read. One Run per object.
class PipelinedReader {
 public:
  PipelinedReader(SnapshotAssembler& assembler, size_t max_message_bytes)
      : assembler_(assembler), max_message_bytes_(max_message_bytes),
        messages_(kMessagesInFlight) {
    absl::MutexLock lock(&mu_);
    for (v1::SyncSnapshotRequest& m : messages_) free_.push_back(&m);
  }

  // Reads from `reader` until its end or the first error; `index` is the
  // number of messages read before. Returns the first error in stream order.
  absl::Status Run(grpc::ServerReader<grpc::ByteBuffer>* reader, uint64_t index) {
    std::thread assembling([this] { Assemble(); });
    absl::Status read_error;
    grpc::ByteBuffer buffer;
    while (true) {
      v1::SyncSnapshotRequest* message = nullptr;
      {
        absl::MutexLock lock(&mu_);
        mu_.Await(absl::Condition(this, &PipelinedReader::CanRead));
        if (!assemble_error_.ok()) break;
        message = free_.back();
        free_.pop_back();
      }
      if (!reader->Read(&buffer)) break;
      read_error = ParseMessage(++index, max_message_bytes_, buffer, *message);
      if (!read_error.ok()) break;
      absl::MutexLock lock(&mu_);
      ready_.push_back(message);
    }
    {
      absl::MutexLock lock(&mu_);
      read_done_ = true;
    }
    assembling.join();
    absl::MutexLock lock(&mu_);
    return assemble_error_.ok() ? read_error : assemble_error_;
  }

 private:
  // A message to read into is free, or reading is pointless.
  bool CanRead() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !free_.empty() || !assemble_error_.ok();
  }
  // A message is ready, or none will be.
  bool CanAssemble() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return !ready_.empty() || read_done_;
  }

  void Assemble() {
    while (true) {
      v1::SyncSnapshotRequest* message = nullptr;
      {
        absl::MutexLock lock(&mu_);
        mu_.Await(absl::Condition(this, &PipelinedReader::CanAssemble));
        if (ready_.empty()) return;  // read_done_: all messages assembled
        message = ready_.front();
        ready_.pop_front();
      }
      absl::Status added = assembler_.Add(*message);
      absl::MutexLock lock(&mu_);
      free_.push_back(message);
      if (!added.ok()) {
        assemble_error_ = std::move(added);
        return;
      }
    }
  }

  // Constant after construction. The assembler is used by the assembling
  // thread only while it runs; each message by one thread at a time (the
  // one that took it from free_ or ready_).
  SnapshotAssembler& assembler_;
  const size_t max_message_bytes_;
  std::vector<v1::SyncSnapshotRequest> messages_;  // never resized

  absl::Mutex mu_;
  // Messages to read into, and read ones in stream order.
  std::vector<v1::SyncSnapshotRequest*> free_ ABSL_GUARDED_BY(mu_);
  std::deque<v1::SyncSnapshotRequest*> ready_ ABSL_GUARDED_BY(mu_);
  bool read_done_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status assemble_error_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

absl::StatusOr<ReceivedSnapshot> ReadSnapshotStream(
    grpc::ServerContext* context, grpc::ServerReader<grpc::ByteBuffer>* reader,
    uint64_t max_jobs, size_t max_message_bytes, SpecFilter* filter) {
  SnapshotAssembler assembler(max_jobs, filter);
  // The first message (the header) is assembled before the next is read: a
  // refused header is answered at once, with no batch read.
  grpc::ByteBuffer buffer;
  if (reader->Read(&buffer)) {
    v1::SyncSnapshotRequest first;
    absl::Status s = ParseMessage(1, max_message_bytes, buffer, first);
    if (s.ok()) s = assembler.Add(first);
    if (!s.ok()) return s;
    PipelinedReader rest(assembler, max_message_bytes);
    s = rest.Run(reader, 1);
    if (!s.ok()) return s;
  }
  if (context->IsCancelled()) {
    return absl::AbortedError(
        "the snapshot stream broke before its end; nothing was applied");
  }
  return assembler.Finish();
}

}  // namespace berth
