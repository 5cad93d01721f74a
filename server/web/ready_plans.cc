#include "server/web/ready_plans.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <utility>

#include "absl/time/clock.h"

namespace berth::web {
namespace {

absl::Status Stopping() {
  return absl::UnavailableError("berthd is stopping: the dashboard's plan was not readied");
}

}  // namespace

ReadyPlans::ReadyPlans(PlanCache& plans, absl::Duration inline_budget,
                       size_t inline_max_queued)
    : plans_(plans), inline_budget_(inline_budget), inline_max_queued_(inline_max_queued) {}

ReadyPlans::~ReadyPlans() { Stop(); }

void ReadyPlans::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  // No Get() starts the thread once stop_ is set.
  if (thread_.joinable()) thread_.join();
}

bool ReadyPlans::stopping() const {
  absl::MutexLock lock(&mu_);
  return stop_;
}

absl::Status ReadyPlans::Ready(const PlanSnapshot& plan) const {
  // Complete(deadline) returns after the forecast plan during which the
  // deadline passed: a slice of 0 checks for Stop() after every plan.
  while (!plan.estimates().Complete(absl::InfinitePast())) {
    if (stopping()) return Stopping();
  }
  if (stopping()) return Stopping();
  (void)plan.positions();  // the job page's index
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const PlanSnapshot>> ReadyPlans::Get() {
  absl::StatusOr<std::shared_ptr<const PlanSnapshot>> planned = plans_.Get();
  if (!planned.ok()) return planned.status();
  std::shared_ptr<const PlanSnapshot> latest = *std::move(planned);
  if (stopping()) return Stopping();
  if (latest->state.queued.size() <= inline_max_queued_ &&
      latest->estimates().Complete(absl::Now() + inline_budget_)) {
    (void)latest->positions();  // of at most inline_max_queued jobs
    absl::MutexLock lock(&mu_);
    if (ready_ == nullptr || latest->revision >= ready_->revision) ready_ = latest;
    return latest;
  }
  {
    absl::MutexLock lock(&mu_);
    if (stop_) return Stopping();
    const bool too_large = latest->state.queued.size() > inline_max_queued_;
    if (ready_ != nullptr || too_large) {
      wanted_ = true;  // the thread readies PlanCache's latest: this or newer
      if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
      if (ready_ != nullptr) return ready_;
      // Nothing ready yet and too many jobs to ready within a page: the
      // page says so and reloads itself.
      return absl::UnavailableError(absl::StrCat(
          "the plan of ", latest->state.queued.size(),
          " queued jobs is being prepared (its ETA forecast, about a second per 100,000 "
          "jobs); this page reloads itself"));
    }
  }
  // Nothing ready yet, a small queue: this page readies the plan itself.
  if (absl::Status s = Ready(*latest); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  if (ready_ == nullptr || latest->revision >= ready_->revision) ready_ = latest;
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
            return self->stop_ || self->wanted_;
          },
          this));
      if (stop_) return;
      wanted_ = false;
      // The newest plan, held by the cache anyway: no plan waits here.
      next = plans_.Latest();
      if (next == nullptr || next == ready_) continue;
    }
    if (!Ready(*next).ok()) return;  // stopping
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
