// FakeRuntime: an in-memory Runtime for tests (testonly).
//
// Containers live in a map; nothing runs. Started containers stay "running"
// until a test calls Exit/OomKill or the code under test calls Stop. Events
// are delivered synchronously, on the thread that caused them, after the
// fake's lock is released.
// FaultyRuntime (faulty_runtime.h) wraps any Runtime to inject faults.
//
// Thread-safe.
#ifndef BERTH_EXECUTOR_RUNTIME_FAKE_RUNTIME_H_
#define BERTH_EXECUTOR_RUNTIME_FAKE_RUNTIME_H_

#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "executor/runtime/runtime.h"

namespace berth {

class FakeRuntime final : public Runtime {
 public:
  // `now` stamps started/finished times (a fixed time keeps tests exact).
  explicit FakeRuntime(absl::Time now = absl::FromUnixSeconds(1'700'000'000))
      : now_(now) {}

  // ---- Test hooks ----
  // Start of a spec with this image returns NOT_FOUND (as if never pulled).
  void AddMissingImage(const std::string& image) {
    absl::MutexLock l(&mu_);
    missing_images_.insert(image);
  }
  // What ListImages answers (and counts as "images"), e.g. a list, or
  // UNAVAILABLE for an engine outage. Default: UNIMPLEMENTED.
  void SetImages(absl::StatusOr<std::vector<std::string>> images) {
    absl::MutexLock l(&mu_);
    images_ = std::move(images);
  }
  // The running container of `job` exits with `code`. NOT_FOUND if absent.
  absl::Status Exit(const std::string& job, int code) {
    return Finish(job, code, /*oom=*/false);
  }
  // The container of `job` is OOM-killed (exit 137, OOMKilled true).
  absl::Status OomKill(const std::string& job) {
    return Finish(job, 137, /*oom=*/true);
  }
  // The container vanishes without a trace (as after `docker rm -f`).
  void Vanish(const std::string& job) {
    absl::MutexLock l(&mu_);
    containers_.erase(job);
  }
  // The job's container is held (its node was lost; ContainerSummary::held)
  // with `reason`; "" releases it. NOT_FOUND if absent.
  absl::Status Hold(const std::string& job, const std::string& reason) {
    absl::MutexLock l(&mu_);
    auto it = containers_.find(job);
    if (it == containers_.end()) return NotFound(job);
    it->second.held = reason;
    return absl::OkStatus();
  }
  // The job's container's ContainerObservation::log_note (what a runtime
  // knows of a gap in its log). NOT_FOUND if absent.
  absl::Status SetLogNote(const std::string& job, const std::string& note) {
    absl::MutexLock l(&mu_);
    auto it = containers_.find(job);
    if (it == containers_.end()) return NotFound(job);
    it->second.log_note = note;
    return absl::OkStatus();
  }
  // Appends to the job's log.
  void AppendLog(const std::string& job, const std::string& text) {
    absl::MutexLock l(&mu_);
    logs_[job] += text;
  }
  // Exit code a Stop produces: 143 (SIGTERM honoured) or 137 (killed).
  void set_stop_exit_code(int code) {
    absl::MutexLock l(&mu_);
    stop_exit_code_ = code;
  }
  // The spec of the last Start of `job` (node and attempt included); a
  // default spec if it was never started.
  ContainerSpec last_spec(const std::string& job) const {
    absl::MutexLock l(&mu_);
    auto it = last_specs_.find(job);
    return it == last_specs_.end() ? ContainerSpec() : it->second;
  }
  // How many containers were ever created (adoptions excluded).
  int creates() const {
    absl::MutexLock l(&mu_);
    return creates_;
  }
  // The time stamped on starts and exits from now on.
  void set_now(absl::Time now) {
    absl::MutexLock l(&mu_);
    now_ = now;
  }
  // While true, List() reports exited containers as still running, as
  // Docker's list does for tens of milliseconds after a "die" event (its
  // view is updated after the event); Inspect tells the truth.
  void set_list_lags(bool lags) {
    absl::MutexLock l(&mu_);
    list_lags_ = lags;
  }
  // While true, Inspect() too reports exited containers as running (an
  // engine whose record lags behind its "die" event).
  void set_inspect_lags(bool lags) {
    absl::MutexLock l(&mu_);
    inspect_lags_ = lags;
  }
  // While blocked, Start() waits (a slow engine) before creating anything;
  // starts_waiting() counts the Start calls waiting now.
  void BlockStarts() {
    absl::MutexLock l(&mu_);
    starts_blocked_ = true;
  }
  void UnblockStarts() {
    absl::MutexLock l(&mu_);
    starts_blocked_ = false;
  }
  int starts_waiting() const {
    absl::MutexLock l(&mu_);
    return starts_waiting_;
  }
  // Blocks until `n` Start calls are waiting (BlockStarts) or `timeout`
  // passed; true in the first case.
  bool AwaitStartsWaiting(int n, absl::Duration timeout) const {
    absl::MutexLock l(&mu_);
    auto enough = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return starts_waiting_ >= n;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&enough), timeout);
  }
  void set_host_info(HostInfo info) {
    absl::MutexLock l(&mu_);
    host_ = std::move(info);
  }

