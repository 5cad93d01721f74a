// LiveLogCapture: follows each running job's log while it runs, so that the
// kept record is head + marker + tail of what the job printed, not of what
// the engine's own rotation (Docker's json-file max-size x max-file) still
// holds when the job ends.
//
// Each followed attempt has one thread that reads the engine's log with
// follow (Runtime::ReadLogs, LogReadOptions::follow) into
// LogArchive::Begin's writer (the attempt's temp directory, capped like any
// capture; memory constant per job: the tail ring is a file). The
// reconciler calls Follow for every container it sees running (cheap: a map
// look-up, and a thread started for a new one; no I/O on the caller's
// thread), and Finish when it finalises a finished container, before the
// outcome is recorded and the container removed: Finish waits (at most
// drain_wait) for the follow to reach the end of the log (the engine ends a
// follow when the container stops, after its last byte) and commits the
// attempt (fsync + rename: LogArchive's durability).
//
// What is kept when:
//  - normal run: every byte the job printed, capped (head, marker, tail);
//  - the follow breaks while the job runs (engine restarted, connection
//    lost; a stream that ends while Inspect still says running, polled for
//    3 s, counts as broken): the next Follow starts the attempt over from what the engine
//    still holds (Begin replaces the temp directory: nothing is kept twice);
//    output the engine rotated away before that is lost and not counted;
//  - berthd restarts while the job runs: the same (the temp directory of the
//    killed berthd is replaced; the new follow reads what the engine holds);
//  - the engine still holds the whole log when the job ends (its oldest
//    message is not later than the follow's first: nothing was rotated
//    away): Finish keeps nothing of the follow (FAILED_PRECONDITION) and the
//    caller reads the log whole, exactly. Docker 20.10's follow can skip
//    output across a rotation when it lags behind a job printing fast (its
//    follow reopens the newest file; moby's json-file follow was rewritten
//    in 23.0), so a follow is kept only where it holds what the engine
//    lost: output past the engine's rotation;
//  - Finish finds no completed follow (none started, it failed, or it did not
//    reach the end within drain_wait): it says so (NOT_FOUND, the follow's
//    error, DEADLINE_EXCEEDED; any partial temp directory is discarded) and
//    the caller captures the whole log as the engine holds it
//    (LogArchive::Capture), as without live capture.
//
// Thread-safe. The archive and runtime must outlive it.
#ifndef BERTH_EXECUTOR_LOGS_LIVE_LOG_CAPTURE_H_
#define BERTH_EXECUTOR_LOGS_LIVE_LOG_CAPTURE_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "executor/logs/log_archive.h"
#include "executor/runtime/runtime.h"

namespace berth {

struct LiveLogCaptureOptions {
  // How long Finish waits for a follow to reach the end of a finished
  // container's log. The engine ends a follow within milliseconds of the
  // container's end unless the reader lags far behind; past it the caller
  // reads the whole log instead (what the engine still holds). Default 5 s.
  absl::Duration drain_wait = absl::Seconds(5);
  // Runs the follow threads in Linux's idle scheduling class (SCHED_IDLE):
  // they get a core only when nothing else of the machine wants it, so a
  // job printing flat out costs the pass (and the machine's other work)
  // what dockerd's side of its output costs, not the follow's. A follow that
  // then lags behind loses nothing of the record: the record is the engine's
  // retention read whole at the end (a follow that does not reach the end
  // within drain_wait is dropped for that read); it only adds what the
  // engine rotated away, which a starved follow may not have read either.
  // A follow leaves the idle class once Finish waits for it or it is
  // stopped, so that nothing waits on a thread the machine starves.
  bool idle_class = false;
};

// True if this process may move a thread back out of the idle scheduling
// class (root, or CAP_SYS_NICE): an unprivileged process can put a thread
// in it but not take it out, and then a follow awaited at its job's end
// would stay starved. berthd sets idle_class only then.
bool CanLeaveIdleClass();

class LiveLogCapture {
 public:
  LiveLogCapture(LogArchive& archive, Runtime& runtime, LiveLogCaptureOptions options = {});
  // Stops every follow and waits for its thread (each notices within about a
  // second); uncommitted attempts leave nothing behind.
  ~LiveLogCapture();

  LiveLogCapture(const LiveLogCapture&) = delete;
  LiveLogCapture& operator=(const LiveLogCapture&) = delete;

  // Starts following attempt `attempt` of `job_id` on its own thread, unless
  // it is followed already or was kept before (LogArchive::Has). A follow of
  // another attempt of the job is abandoned; a follow that ended with an
  // error is started over. Never waits for I/O. REQUIRES: attempt >= 1.
  void Follow(const std::string& job_id, int attempt);

  // The container of this attempt has finished: waits (at most drain_wait)
  // for its follow to end, then commits the attempt into the archive.
  // OK: kept (durable). NOT_FOUND: not followed. ALREADY_EXISTS: kept
  // before. DEADLINE_EXCEEDED: the follow did not reach the end in time
  // (abandoned). FAILED_PRECONDITION: the engine still holds everything the
  // follow read (nothing rotated away), so the exact whole read is better.
  // Otherwise the follow's or the commit's error. Whenever it is not OK
  // nothing of the follow is kept: the caller may Capture.
  [[nodiscard]] absl::Status Finish(const std::string& job_id, int attempt);

  // Abandons the follows for which keep(job id, attempt) is false (their
  // jobs no longer run). Returns without waiting for their threads.
  void Retain(const std::function<bool(const std::string& job_id, int attempt)>& keep);

  // Follows not yet finished or abandoned (for tests and metrics).
  int following() const;

 private:
  struct Entry;
  void Run(Entry* e);
  // With idle_class: puts e's thread back in the normal scheduling class,
  // for good (it is awaited, stopped or ending).
  void Normal(Entry& e);
  // True if the engine's oldest held message of the job is not later than
  // `first` (the follow's first): it lost nothing the follow read. False if
  // nothing was followed, the runtime gives no times, or it cannot answer.
  bool EngineHoldsAllFollowed(const std::string& job_id, absl::Time first);
  // Moves `e` to the retired list with its stop flag set.
  void RetireLocked(std::unique_ptr<Entry> e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Joins retired threads that have ended.
  void ReapLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Constant after construction.
  LogArchive& archive_;
  Runtime& runtime_;
  const LiveLogCaptureOptions options_;

  mutable absl::Mutex mu_;
  // Job id -> its followed attempt.
  std::map<std::string, std::unique_ptr<Entry>> entries_ ABSL_GUARDED_BY(mu_);
  // Abandoned follows whose threads may still run.
  std::vector<std::unique_ptr<Entry>> retired_ ABSL_GUARDED_BY(mu_);
};

}  // namespace berth

#endif  // BERTH_EXECUTOR_LOGS_LIVE_LOG_CAPTURE_H_
