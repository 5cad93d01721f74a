// FaultyRuntime: wraps any Runtime and fails chosen methods with chosen
// statuses (leveldb's ErrorEnv pattern): fault injection by wrapping, for
// tests (testonly). Thread-safe.
#ifndef BERTH_EXECUTOR_RUNTIME_FAULTY_RUNTIME_H_
#define BERTH_EXECUTOR_RUNTIME_FAULTY_RUNTIME_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "executor/runtime/runtime.h"

namespace berth {

// Wraps a Runtime; methods named in a fault fail with its status instead of
// reaching the wrapped runtime (Start, List, Inspect, Stop, LogsTail, Remove,
// GetHostInfo, Ping; names as in CallCounters: "create", "list", "inspect",
// "stop", "logs", "remove", "info", "ping"). Thread-safe. `base` must
// outlive the wrapper.
class FaultyRuntime final : public Runtime {
 public:
  explicit FaultyRuntime(Runtime& base) : base_(base) {}

  // Fails the next `times` calls of `method` (-1: until cleared).
  void Inject(const std::string& method, absl::Status status, int times = -1) {
    absl::MutexLock l(&mu_);
    faults_[method] = Fault{std::move(status), times};
  }
  void Clear() {
    absl::MutexLock l(&mu_);
    faults_.clear();
  }
  // While held, ReadLogs waits before reaching the wrapped runtime (a slow
  // read of a long log), until HoldReads(false).
  void HoldReads(bool hold) {
    absl::MutexLock l(&mu_);
    reads_free_ = !hold;
  }

  absl::StatusOr<StartResult> Start(const ContainerSpec& spec) override {
    if (absl::Status s = Take("create"); !s.ok()) return s;
    return base_.Start(spec);
  }
  absl::StatusOr<ContainerList> List() override {
    if (absl::Status s = Take("list"); !s.ok()) return s;
    return base_.List();
  }
  absl::StatusOr<ContainerObservation> Inspect(absl::string_view job) override {
    if (absl::Status s = Take("inspect"); !s.ok()) return s;
    return base_.Inspect(job);
  }
  absl::Status Stop(absl::string_view job, absl::Duration grace) override {
    if (absl::Status s = Take("stop"); !s.ok()) return s;
    return base_.Stop(job, grace);
  }
  absl::StatusOr<std::string> LogsTail(absl::string_view job,
                                       size_t max_bytes) override {
    if (absl::Status s = Take("logs"); !s.ok()) return s;
    return base_.LogsTail(job, max_bytes);
  }
  absl::Status ReadLogs(absl::string_view job, const LogReadOptions& options,
                        const LogSink& sink) override {
    if (absl::Status s = Take("logs"); !s.ok()) return s;
    {
      absl::MutexLock l(&mu_);
      mu_.Await(absl::Condition(&reads_free_));
    }
    return base_.ReadLogs(job, options, sink);
  }
  absl::Status Remove(absl::string_view job) override {
    if (absl::Status s = Take("remove"); !s.ok()) return s;
    return base_.Remove(job);
  }
  absl::StatusOr<HostInfo> GetHostInfo() override {
    if (absl::Status s = Take("info"); !s.ok()) return s;
    return base_.GetHostInfo();
  }
  absl::Status Ping() override {
    if (absl::Status s = Take("ping"); !s.ok()) return s;
    return base_.Ping();
  }
  absl::StatusOr<std::vector<NodeInfo>> ListNodes() override {
    if (absl::Status s = Take("nodes"); !s.ok()) return s;
    return base_.ListNodes();
  }
  std::unique_ptr<EventSubscription> SubscribeEvents(
      std::function<void(const RuntimeEvent&)> callback) override {
    return base_.SubscribeEvents(std::move(callback));
  }
  CallCounters Counters() const override { return base_.Counters(); }
  absl::StatusOr<UsageSamples> SampleUsage(
      const ContainerList& containers) override {
    return base_.SampleUsage(containers);
  }
  absl::StatusOr<int64_t> ExitPeakMemory(absl::string_view job_id) override {
    return base_.ExitPeakMemory(job_id);
  }

 private:
  struct Fault {
    absl::Status status;
    int times;
  };

  absl::Status Take(const std::string& method) {
    absl::MutexLock l(&mu_);
    auto it = faults_.find(method);
    if (it == faults_.end()) return absl::OkStatus();
    absl::Status s = it->second.status;
    if (it->second.times > 0 && --it->second.times == 0) faults_.erase(it);
    return s;
  }

  Runtime& base_;
  absl::Mutex mu_;
  std::map<std::string, Fault> faults_ ABSL_GUARDED_BY(mu_);
  bool reads_free_ ABSL_GUARDED_BY(mu_) = true;
};

}  // namespace berth

#endif  // BERTH_EXECUTOR_RUNTIME_FAULTY_RUNTIME_H_
