#include "executor/reconcile/reconcile_loop.h"

#include "planner/base/log.h"

namespace berth {

ReconcileLoop::ReconcileLoop(Reconciler& reconciler, absl::Duration tick,
                             PassObserver observer)
    : reconciler_(reconciler), tick_(tick), observer_(std::move(observer)) {}

ReconcileLoop::~ReconcileLoop() { Stop(); }

void ReconcileLoop::Start() {
  thread_ = std::thread([this] { Run(); });
}

void ReconcileLoop::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void ReconcileLoop::Trigger() {
  absl::MutexLock lock(&mu_);
  triggered_ = true;
}

bool ReconcileLoop::AwaitPass(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  triggered_ = true;
  // A pass running now started before this call: wait for the next one.
  const uint64_t target = started_ + 1;
  auto done = [this, target]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return completed_ >= target || stopping_;
  };
  return mu_.AwaitWithTimeout(absl::Condition(&done), timeout) && completed_ >= target;
}

uint64_t ReconcileLoop::passes() const {
  absl::MutexLock lock(&mu_);
  return completed_;
}

void ReconcileLoop::Run() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      auto wake = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return triggered_ || stopping_;
      };
      mu_.AwaitWithTimeout(absl::Condition(&wake), tick_);
      if (stopping_) return;
      triggered_ = false;
      ++started_;
    }
    absl::StatusOr<PassStats> stats = reconciler_.RunPass();
    if (!stats.ok()) {
      Log(LogLevel::kError, "reconcile pass failed",
          {{"error", stats.status().ToString()}});
    }
    if (observer_) observer_(stats);
    absl::MutexLock lock(&mu_);
    ++completed_;
    if (stats.ok() && stats->more_work) triggered_ = true;
  }
}

}  // namespace berth
