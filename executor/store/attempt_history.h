// A job's attempt history (Job.attempts): the record of each ended run,
// appended by StoreCore::Transition when a job leaves ADMITTED/RUNNING.
#ifndef BERTH_EXECUTOR_STORE_ATTEMPT_HISTORY_H_
#define BERTH_EXECUTOR_STORE_ATTEMPT_HISTORY_H_

#include "absl/time/time.h"
#include "executor/store/store.h"
#include "berth/v1/job.pb.h"

namespace berth {

// The attempt `job` still describes (its admitted/started times, node,
// container) ends at `ended` (the engine's exit time, else now) with `r`:
// appended to job.attempts with r's outcome, exit, cause, message, usage and
// log sizes; the oldest entries are dropped beyond kMaxKeptAttempts. Call before the transition clears the run's
// fields. Not thread-safe on `job` (a copy being updated).
void AppendEndedAttempt(const TransitionRequest& r, absl::Time ended, berth::v1::Job& job);

}  // namespace berth

#endif  // BERTH_EXECUTOR_STORE_ATTEMPT_HISTORY_H_
