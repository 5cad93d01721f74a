// CappedLogWriter: writes one output stream of one attempt to a file,
// keeping at most a cap: when more arrives, the head (the first half of the
// cap) and the tail (the last half) are kept and an explicit marker line
// between them says how many bytes were cut:
//
//   [berth: 1234567 bytes cut here; 9876543 bytes in all]
//
// The head goes to the file as it arrives; the tail is held in a ring of
// cap/2 bytes kept in an unlinked file beside it (created once the head is
// full: no name is left behind, whatever happens to the process) and copied
// after the marker by Finish. Appends are gathered in a 64 KiB buffer and
// written in blocks (a follow hands over one line at a time: a system call
// per line cost a follow of a job printing flat out more CPU than the pass
// it ran beside); what is buffered reaches the files by Finish, before the
// fsync. Memory:
// constant (the buffer, and a 1 MiB copy buffer during Finish), so a writer
// may stay open for a whole running job (live capture,
// executor/logs/live_log_capture.h).
//
// Not thread-safe.
#ifndef BERTH_EXECUTOR_LOGS_CAPPED_LOG_WRITER_H_
#define BERTH_EXECUTOR_LOGS_CAPPED_LOG_WRITER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace berth {

// What a finished stream file holds of what was appended to it.
struct StreamCut {
  int64_t total_bytes = 0;    // appended in all
  int64_t dropped_bytes = 0;  // cut from the middle; 0: all of it is kept
  int64_t head_bytes = 0;     // kept before the marker (all of it if none)
  int64_t tail_bytes = 0;     // kept after the marker (0 if none)
};

class CappedLogWriter {
 public:
  // Appends smaller than this are gathered before they are written.
  static constexpr int64_t kDefaultBufferBytes = 64 << 10;

  // Creates (truncates) `path` with mode 0640. `cap_bytes` >= 2;
  // `buffer_bytes` >= 0 (0: every Append is written through).
  // INVALID_ARGUMENT for a bad cap or buffer; INTERNAL if the file cannot be
  // created.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<CappedLogWriter>> Create(
      const std::string& path, int64_t cap_bytes, int64_t buffer_bytes = kDefaultBufferBytes);
  ~CappedLogWriter();

  CappedLogWriter(const CappedLogWriter&) = delete;
  CappedLogWriter& operator=(const CappedLogWriter&) = delete;

  // Appends `data` (head to the file, the rest to the tail ring; buffered).
  // RESOURCE_EXHAUSTED / INTERNAL if the file cannot be written (the error
  // of a buffered write may come with a later Append, or with Finish).
  [[nodiscard]] absl::Status Append(absl::string_view data);

  // Writes the marker (if anything was cut) and the tail, fsyncs and closes.
  // Call once; after it only the counters may be read.
  [[nodiscard]] absl::Status Finish();

  // Bytes handed to Append in all, and bytes cut (0 if none).
  int64_t total_bytes() const { return total_ + static_cast<int64_t>(pending_.size()); }
  int64_t cut_bytes() const;

  // The marker line written between head and tail (exposed for tests and
  // for readers that look for it).
  static std::string MarkerLine(int64_t cut, int64_t total);

  // What the finished file at `path` holds, from its size and its marker
  // line (found where the cap that wrote it put it, whatever that cap was:
  // the marker's own counts say it). A file without a marker there is whole
  // (its size is what was appended). A missing file reads as empty.
  static StreamCut ReadCut(const std::string& path);

 private:
  CappedLogWriter(std::string path, int fd, int64_t cap_bytes, int64_t buffer_bytes);
  // Writes `data` through: head to the file, the rest to the ring.
  absl::Status Write(absl::string_view data);
  absl::Status WriteAll(absl::string_view data);
  absl::Status PwriteRing(absl::string_view data, int64_t at);
  absl::Status CopyRing(int64_t from, int64_t n);

  const std::string path_;
  int fd_;
  const int64_t head_cap_;
  const int64_t tail_cap_;
  const size_t buffer_bytes_;
  int64_t head_written_ = 0;
  int64_t total_ = 0;
  bool last_head_newline_ = true;
  int ring_fd_ = -1;        // the unlinked tail ring, once used
  int64_t ring_pos_ = 0;    // next write position
  int64_t ring_fill_ = 0;   // bytes held (<= tail_cap_)
  std::string pending_;     // appended, not yet written (< buffer_bytes_)
};

}  // namespace berth

#endif  // BERTH_EXECUTOR_LOGS_CAPPED_LOG_WRITER_H_
