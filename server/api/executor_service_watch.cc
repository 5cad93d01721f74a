// WatchEvents on gRPC's callback API. Each stream is a WatchReactor: it
// writes one event at a time from a page read from the store, and when it
// has sent everything it holds no thread — the service's notifier thread
// (NotifyLoop) waits for the store's next revision and pokes every stream,
// which reads the new page. Semantics as the blocking version had them:
// contiguous revisions from the request's, OUT_OF_RANGE with trailers below
// retention, UNAVAILABLE when the server shuts down (an error, so that a
// follower reconnects from the last revision it received), CANCELLED /
// DEADLINE_EXCEEDED in the metrics when the client ends the stream.
#include <chrono>
#include <deque>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/api/executor_service.h"
#include "server/api/executor_service_call.h"

namespace berth {
namespace {

// Events read per store call.
constexpr int kPageEvents = 1000;
// How long the notifier waits for a revision before checking whether to stop.
constexpr absl::Duration kNotifierWait = absl::Milliseconds(200);

}  // namespace

// One WatchEvents stream. Thread-safe: gRPC's reactions and the notifier's
// pokes serialise on mu_. Deleted by the last of OnDone() and a poke in
// flight (ExecutorService::watch_mu_ guards pins_ and done_).
class ExecutorService::WatchReactor final : public grpc::ServerWriteReactor<v1::Event> {
 public:
  WatchReactor(ExecutorService& service, grpc::CallbackServerContext* context,
               const v1::WatchEventsRequest& request)
      : service_(service), context_(context), call_(service, context, "WatchEvents") {
    absl::MutexLock lock(&mu_);
    if (!call_.authorised()) {
      finished_ = true;
      Finish(call_.Finish(absl::OkStatus(), /*record_latency=*/false));
      return;
    }
    core_ = service_.core_.load();
    if (core_ == nullptr) {
      finished_ = true;
      Finish(call_.Finish(RecoveringError(), /*record_latency=*/false));
      return;
    }
    ExecutorCore::WatchResume resume;
    if (absl::Status refused = core_->CheckWatch(request, &resume); !refused.ok()) {
      // Machine-readable for followers that resync (executor.proto).
      context_->AddTrailingMetadata("berth-epoch", resume.epoch);
      context_->AddTrailingMetadata("berth-resume-revision", absl::StrCat(resume.resume_revision));
      context_->AddTrailingMetadata("berth-current-revision",
                                    absl::StrCat(resume.current_revision));
      finished_ = true;
      Finish(call_.Finish(refused, /*record_latency=*/false));
      return;
    }
    service_.watch_streams_.WithLabels({}).Add(1);
    counted_ = true;
    after_ = core_->WatchStart(request.from_revision());
    {
      absl::MutexLock watchers(&service_.watch_mu_);
      service_.watchers_.insert(this);
      registered_ = true;
    }
    ContinueLocked();
  }

  // New revisions, or shutdown: send what is new, or finish.
  void Poke() {
    absl::MutexLock lock(&mu_);
    ContinueLocked();
  }

  void OnWriteDone(bool ok) override {
    absl::MutexLock lock(&mu_);
    writing_ = false;
    if (!ok) {  // the client is gone
      FinishLocked(absl::OkStatus());
      return;
    }
    after_ = current_.revision();
    ContinueLocked();
  }

  void OnCancel() override {
    absl::MutexLock lock(&mu_);
    // A write in flight completes with ok=false and finishes the stream.
    if (!writing_) FinishLocked(absl::OkStatus());
  }

  void OnDone() override {
    bool registered;
    {
      absl::MutexLock lock(&mu_);
      registered = registered_;
    }
    if (!registered) {
      delete this;
      return;
    }
    service_.Unregister(this);
  }

  // Guarded by service_.watch_mu_: pokes in flight, and whether OnDone ran.
  int pins_ = 0;
  bool done_ = false;

