#include "executor/reconcile/measured_executor.h"

#include <algorithm>
#include <map>
#include <vector>

#include "planner/starts/start_fit.h"

namespace berth {
namespace {

absl::Duration Median(std::vector<absl::Duration> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

bool Same(const planner::ExecutorModel& a, const planner::ExecutorModel& b) {
  return a.start_latency == b.start_latency && a.start_contention == b.start_contention &&
         a.start_parallelism == b.start_parallelism && a.finish_latency == b.finish_latency &&
         a.plan_at_starts == b.plan_at_starts;
}

}  // namespace

MeasuredExecutor::MeasuredExecutor(const planner::ExecutorModel& initial, PlanCache* plans,
                                   MeasuredExecutorOptions options)
    : initial_(initial), plans_(plans), options_(options), current_(initial) {
  if (plans_ != nullptr) plans_->SetExecutorModel(initial_);
}

void MeasuredExecutor::ObserveStart(absl::Duration latency, int starts) {
  absl::MutexLock lock(&mu_);
  starts_.emplace_back(std::max(absl::ZeroDuration(), latency), std::max(1, starts));
  while (starts_.size() > std::max<size_t>(1, options_.window)) starts_.pop_front();
  Refit();
}

void MeasuredExecutor::ObserveFinish(absl::Duration latency) {
  absl::MutexLock lock(&mu_);
  finishes_.push_back(std::max(absl::ZeroDuration(), latency));
  while (finishes_.size() > std::max<size_t>(1, options_.window)) finishes_.pop_front();
  Refit();
}

planner::ExecutorModel MeasuredExecutor::Current() const {
  absl::MutexLock lock(&mu_);
  return current_;
}

void MeasuredExecutor::Refit() {
  planner::ExecutorModel m = initial_;
  if (starts_.size() >= options_.min_samples) {
    // Per level of starts in flight: the median and how many (StartLevel).
    std::map<int, std::vector<absl::Duration>> by_level;
    for (const auto& [latency, starts] : starts_) by_level[starts].push_back(latency);
    std::vector<planner::StartLevel> levels;
    for (auto& [starts, latencies] : by_level) {
      planner::StartLevel level;
      level.starts = starts;
      level.count = static_cast<int64_t>(latencies.size());
      level.median_s = absl::ToDoubleSeconds(Median(std::move(latencies)));
      levels.push_back(level);
    }
    const planner::StartFit fit = planner::FitStarts(levels);
    m.start_latency = fit.alone;
    m.start_contention = fit.contention;
  }
  if (finishes_.size() >= options_.min_samples) {
    m.finish_latency = Median(std::vector<absl::Duration>(finishes_.begin(), finishes_.end()));
  }
  if (Same(m, current_)) return;
  current_ = m;
  if (plans_ != nullptr) plans_->SetExecutorModel(m);
}

void MeasuredExecutor::Attach(ReconcilerOptions& options) {
  auto start = std::move(options.on_start_latency);
  options.on_start_latency = [this, start](absl::Duration d, int starts) {
    if (start) start(d, starts);
    ObserveStart(d, starts);
  };
  auto finish = std::move(options.on_finish_latency);
  options.on_finish_latency = [this, finish](absl::Duration d) {
    if (finish) finish(d);
    ObserveFinish(d);
  };
}

}  // namespace berth
