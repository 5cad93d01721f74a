// Starter: runs container starts on its own threads, so that a reconcile
// pass never waits for the engine to create and start a container (issue
// 15): exits and snapshots that arrive meanwhile are planned by the next
// pass at once, not batched behind the slowest start.
//
// Keyed by job id: a job is never being started twice at once (Submit of a
// job in flight is refused), at most `parallelism` starts run at once, the
// rest wait in submission order. A pass must not act on a job while its start
// is in flight, nor on one whose start finished after the pass took its
// container list (the list would not show the new container): Busy() says
// which. Durability is the caller's: a job is submitted only after its
// ADMITTED decision is persisted, so a start dropped by a shutdown is done by
// the next process's recovery pass.
//
// Thread-safe. The destructor waits for running starts and drops queued ones.
#ifndef BERTH_EXECUTOR_RECONCILE_STARTER_H_
#define BERTH_EXECUTOR_RECONCILE_STARTER_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"

namespace berth {

class Starter {
 public:
  // At most `parallelism` (>= 1; less is taken as 1) starts run at once.
  explicit Starter(int parallelism);
  ~Starter();

  Starter(const Starter&) = delete;
  Starter& operator=(const Starter&) = delete;

  // Called after every finished start (any outcome) on the start's thread,
  // outside the Starter's lock, e.g. to trigger a pass. May be empty. Returns
  // when no call of the previous callback is running any more (so
  // set_on_done(nullptr) detaches it safely). REQUIRES: not called from the
  // callback.
  void set_on_done(std::function<void()> on_done);

  // Queues `start` for `job_id`. Returns false (and drops it) if that job's
  // start is queued or running.
  bool Submit(const std::string& job_id, std::function<void()> start);

  // A sequence number of finished starts, for Busy(): take it before the
  // container list.
  uint64_t Mark() const;

  // The job's start is queued or running, or finished after `mark`.
  bool Busy(const std::string& job_id, uint64_t mark) const;

  // Forgets finished starts at or before `mark` (no pass will ask about
  // them again).
  void Prune(uint64_t mark);

  // Blocks until no start is queued or running and no on_done call runs.
  void AwaitIdle() const;

  // Starts queued or running.
  size_t in_flight() const;

  // Drops queued starts and refuses new ones; running ones go on (the
  // destructor waits for them). Idempotent.
  void Stop();

 private:
  struct Task {
    std::string job_id;
    std::function<void()> start;
  };
  void Work();

  mutable absl::Mutex mu_;
  std::deque<Task> queue_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> in_flight_ ABSL_GUARDED_BY(mu_);
  // Job -> the sequence number its start finished with.
  absl::flat_hash_map<std::string, uint64_t> finished_ ABSL_GUARDED_BY(mu_);
  uint64_t sequence_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::function<void()> on_done_ ABSL_GUARDED_BY(mu_);
  int callbacks_running_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::thread> threads_;
};

}  // namespace berth

#endif  // BERTH_EXECUTOR_RECONCILE_STARTER_H_
