#include "server/web/ready_plans.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <utility>

#include "absl/time/clock.h"

namespace berth::web {

ReadyPlans::ReadyPlans(PlanCache& plans, absl::Duration inline_budget)
    : plans_(plans), inline_budget_(inline_budget) {}

ReadyPlans::~ReadyPlans() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

absl::StatusOr<std::shared_ptr<const PlanSnapshot>> ReadyPlans::Get() {
  absl::StatusOr<std::shared_ptr<const PlanSnapshot>> planned = plans_.Get();
  if (!planned.ok()) return planned.status();
  std::shared_ptr<const PlanSnapshot> latest = *std::move(planned);
  const bool complete = latest->estimates().Complete(absl::Now() + inline_budget_);
  absl::MutexLock lock(&mu_);
  if (complete) {
    if (ready_ == nullptr || latest->revision >= ready_->revision) ready_ = latest;
    return latest;
  }
  if (ready_ == nullptr) return latest;  // nothing ready yet: the page forecasts
  if (pending_ == nullptr || pending_->revision < latest->revision ||
      pending_->now < latest->now) {
    pending_ = latest;
  }
  if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
  return ready_;
}

void ReadyPlans::Loop() {
  // Below the request threads: a forecast yields the cores to the pages and
  // RPCs it is readying plans for (best effort; a failure changes nothing).
  (void)setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 10);
  for (;;) {
    std::shared_ptr<const PlanSnapshot> next;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](ReadyPlans* self) ABSL_EXCLUSIVE_LOCKS_REQUIRED(self->mu_) {
            return self->stop_ || self->pending_ != nullptr;
          },
          this));
      if (stop_) return;
      next = std::move(pending_);
      pending_ = nullptr;
    }
    next->estimates().Complete();
    absl::MutexLock lock(&mu_);
    ++completed_;
    if (ready_ == nullptr || next->revision >= ready_->revision) ready_ = std::move(next);
  }
}

int64_t ReadyPlans::completed() const {
  absl::MutexLock lock(&mu_);
  return completed_;
}

}  // namespace berth::web
