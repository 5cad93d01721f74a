// LogRepeatFilter: drops the messages a Docker log follow hands over twice.
//
// Docker 20.10's json-file follow re-reads part of a rotated file when it
// moves to the next one (seen: 31,892 bytes repeated in 2.1 MB printed
// through 1 MB x 2 files), so a follow requests timestamps (?timestamps=1:
// every message framed as "<RFC3339Nano UTC> <text>") and this filter keeps,
// per stream, only messages later than the last one kept, with the prefix
// removed. Messages of one timestamp are all kept while they continue one
// line (Docker splits a line over 16 KiB into pieces that share the first
// piece's timestamp, each but the last without its newline); after a repeat
// began (an earlier timestamp came) as many of the last timestamp's messages
// as were kept are dropped again. Residual: a repeat that starts exactly at
// the first piece of a split line still being continued keeps those pieces
// twice. A frame without a timestamp prefix is passed on unchanged.
//
// Not thread-safe (one per follow).
#ifndef BERTH_EXECUTOR_RUNTIME_DOCKER_LOG_REPEAT_FILTER_H_
#define BERTH_EXECUTOR_RUNTIME_DOCKER_LOG_REPEAT_FILTER_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace berth {

// Splits a frame read with ?timestamps=1 ("<RFC3339Nano UTC> <text>") into
// the engine's time and the text; false (outputs untouched) if `frame` does
// not start with such a prefix.
bool ParseDockerLogStamp(absl::string_view frame, absl::Time* time, absl::string_view* text);

class LogRepeatFilter {
 public:
  // One whole frame of stream 1 (stdout) or 2 (stderr). Returns the text to
  // keep (a view into `frame`), or false when the message is a repeat.
  bool Keep(int stream, absl::string_view frame, absl::string_view* text);

 private:
  struct StreamState {
    bool any = false;
    std::string seconds;  // "YYYY-MM-DDTHH:MM:SS" of the last kept message
    int64_t nanos = 0;
    int kept_at_last = 0;  // messages kept with that timestamp
    bool last_ended_line = true;
    bool repeating = false;  // an earlier timestamp came since
    int repeated_at_last = 0;
  };
  StreamState streams_[2];
};

}  // namespace berth

#endif  // BERTH_EXECUTOR_RUNTIME_DOCKER_LOG_REPEAT_FILTER_H_
