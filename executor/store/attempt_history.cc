#include "executor/store/attempt_history.h"

#include "executor/store/store_util.h"

namespace berth {

void AppendEndedAttempt(const TransitionRequest& r, absl::Time ended, berth::v1::Job& job) {
  berth::v1::Attempt& a = *job.add_attempts();
  a.set_number(job.attempt() > 0 ? job.attempt() : job.requeue_count() + 1);
  a.set_outcome(r.new_state);
  if (r.new_state == berth::v1::JOB_STATE_FAILED) {
    a.set_failure_cause(r.failure_cause.value_or(job.failure_cause()));
  }
  if (r.new_state == berth::v1::JOB_STATE_QUEUED) {
    a.set_requeue_cause(r.requeue_cause.value_or(berth::v1::REQUEUE_CAUSE_UNSPECIFIED));
  }
  if (r.exit_code) {
    a.set_exit_code(*r.exit_code);
    a.set_has_exit_code(true);
  }
  a.set_message(r.message.value_or(""));
  if (job.has_admitted_at()) *a.mutable_admitted_at() = job.admitted_at();
  if (job.has_started_at()) *a.mutable_started_at() = job.started_at();
  *a.mutable_finished_at() = ToProtoTime(ended);
  a.set_node(job.node());
  a.set_container_id(r.container_id.value_or(job.container_id()));
  if (r.observed) *a.mutable_observed() = *r.observed;
  if (r.stdout_log_bytes || r.stderr_log_bytes) {
    a.set_log_kept(true);
    a.set_stdout_log_bytes(r.stdout_log_bytes.value_or(0));
    a.set_stderr_log_bytes(r.stderr_log_bytes.value_or(0));
    if (r.stdout_log_cut) *a.mutable_stdout_cut() = *r.stdout_log_cut;
    if (r.stderr_log_cut) *a.mutable_stderr_cut() = *r.stderr_log_cut;
  }
  const int excess = job.attempts_size() - kMaxKeptAttempts;
  if (excess > 0) job.mutable_attempts()->DeleteSubrange(0, excess);
}

}  // namespace berth
