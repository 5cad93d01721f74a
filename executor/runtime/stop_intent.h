// StopIntent: why Berth itself asked a job's container to stop.
//
// Persisted with the job by the Store before the Runtime is asked to stop the
// container, and passed to ClassifyExit afterwards: exit code 137 alone cannot
// tell Berth's own kill from the OOM killer, the recorded intent can, even
// across a restart. Shared by store.h and runtime.h so both speak one type.
#ifndef BERTH_EXECUTOR_RUNTIME_STOP_INTENT_H_
#define BERTH_EXECUTOR_RUNTIME_STOP_INTENT_H_

namespace berth {

enum class StopIntent {
  kNone = 0,     // Berth did not ask the container to stop.
  kCancel = 1,   // withdrawn by the job-server: finalise as CANCELLED
  kTimeout = 2,  // ran past max_duration: finalise as FAILED / TIMED_OUT
  kRequeue = 3,  // drain / pool maintenance: finalise as QUEUED again
};

}  // namespace berth

#endif  // BERTH_EXECUTOR_RUNTIME_STOP_INTENT_H_
