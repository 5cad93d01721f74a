#include "executor/reconcile/reconcile_loop.h"

#include <cstdint>
#include <string>
#include <utility>

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
  constexpr int64_t kRepeatLogEvery = 30;
  constexpr absl::Duration kSlowPass = absl::Milliseconds(500);
  std::string last_error;  // of the last pass, if it failed
  int64_t repeats = 0;     // passes since that error was first seen
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
      // The same error pass after pass (a full disk, for as long as it
      // lasts) is logged once and then every kRepeatLogEvery passes.
      std::string error = stats.status().ToString();
      if (error == last_error) {
        ++repeats;
      } else {
        last_error = std::move(error);
        repeats = 0;
      }
      if (repeats % kRepeatLogEvery == 0) {
        Log(LogLevel::kError, "reconcile pass failed",
            {{"error", last_error}, {"repeats", repeats}});
      }
    } else {
      last_error.clear();
      // Exits, snapshots and starts wait behind a pass: a slow one is said.
      if (stats->duration >= kSlowPass) {
        Log(LogLevel::kWarning, "slow reconcile pass",
            {{"ms", absl::ToInt64Milliseconds(stats->duration)},
             {"finalised", stats->finalised},
             {"admitted", stats->admitted}});
      }
    }
    if (observer_) observer_(stats);
    absl::MutexLock lock(&mu_);
    ++completed_;
    if (stats.ok() && stats->more_work) triggered_ = true;
  }
}

}  // namespace berth
