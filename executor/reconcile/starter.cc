#include "executor/reconcile/starter.h"

#include <algorithm>

namespace berth {

Starter::Starter(int parallelism) {
  const int n = std::max(1, parallelism);
  threads_.reserve(n);
  for (int i = 0; i < n; ++i) threads_.emplace_back([this] { Work(); });
}

Starter::~Starter() {
  Stop();
  for (std::thread& t : threads_) t.join();
}

void Starter::Stop() {
  absl::MutexLock lock(&mu_);
  stopping_ = true;
  for (const Task& t : queue_) in_flight_.erase(t.job_id);
  queue_.clear();
}

void Starter::set_on_done(std::function<void()> on_done) {
  absl::MutexLock lock(&mu_);
  on_done_ = std::move(on_done);
  // The previous callback may be running: wait until it returned.
  auto quiet = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return callbacks_running_ == 0; };
  mu_.Await(absl::Condition(&quiet));
}

bool Starter::Submit(const std::string& job_id, std::function<void()> start) {
  absl::MutexLock lock(&mu_);
  if (stopping_ || !in_flight_.insert(job_id).second) return false;
  queue_.push_back(Task{job_id, std::move(start)});
  return true;
}

uint64_t Starter::Mark() const {
  absl::MutexLock lock(&mu_);
  return sequence_;
}

bool Starter::Busy(const std::string& job_id, uint64_t mark) const {
  absl::MutexLock lock(&mu_);
  if (in_flight_.contains(job_id)) return true;
  auto it = finished_.find(job_id);
  return it != finished_.end() && it->second > mark;
}

void Starter::Prune(uint64_t mark) {
  absl::MutexLock lock(&mu_);
  absl::erase_if(finished_, [mark](const auto& kv) { return kv.second <= mark; });
}

void Starter::AwaitIdle() const {
  absl::MutexLock lock(&mu_);
  auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return in_flight_.empty() && callbacks_running_ == 0;
  };
  mu_.Await(absl::Condition(&idle));
}

size_t Starter::in_flight() const {
  absl::MutexLock lock(&mu_);
  return in_flight_.size();
}

void Starter::Work() {
  while (true) {
    Task task;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || !queue_.empty();
      };
      mu_.Await(absl::Condition(&ready));
      if (queue_.empty()) return;  // stopping
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task.start();
    std::function<void()> on_done;
    {
      absl::MutexLock lock(&mu_);
      in_flight_.erase(task.job_id);
      finished_[task.job_id] = ++sequence_;
      on_done = on_done_;
      if (on_done) ++callbacks_running_;
    }
    if (on_done) {
      on_done();
      absl::MutexLock lock(&mu_);
      --callbacks_running_;
    }
  }
}

}  // namespace berth