  // ---- Runtime ----
  absl::StatusOr<StartResult> Start(const ContainerSpec& spec) override {
    StartResult r;
    {
      absl::MutexLock l(&mu_);
      ++starts_waiting_;
      auto unblocked = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return !starts_blocked_;
      };
      mu_.Await(absl::Condition(&unblocked));
      --starts_waiting_;
      Count("create");
      if (missing_images_.count(spec.image) > 0) {
        return absl::NotFoundError(absl::StrCat(
            "image '", spec.image, "' is not present (fake)"));
      }
      auto it = containers_.find(spec.job_id);
      if (it != containers_.end()) {
        r.container_id = it->second.container_id;
        r.adopted = true;
        return r;
      }
      last_specs_[spec.job_id] = spec;
      ContainerObservation& c = containers_[spec.job_id];
      c.job_id = spec.job_id;
      c.container_id = absl::StrCat("fake-", ++next_id_);
      c.node_id = spec.node;  // multi-node: placed where the planner said
      c.state = ContainerState::kRunning;
      c.started_at = now_;
      ++creates_;
      Count("start");
      r.container_id = c.container_id;
    }
    Emit({spec.job_id, "start", r.container_id});
    return r;
  }

  absl::StatusOr<ContainerList> List() override {
    absl::MutexLock l(&mu_);
    Count("list");
    ContainerList out;
    for (const auto& [job, c] : containers_) {
      ContainerState state = c.state;
      if (list_lags_ && IsFinished(state)) state = ContainerState::kRunning;
      out[job] = ContainerSummary{job, c.container_id, state, c.node_id};
      out[job].held = c.held;
      // Labelled with the attempt it was started for, as the engines do.
      if (auto spec = last_specs_.find(job); spec != last_specs_.end()) {
        out[job].attempt = spec->second.attempt;
      }
    }
    return out;
  }

  absl::StatusOr<ContainerObservation> Inspect(absl::string_view job) override {
    absl::MutexLock l(&mu_);
    Count("inspect");
    auto it = containers_.find(std::string(job));
    if (it == containers_.end()) return NotFound(job);
    ContainerObservation o = it->second;
    if (inspect_lags_ && IsFinished(o.state)) {
      o.state = ContainerState::kRunning;
      o.exit_code = 0;
      o.oom_killed = false;
      o.finished_at.reset();
    }
    return o;
  }

  absl::Status Stop(absl::string_view job, absl::Duration) override {
    int code;
    {
      absl::MutexLock l(&mu_);
      Count("stop");
      auto it = containers_.find(std::string(job));
      if (it == containers_.end()) return NotFound(job);
      if (it->second.state != ContainerState::kRunning) return absl::OkStatus();
      code = stop_exit_code_;
    }
    return Finish(std::string(job), code, false);
  }

