// StartRetries: the reconciler's per-job bookkeeping of failed container
// starts, so that no job holds a worker slot for ever while nothing can run
// it.
//
// A start error is one of three kinds (Runtime::Start, ClassifyStartError):
//   permanent   (the spec is refused: NOT_FOUND image, INVALID_ARGUMENT,
//               FAILED_PRECONDITION incl. Docker's OCI refusals, ...): the
//               job fails START_FAILED at once with the engine's reason; it
//               never comes here;
//   unreachable (UNAVAILABLE, DEADLINE_EXCEEDED: the engine is down or
//               hung): retried with backoff and never counted -- an outage
//               never fails a job by itself;
//   other       (INTERNAL, an unexplained 500, ...): retried with backoff at
//               most `max_attempts` times in all, then START_FAILED naming
//               the attempts and the last error.
// Backoff: the first retry is at the next pass; retry n >= 2 waits
// min(max_backoff, initial_backoff * 2^(n-2)). The bookkeeping is in memory:
// a berthd restart starts counting again (still bounded per process).
//
// Thread-safe.
#ifndef BERTH_EXECUTOR_RECONCILE_START_RETRIES_H_
#define BERTH_EXECUTOR_RECONCILE_START_RETRIES_H_

#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace berth {

struct StartRetryOptions {
  // Attempts (the first included) before an "other" error fails the job.
  int max_attempts = 6;
  absl::Duration initial_backoff = absl::Seconds(5);
  absl::Duration max_backoff = absl::Seconds(60);
};

class StartRetries {
 public:
  explicit StartRetries(StartRetryOptions options) : options_(options) {}

  // False while the job waits out its backoff.
  bool Due(const std::string& job_id, absl::Time now) const;

  // Records a transient start error (REQUIRES: not permanent). Returns the
  // message to fail the job with when it has used its attempts, or "" to
  // retry later.
  std::string Failed(const std::string& job_id, const absl::Status& error, absl::Time now);

  // The job started, failed or left ADMITTED: forget it.
  void Forget(const std::string& job_id);

  // Jobs being retried (for tests and metrics).
  size_t size() const;

 private:
  struct Entry {
    int counted = 0;  // failures that count towards max_attempts
    int failures = 0;
    absl::Time first_failure;
    absl::Time next_attempt;
  };
  const StartRetryOptions options_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Entry> jobs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace berth

#endif  // BERTH_EXECUTOR_RECONCILE_START_RETRIES_H_
