// What the crash test (berthd_crash_test.cc) watches while it kills and
// restarts berthd, independently of berthd: Docker's own record of container
// creations, and a job-server's watch that reconnects after every restart.
//
// Thread-safe: each runs its own thread; the accessors lock.
#ifndef BERTH_TESTS_CRASH_OBSERVERS_H_
#define BERTH_TESTS_CRASH_OBSERVERS_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "executor/runtime/docker/docker_runtime.h"
#include "tests/berthd_process.h"

namespace berth {

// Counts container creations per job, from Docker and not from berthd: the
// engine's event stream for the instance, plus a poller of the bulk list
// (distinct container ids per job).
class CreationCounter {
 public:
  explicit CreationCounter(const std::string& instance) {
    DockerRuntimeOptions o;
    o.instance = instance;
    o.image_allow_list = {"*"};
    docker_ = *DockerRuntime::Create(o);
    events_ = docker_->SubscribeEvents([this](const RuntimeEvent& e) {
      absl::MutexLock lock(&mu_);
      if (e.action == "create") ++creates_[e.job_id];
      if (e.action == "resync") ++resyncs_;
    });
    poller_ = std::thread([this] {
      while (!done_) {
        absl::StatusOr<ContainerList> list = docker_->List();
        if (list.ok()) {
          absl::MutexLock lock(&mu_);
          for (const auto& [job, c] : *list) ids_[job].insert(c.container_id);
        }
        absl::SleepFor(absl::Milliseconds(40));
      }
    });
  }
  ~CreationCounter() {
    done_ = true;
    poller_.join();
    events_.reset();
  }

  DockerRuntime& docker() { return *docker_; }

  int Creates(const std::string& job) const {
    absl::MutexLock lock(&mu_);
    auto it = creates_.find(job);
    return it == creates_.end() ? 0 : it->second;
  }
  size_t DistinctIds(const std::string& job) const {
    absl::MutexLock lock(&mu_);
    auto it = ids_.find(job);
    return it == ids_.end() ? 0 : it->second.size();
  }
  int resyncs() const {
    absl::MutexLock lock(&mu_);
    return resyncs_;
  }

 private:
  std::unique_ptr<DockerRuntime> docker_;
  std::unique_ptr<EventSubscription> events_;
  std::atomic<bool> done_{false};
  std::thread poller_;
  mutable absl::Mutex mu_;
  std::map<std::string, int> creates_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::set<std::string>> ids_ ABSL_GUARDED_BY(mu_);
  int resyncs_ ABSL_GUARDED_BY(mu_) = 0;
};

// A job-server's watch: follows WatchEvents and, whenever the stream breaks
// (berthd killed), reconnects from the last revision it saw.
class ResumingWatcher {
 public:
  explicit ResumingWatcher(const BerthdProcess& b) : b_(b) {
    thread_ = std::thread([this] { Run(); });
  }
  ~ResumingWatcher() {
    done_ = true;
    thread_.join();
  }

  uint64_t last() const {
    absl::MutexLock lock(&mu_);
    return last_;
  }
  int gaps() const {
    absl::MutexLock lock(&mu_);
    return gaps_;
  }
  int duplicates() const {
    absl::MutexLock lock(&mu_);
    return duplicates_;
  }
  int reconnects() const {
    absl::MutexLock lock(&mu_);
    return reconnects_;
  }
  // Job id -> states in event order.
  std::map<std::string, std::vector<v1::JobState>> transitions() const {
    absl::MutexLock lock(&mu_);
    return transitions_;
  }
  std::vector<std::string> problems() const {
    absl::MutexLock lock(&mu_);
    return problems_;
  }
  // ORPHAN_STOPPED events naming `job`.
  int orphan_reports(const std::string& job) const {
    absl::MutexLock lock(&mu_);
    auto it = orphan_reports_.find(job);
    return it == orphan_reports_.end() ? 0 : it->second;
  }

 private:
  void Run() {
    while (!done_) {
      uint64_t from;
      {
        absl::MutexLock lock(&mu_);
        from = last_;
      }
      std::unique_ptr<BerthClient> c = b_.Client(Role::kPusher);
      absl::Status s = c->Watch(
          from,
          [this](const v1::Event& e) {
            absl::MutexLock lock(&mu_);
            if (last_ != 0 && e.revision() != last_ + 1) {
              if (e.revision() <= last_) {
                ++duplicates_;
              } else {
                ++gaps_;
              }
              problems_.push_back(absl::StrCat("revision ", e.revision(), " after ", last_));
            }
            if (e.revision() > last_) last_ = e.revision();
            if (e.type() == v1::EVENT_TYPE_JOB_STATE_CHANGED) {
              transitions_[e.job_id()].push_back(e.state());
            }
            if (e.type() == v1::EVENT_TYPE_ORPHAN_STOPPED) ++orphan_reports_[e.job_id()];
            return !done_.load();
          },
          absl::Now() + absl::Milliseconds(500));
      if (done_) return;
      if (!s.ok() && s.code() != absl::StatusCode::kDeadlineExceeded) {
        absl::MutexLock lock(&mu_);
        ++reconnects_;
      }
      if (!s.ok() && s.code() != absl::StatusCode::kDeadlineExceeded) {
        absl::SleepFor(absl::Milliseconds(50));  // berthd is down: retry soon
      }
    }
  }

  const BerthdProcess& b_;
  std::atomic<bool> done_{false};
  std::thread thread_;
  mutable absl::Mutex mu_;
  uint64_t last_ ABSL_GUARDED_BY(mu_) = 0;
  int gaps_ ABSL_GUARDED_BY(mu_) = 0;
  int duplicates_ ABSL_GUARDED_BY(mu_) = 0;
  int reconnects_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, int> orphan_reports_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::vector<v1::JobState>> transitions_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> problems_ ABSL_GUARDED_BY(mu_);
};

}  // namespace berth

#endif  // BERTH_TESTS_CRASH_OBSERVERS_H_
