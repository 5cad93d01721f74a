// Usage history: the last finished runs of each (workspace, action), with
// what each run asked for and what it used. Kept by the Store in
// the same atomic write as the run's final transition, so a run is counted
// once, and bounded: at most runs_per_key runs per key (the newest) and at
// most max_keys keys (the key whose last run is oldest goes first).
#ifndef BERTH_EXECUTOR_STORE_USAGE_HISTORY_H_
#define BERTH_EXECUTOR_STORE_USAGE_HISTORY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "berth/v1/job.pb.h"

namespace berth {

// One finished run.
struct UsageRun {
  // Observed (Job.observed): peak memory in bytes and whether it is the
  // kernel's high-water mark, CPU seconds, wall time.
  int64_t peak_memory_bytes = 0;
  bool peak_exact = false;
  double cpu_seconds = 0;
  absl::Duration run_time = absl::ZeroDuration();
  absl::Time finished = absl::UnixEpoch();
  // How it ended: SUCCEEDED, or FAILED with a cause (OOM_KILLED: the peak is
  // the limit it hit, not what it needed).
  berth::v1::JobState state = berth::v1::JOB_STATE_SUCCEEDED;
  berth::v1::FailureCause failure_cause = berth::v1::FAILURE_CAUSE_UNSPECIFIED;
  // What the job asked for (its reservation).
  int64_t asked_memory_bytes = 0;
  int64_t asked_cpu_millis = 0;
  // Its duration estimate (JobSpec.expected_duration); zero if it had none
  // (runs recorded before estimates were kept have none either).
  absl::Duration asked_duration = absl::ZeroDuration();
};

struct UsageHistory {
  std::string workspace;
  std::string action;
  std::vector<UsageRun> runs;  // oldest first
};

struct UsageHistoryOptions {
  // Runs kept per (workspace, action): the newest. Default 20.
  int runs_per_key = 20;
  // Keys kept; adding one more drops the key whose last run is oldest.
  // Default 10,000 (20 runs x 80 bytes each: ~16 MB in memory at most).
  int max_keys = 10'000;
};

// The key of a (workspace, action): "<workspace>\0<action>".
std::string UsageKey(const std::string& workspace, const std::string& action);

// Whether a final transition's run goes into the history: it SUCCEEDED or
// FAILED (not cancelled, requeued or never started) and its memory was
// sampled at least once, or it FAILED with a known peak (an OOM-killed run's
// peak is its limit, executor/usage/usage_tracker.h FloorPeakAtOomLimit).
bool CountsAsRun(berth::v1::JobState new_state, const berth::v1::ResourceUsage& u);

// Appends `run`, keeping the newest `runs_per_key` (>= 1).
void AppendRun(UsageHistory* history, UsageRun run, int runs_per_key);

}  // namespace berth

#endif  // BERTH_EXECUTOR_STORE_USAGE_HISTORY_H_