  absl::StatusOr<std::string> LogsTail(absl::string_view job,
                                       size_t max_bytes) override {
    absl::MutexLock l(&mu_);
    Count("logs");
    if (containers_.count(std::string(job)) == 0) return NotFound(job);
    const std::string& log = logs_[std::string(job)];
    return log.size() <= max_bytes ? log : log.substr(log.size() - max_bytes);
  }

  // The fake's log is all stdout. With follow it hands over what is
  // appended until the container stops (or is removed).
  absl::Status ReadLogs(absl::string_view job, const LogReadOptions& options,
                        const LogSink& sink) override {
    const std::string id(job);
    size_t sent = 0;
    absl::MutexLock l(&mu_);
    Count("logs");
    if (containers_.count(id) == 0) return NotFound(job);
    while (true) {
      const std::string& log = logs_[id];
      auto it = containers_.find(id);
      const bool running = it != containers_.end() && it->second.state == ContainerState::kRunning;
      if (log.size() > sent) {
        std::string part = log.substr(sent);
        sent = log.size();
        mu_.Unlock();
        const bool more = sink(LogStream::kStdout, part);
        mu_.Lock();
        if (!more) return absl::OkStatus();
        continue;
      }
      if (!options.follow || !running) return absl::OkStatus();
      if (options.should_stop && options.should_stop()) return absl::OkStatus();
      auto changed = [this, &id, sent]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        auto c = containers_.find(id);
        return logs_[id].size() > sent || c == containers_.end() ||
               c->second.state != ContainerState::kRunning;
      };
      mu_.AwaitWithTimeout(absl::Condition(&changed), absl::Milliseconds(100));
    }
  }

  absl::Status Remove(absl::string_view job) override {
    {
      absl::MutexLock l(&mu_);
      Count("remove");
      if (containers_.erase(std::string(job)) == 0) return NotFound(job);
      logs_.erase(std::string(job));
    }
    Emit({std::string(job), "destroy"});
    return absl::OkStatus();
  }

  absl::StatusOr<HostInfo> GetHostInfo() override {
    absl::MutexLock l(&mu_);
    Count("info");
    return host_;
  }

  // A multi-node engine's node list (set_nodes); UNIMPLEMENTED, as on one
  // host, until set_nodes() is called.
  absl::StatusOr<std::vector<NodeInfo>> ListNodes() override {
    absl::MutexLock l(&mu_);
    if (!nodes_.has_value()) return absl::UnimplementedError("fake: one host");
    return *nodes_;
  }
  absl::StatusOr<std::vector<std::string>> ListImages() override {
    absl::MutexLock l(&mu_);
    Count("images");
    return images_;
  }
  void set_nodes(std::vector<NodeInfo> nodes) {
    absl::MutexLock l(&mu_);
    nodes_ = std::move(nodes);
  }

  // ExitPeakMemory reports `bytes` for the job's container (set_exit_peak);
  // UNIMPLEMENTED, as on a remote engine, for a job without one.
  void set_exit_peak(const std::string& job, int64_t bytes) {
    absl::MutexLock l(&mu_);
    exit_peaks_[job] = bytes;
  }
  absl::StatusOr<int64_t> ExitPeakMemory(absl::string_view job_id) override {
    absl::MutexLock l(&mu_);
    auto it = exit_peaks_.find(std::string(job_id));
    if (it == exit_peaks_.end()) return absl::UnimplementedError("fake: no exit peak set");
    return it->second;
  }

  // SampleUsage reports `sample` for the job's container while it runs
  // (set_usage); UNIMPLEMENTED, as on a remote engine, until the first call.
  void set_usage(const std::string& job, UsageSample sample) {
    absl::MutexLock l(&mu_);
    usage_[job] = sample;
  }
  absl::StatusOr<UsageSamples> SampleUsage(
      const ContainerList& containers) override {
    absl::MutexLock l(&mu_);
    if (usage_.empty()) return absl::UnimplementedError("fake: no usage set");
    UsageSamples out;
    for (const auto& [job, c] : containers) {
      auto it = usage_.find(job);
      if (it == usage_.end() || c.state != ContainerState::kRunning) continue;
      out[job] = it->second;
    }
    return out;
  }

  absl::Status Ping() override {
    absl::MutexLock l(&mu_);
    Count("ping");
    return absl::OkStatus();
  }

  std::unique_ptr<EventSubscription> SubscribeEvents(
      std::function<void(const RuntimeEvent&)> callback) override {
    absl::MutexLock l(&mu_);
    const int id = ++next_sub_;
    subscribers_[id] = std::move(callback);
    return std::make_unique<Sub>(this, id);
  }

  CallCounters Counters() const override {
    absl::MutexLock l(&mu_);
    return counters_;
  }

 private:
  class Sub final : public EventSubscription {
   public:
    Sub(FakeRuntime* rt, int id) : rt_(rt), id_(id) {}
    ~Sub() override {
      absl::MutexLock l(&rt_->mu_);
      rt_->subscribers_.erase(id_);
    }

   private:
    FakeRuntime* const rt_;
    const int id_;
  };

  static absl::Status NotFound(absl::string_view job) {
    return absl::NotFoundError(absl::StrCat("no container for job '", job, "' (fake)"));
  }

  void Count(const std::string& endpoint) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    ++counters_[endpoint].calls;
  }

  absl::Status Finish(const std::string& job, int code, bool oom) {
    RuntimeEvent die{job, "die"};
    {
      absl::MutexLock l(&mu_);
      auto it = containers_.find(job);
      if (it == containers_.end()) return NotFound(job);
      it->second.state = ContainerState::kExited;
      it->second.exit_code = code;
      it->second.oom_killed = oom;
      it->second.finished_at = now_;
      die.container_id = it->second.container_id;
      die.exit_code = code;
      die.time = now_;
    }
    if (oom) Emit({job, "oom", die.container_id, std::nullopt, die.time});
    Emit(die);
    return absl::OkStatus();
  }

  // Delivery happens outside mu_; subscribers are copied first.
  void Emit(const RuntimeEvent& e) {
    std::vector<std::function<void(const RuntimeEvent&)>> subs;
    {
      absl::MutexLock l(&mu_);
      for (const auto& [id, cb] : subscribers_) subs.push_back(cb);
    }
    for (const auto& cb : subs) cb(e);
  }

  mutable absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, ContainerObservation> containers_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> logs_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, ContainerSpec> last_specs_ ABSL_GUARDED_BY(mu_);
  std::optional<std::vector<NodeInfo>> nodes_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> missing_images_ ABSL_GUARDED_BY(mu_);
  absl::StatusOr<std::vector<std::string>> images_ ABSL_GUARDED_BY(mu_) =
      absl::UnimplementedError("fake: no image list set");
  std::map<std::string, UsageSample> usage_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int64_t> exit_peaks_ ABSL_GUARDED_BY(mu_);
  std::map<int, std::function<void(const RuntimeEvent&)>> subscribers_
      ABSL_GUARDED_BY(mu_);
  CallCounters counters_ ABSL_GUARDED_BY(mu_);
  HostInfo host_ ABSL_GUARDED_BY(mu_) = {2, int64_t{8} << 30, "fake", false};
  int stop_exit_code_ ABSL_GUARDED_BY(mu_) = 143;
  bool list_lags_ ABSL_GUARDED_BY(mu_) = false;
  bool inspect_lags_ ABSL_GUARDED_BY(mu_) = false;
  bool starts_blocked_ ABSL_GUARDED_BY(mu_) = false;
  int starts_waiting_ ABSL_GUARDED_BY(mu_) = 0;
  int next_id_ ABSL_GUARDED_BY(mu_) = 0;
  int next_sub_ ABSL_GUARDED_BY(mu_) = 0;
  int creates_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace berth

#endif  // BERTH_EXECUTOR_RUNTIME_FAKE_RUNTIME_H_