 private:
  void ContinueLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (finished_ || writing_) return;
    if (context_->IsCancelled()) {
      FinishLocked(absl::OkStatus());
      return;
    }
    if (service_.shutting_down_.load()) {
      // Not OK: a supervisor that restarts its follower only on failure
      // must not take a server's end for a deliberate stop.
      FinishLocked(absl::UnavailableError(absl::StrCat(
          "berthd is shutting down; reconnect with from_revision ", after_,
          " (the last revision sent) to resume")));
      return;
    }
    if (pending_.empty()) {
      absl::StatusOr<EventPage> page = core_->ReadEvents(after_, kPageEvents);
      if (!page.ok()) {
        FinishLocked(page.status());
        return;
      }
      for (v1::Event& e : page->events) pending_.push_back(std::move(e));
      if (pending_.empty()) return;  // idle until the notifier pokes
    }
    current_ = std::move(pending_.front());
    pending_.pop_front();
    writing_ = true;
    StartWrite(&current_);
  }

  void FinishLocked(absl::Status s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (finished_) return;
    finished_ = true;
    if (s.code() == absl::StatusCode::kUnavailable) {
      context_->AddTrailingMetadata("berth-last-revision", absl::StrCat(after_));
    }
    if (s.code() == absl::StatusCode::kOutOfRange) {
      // Machine-readable for clients that must re-list (executor.proto).
      ExecutorCore::Revisions r = core_->CurrentRevisions();
      context_->AddTrailingMetadata("berth-oldest-revision", absl::StrCat(r.oldest));
      context_->AddTrailingMetadata("berth-current-revision", absl::StrCat(r.current));
    }
    if (counted_) service_.watch_streams_.WithLabels({}).Add(-1);
    // A stream the client ended (its deadline, a cancel) is not a success.
    if (s.ok() && context_->IsCancelled()) {
      s = context_->deadline() <= std::chrono::system_clock::now()
              ? absl::DeadlineExceededError("the client's deadline ended the stream")
              : absl::CancelledError("the client cancelled the stream");
    }
    Finish(call_.Finish(s, /*record_latency=*/false));
  }

  ExecutorService& service_;
  grpc::CallbackServerContext* const context_;
  Call call_;

  absl::Mutex mu_;
  ExecutorCore* core_ ABSL_GUARDED_BY(mu_) = nullptr;
  uint64_t after_ ABSL_GUARDED_BY(mu_) = 0;      // last revision sent
  std::deque<v1::Event> pending_ ABSL_GUARDED_BY(mu_);
  v1::Event current_ ABSL_GUARDED_BY(mu_);       // the write in flight
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  bool counted_ ABSL_GUARDED_BY(mu_) = false;    // in berth_watch_streams
  bool registered_ ABSL_GUARDED_BY(mu_) = false;  // in service_.watchers_
};

grpc::ServerWriteReactor<v1::Event>* ExecutorService::WatchEventsReactor(
    grpc::CallbackServerContext* context, const v1::WatchEventsRequest* request) {
  return new WatchReactor(*this, context, *request);
}

void ExecutorService::Shutdown() {
  shutting_down_ = true;
  PokeWatchers();
  // Berthd closes the store right after this: the notifier must not wait on
  // it any longer (it did until the destructor: a use after free).
  stop_notifier_ = true;
  if (notifier_.joinable()) notifier_.join();
}

void ExecutorService::Unregister(WatchReactor* reactor) {
  absl::MutexLock lock(&watch_mu_);
  watchers_.erase(reactor);
  if (reactor->pins_ > 0) {
    reactor->done_ = true;  // the last poke deletes it
  } else {
    delete reactor;
  }
}

void ExecutorService::PokeWatchers() {
  std::vector<WatchReactor*> pinned;
  {
    absl::MutexLock lock(&watch_mu_);
    pinned.reserve(watchers_.size());
    for (WatchReactor* r : watchers_) {
      ++r->pins_;
      pinned.push_back(r);
    }
  }
  // Not under watch_mu_: a poke may finish its stream, and OnDone (on a
  // gRPC thread) takes watch_mu_.
  for (WatchReactor* r : pinned) r->Poke();
  absl::MutexLock lock(&watch_mu_);
  for (WatchReactor* r : pinned) {
    if (--r->pins_ == 0 && r->done_) delete r;
  }
}

void ExecutorService::NotifyLoop() {
  ExecutorCore& core = *core_.load();
  uint64_t seen = core.CurrentRevisions().current;
  while (!stop_notifier_.load()) {
    if (!core.AwaitRevision(seen, kNotifierWait)) continue;
    seen = core.CurrentRevisions().current;
    PokeWatchers();
  }
}

}  // namespace berth
