// A real run as berth-fidelity keeps it in its directory (--dir), so that
// --replay and --against compare it again without running it:
//   snapshot.json  the workload pushed (berth.v1.Snapshot)
//   real.json      {"t0": push time (Unix seconds), "jobs": {id: berth.v1.Job
//                  as `berthctl --json list` prints it}, "scale", "seed",
//                  "load_average"}
//   die.txt        one line per container exit: "<Docker's timeNano> <job id>"
//   metrics.txt    berthd's /metrics when the jobs had ended
//   berthd.log     berthd's stderr
// The format is the Python tool's: runs it kept replay here.
//
// Thread-compatible: free functions over their arguments.
#ifndef BERTH_TOOLS_FIDELITY_KEPT_RUN_H_
#define BERTH_TOOLS_FIDELITY_KEPT_RUN_H_

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "berth/v1/job.pb.h"

namespace berth::fidelity {

struct KeptRun {
  // When the snapshot was pushed, Unix seconds.
  double t0 = 0;
  // Every job at the end, by id.
  std::map<std::string, v1::Job> jobs;
  // The workload's --scale and --seed.
  double scale = 0.5;
  uint64_t seed = 1;
  // The host's 1-minute load average after the run; NaN if not recorded.
  double load_average = std::numeric_limits<double>::quiet_NaN();
  // Job id -> its container's first exit, Unix seconds (die.txt).
  std::map<std::string, double> died;
};

// Reads <dir>/real.json and <dir>/die.txt. A real.json without scale/seed
// keeps the values of `defaults`. NOT_FOUND if a file is missing;
// INVALID_ARGUMENT (naming the file) if one does not parse.
[[nodiscard]] absl::StatusOr<KeptRun> ReadKeptRun(const std::string& dir,
                                                 const KeptRun& defaults = {});

// Writes <dir>/real.json (everything but `died`).
[[nodiscard]] absl::Status WriteRealJson(const std::string& dir, const KeptRun& run);

// Writes <dir>/die.txt from (timeNano, job id) pairs, in the given order.
[[nodiscard]] absl::Status WriteDieFile(const std::string& dir,
                                        const std::vector<std::pair<int64_t, std::string>>& exits);

// Seconds since the Unix epoch of a proto timestamp.
double Seconds(const google::protobuf::Timestamp& t);

}  // namespace berth::fidelity

#endif  // BERTH_TOOLS_FIDELITY_KEPT_RUN_H_
