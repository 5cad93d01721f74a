#include "executor/logs/live_log_capture.h"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace berth {

namespace {

// A follow that ended without an error: the container ended, unless the
// engine closed the stream for another reason (a dockerd restarted with
// live-restore ends it cleanly while the job runs on). Docker ends a
// follow just before it records the container stopped, so the state is
// polled for a short while. UNAVAILABLE if it still runs (the next Follow
// starts the attempt over).
template <typename E>
absl::Status AwaitEnded(Runtime& runtime, const E& e) {
  const absl::Time deadline = absl::Now() + absl::Seconds(3);
  while (true) {
    absl::StatusOr<ContainerObservation> obs = runtime.Inspect(e.job_id);
    if (!obs.ok()) {
      // Gone: it ended (NOT_FOUND); engine trouble: unknown, start over.
      return obs.status().code() == absl::StatusCode::kNotFound ? absl::OkStatus()
                                                                : obs.status();
    }
    if (IsFinished(obs->state)) return absl::OkStatus();
    if (absl::Now() >= deadline || e.stop.load()) {
      return absl::UnavailableError(absl::StrCat("job '", e.job_id, "' attempt ", e.attempt,
                                                 ": its log stream ended while it runs"));
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
}

}  // namespace

struct LiveLogCapture::Entry {
  std::string job_id;
  int attempt = 0;
  std::atomic<bool> stop{false};
  // Set by the thread as its last act, under mu_.
  bool done = false;
  absl::Status result;
  std::unique_ptr<AttemptLogWriter> writer;
  // The engine's time of the first message followed (written by the thread).
  absl::Time first_time = absl::InfiniteFuture();
  // The follow this one replaces (stop set): joined and destroyed by this
  // one's thread before it begins, so that two writers of one attempt never
  // live at once.
  std::unique_ptr<Entry> previous;
  std::thread thread;
  // The thread's id and whether it is back in the normal scheduling class
  // (idle_class: it leaves the idle class for good once anyone waits for
  // it or stops it, or it ends, so that no one waits on a starved thread).
  absl::Mutex class_mu;
  pid_t tid ABSL_GUARDED_BY(class_mu) = 0;
  bool normal ABSL_GUARDED_BY(class_mu) = false;
};

namespace {

void SetClass(pid_t tid, int policy) {
  // That thread only (a Linux thread id); a failure leaves it as it was.
  const sched_param param{};
  (void)sched_setscheduler(tid, policy, &param);
}

}  // namespace

bool CanLeaveIdleClass() {
  // On a thread of its own, which ends either way.
  bool left = false;
  std::thread probe([&left] {
    const pid_t self = static_cast<pid_t>(syscall(SYS_gettid));
    const sched_param param{};
    left = sched_setscheduler(self, SCHED_IDLE, &param) == 0 &&
           sched_setscheduler(self, SCHED_OTHER, &param) == 0;
  });
  probe.join();
  return left;
}

void LiveLogCapture::Normal(Entry& e) {
  if (!options_.idle_class) return;
  absl::MutexLock lock(&e.class_mu);
  if (e.normal) return;
  e.normal = true;
  // Not ended: it sets `normal` itself before it ends, so the id is its own.
  if (e.tid != 0) SetClass(e.tid, SCHED_OTHER);
}

LiveLogCapture::LiveLogCapture(LogArchive& archive, Runtime& runtime,
                               LiveLogCaptureOptions options)
    : archive_(archive), runtime_(runtime), options_(options) {}

LiveLogCapture::~LiveLogCapture() {
  std::vector<std::unique_ptr<Entry>> all;
  {
    absl::MutexLock lock(&mu_);
    for (auto& [id, e] : entries_) all.push_back(std::move(e));
    entries_.clear();
    for (auto& e : retired_) all.push_back(std::move(e));
    retired_.clear();
  }
  for (auto& e : all) {
    e->stop = true;
    Normal(*e);
  }
  for (auto& e : all) {
    if (e->thread.joinable()) e->thread.join();
  }
  // The writers go with the entries: uncommitted temp directories removed.
}

void LiveLogCapture::Run(Entry* e) {
  if (options_.idle_class) {
    absl::MutexLock lock(&e->class_mu);
    e->tid = static_cast<pid_t>(syscall(SYS_gettid));
    if (!e->normal) SetClass(e->tid, SCHED_IDLE);
  }
  if (e->previous != nullptr) {
    e->previous->thread.join();
    e->previous.reset();  // its temp directory goes before this one begins
  }
  absl::StatusOr<std::unique_ptr<AttemptLogWriter>> writer = archive_.Begin(e->job_id, e->attempt);
  absl::Status result = writer.status();
  if (writer.ok()) {
    absl::Status write_error;
    LogReadOptions ro;
    ro.follow = true;
    ro.should_stop = [e] { return e->stop.load(); };
    ro.first_message_time = &e->first_time;
    result = runtime_.ReadLogs(e->job_id, ro, [&](LogStream stream, absl::string_view data) {
      write_error = (*writer)->Append(stream, data);
      return write_error.ok() && !e->stop.load();
    });
    if (!write_error.ok()) result = write_error;
    if (result.ok() && !e->stop.load()) result = AwaitEnded(runtime_, *e);
    if (result.ok() && e->stop.load()) {
      result = absl::CancelledError(absl::StrCat("job '", e->job_id, "' attempt ", e->attempt,
                                                 ": log follow abandoned"));
    }
  }
  // Back to the normal class before taking the lock the pass also takes:
  // a thread of the idle class preempted while holding it would hold the
  // pass up for as long as the machine is busy.
  Normal(*e);
  absl::MutexLock lock(&mu_);
  if (writer.ok()) e->writer = *std::move(writer);
  e->result = std::move(result);
  e->done = true;
}

void LiveLogCapture::RetireLocked(std::unique_ptr<Entry> e) {
  e->stop = true;
  Normal(*e);
  retired_.push_back(std::move(e));
}

void LiveLogCapture::ReapLocked() {
  for (auto it = retired_.begin(); it != retired_.end();) {
    if ((*it)->done) {
      // done is set last, under mu_ (held here): the thread only returns now.
      (*it)->thread.join();
      it = retired_.erase(it);  // its writer removes the temp directory
    } else {
      ++it;
    }
  }
}

void LiveLogCapture::Follow(const std::string& job_id, int attempt) {
  absl::MutexLock lock(&mu_);
  ReapLocked();
  std::unique_ptr<Entry> previous;
  auto it = entries_.find(job_id);
  if (it != entries_.end()) {
    Entry& e = *it->second;
    const bool failed = e.done && !e.result.ok();
    if (e.attempt == attempt && !failed) return;  // following, or ended: awaits Finish
    previous = std::move(it->second);
    previous->stop = true;
    Normal(*previous);
    entries_.erase(it);
  }
  if (archive_.Has(job_id, attempt)) {
    if (previous != nullptr) RetireLocked(std::move(previous));
    return;
  }
  auto e = std::make_unique<Entry>();
  e->job_id = job_id;
  e->attempt = attempt;
  e->previous = std::move(previous);
  Entry* raw = e.get();
  e->thread = std::thread([this, raw] { Run(raw); });
  entries_[job_id] = std::move(e);
}

absl::Status LiveLogCapture::Finish(const std::string& job_id, int attempt) {
  std::unique_ptr<Entry> e;
  bool done = false;
  {
    absl::MutexLock lock(&mu_);
    auto it = entries_.find(job_id);
    if (it == entries_.end() || it->second->attempt != attempt) {
      return absl::NotFoundError(
          absl::StrCat("job '", job_id, "' attempt ", attempt, ": log not followed"));
    }
    Entry* raw = it->second.get();
    Normal(*raw);  // the job has ended: its follow's last steps are awaited now
    mu_.AwaitWithTimeout(absl::Condition(
                             +[](Entry* x) { return x->done; }, raw),
                         options_.drain_wait);
    // Re-find: the map may have changed while waiting.
    it = entries_.find(job_id);
    if (it == entries_.end() || it->second.get() != raw) {
      return absl::NotFoundError(
          absl::StrCat("job '", job_id, "' attempt ", attempt, ": log follow abandoned"));
    }
    done = raw->done;
    e = std::move(it->second);
    entries_.erase(it);
  }
  if (!done) {
    // Abandoned, and gone before the caller captures the same attempt (the
    // thread notices within about a second).
    e->stop = true;
    e->thread.join();
    return absl::DeadlineExceededError(absl::StrCat(
        "job '", job_id, "' attempt ", attempt, ": log follow did not reach the end within ",
        absl::FormatDuration(options_.drain_wait)));
  }
  e->thread.join();
  if (!e->result.ok()) return e->result;  // e's writer removes the temp directory
  if (EngineHoldsAllFollowed(job_id, e->first_time)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "job '", job_id, "' attempt ", attempt,
        ": the engine still holds its whole log; reading it whole (exact)"));
  }
  return e->writer->Commit();
}

bool LiveLogCapture::EngineHoldsAllFollowed(const std::string& job_id, absl::Time first) {
  if (first == absl::InfiniteFuture()) return false;  // nothing followed, or no times
  absl::Time oldest = absl::InfiniteFuture();
  LogReadOptions ro;
  ro.first_message_time = &oldest;
  absl::Status read =
      runtime_.ReadLogs(job_id, ro, [](LogStream, absl::string_view) { return false; });
  return read.ok() && oldest <= first;
}

void LiveLogCapture::Retain(
    const std::function<bool(const std::string& job_id, int attempt)>& keep) {
  absl::MutexLock lock(&mu_);
  ReapLocked();
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (keep(it->first, it->second->attempt)) {
      ++it;
      continue;
    }
    RetireLocked(std::move(it->second));
    it = entries_.erase(it);
  }
}

int LiveLogCapture::following() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(entries_.size());
}

}  // namespace berth
