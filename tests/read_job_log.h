// ReadJobLog through a real client, collected for assertions: the two
// streams apart, which attempts the chunks came from and which ended.
#ifndef BERTH_TESTS_READ_JOB_LOG_H_
#define BERTH_TESTS_READ_JOB_LOG_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "tests/berthd_process.h"

namespace berth {

struct JobLogRead {
  std::string out, err;
  std::vector<int> attempts;  // attempt of each chunk, in order (deduplicated runs)
  std::vector<int> ended;     // attempts whose end was marked
  // The cut each stream's last chunk reported (JobLogChunk.cut), of the
  // last attempt that reported one.
  v1::LogCut out_cut, err_cut;
  absl::Status status;        // the stream's own end
};

// Reads `job`'s log (attempt 0: every attempt) until the stream ends or
// `timeout` passes (then status is DEADLINE_EXCEEDED).
JobLogRead ReadJobLog(BerthClient& client, const std::string& job, int attempt = 0,
                      bool follow = false, absl::Duration timeout = absl::Seconds(60));

}  // namespace berth

#endif  // BERTH_TESTS_READ_JOB_LOG_H_
