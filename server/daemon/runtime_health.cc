#include "server/daemon/runtime_health.h"

#include <utility>

namespace berth {

RuntimeHealthProbe::RuntimeHealthProbe(Runtime& runtime, RuntimeHealthOptions options,
                                       std::function<void(bool)> report)
    : runtime_(runtime), options_(options), report_(std::move(report)) {
  pinger_ = std::thread([this] { PingLoop(); });
  watcher_ = std::thread([this] { WatchLoop(); });
}

RuntimeHealthProbe::~RuntimeHealthProbe() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  watcher_.join();
  pinger_.join();
}

bool RuntimeHealthProbe::healthy() const {
  absl::MutexLock lock(&mu_);
  return verdict_.value_or(false);
}

void RuntimeHealthProbe::PingLoop() {
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      if (stop_) return;
      in_flight_ = true;
      sent_ = Clock::Real()->Now();
    }
    const bool ok = runtime_.Ping().ok();
    absl::MutexLock lock(&mu_);
    in_flight_ = false;
    last_ok_ = ok;
    // Wakes early on stop.
    auto stopping = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_; };
    mu_.AwaitWithTimeout(absl::Condition(&stopping), options_.interval);
  }
}

void RuntimeHealthProbe::WatchLoop() {
  const absl::Duration period = options_.interval / 4;
  for (;;) {
    bool healthy;
    bool changed;
    {
      absl::MutexLock lock(&mu_);
      auto stopping = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_; };
      if (mu_.AwaitWithTimeout(absl::Condition(&stopping), period)) return;
      const bool hung = in_flight_ && Clock::Real()->Now() - sent_ > options_.deadline;
      healthy = last_ok_ && !hung;
      // No verdict before the first ping answered or hung.
      if (!verdict_.has_value() && in_flight_ && !hung) continue;
      changed = !verdict_.has_value() || *verdict_ != healthy;
      verdict_ = healthy;
    }
    if (changed) report_(healthy);
  }
}

}  // namespace berth
