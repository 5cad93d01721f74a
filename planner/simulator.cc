#include "planner/simulator.h"

#include <algorithm>
#include <cstdint>
#include <queue>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "planner/plan.h"
#include "planner/simulator_arrivals.h"

namespace berth::planner {
namespace {

constexpr int kReasonCount = 13;  // Reason values 0..12

absl::Duration Effective(absl::Duration d, absl::Duration fallback) {
  return d > absl::ZeroDuration() ? d : fallback;
}

// Owner of an entry of State::running: >= 0 a SimInput::jobs index,
// < 0 the initial running job -(owner + 1).
using Owner = int64_t;

struct Completion {
  absl::Time end;
  uint64_t seq;
  Owner owner;
  bool operator>(const Completion& o) const {
    return std::tie(end, seq) > std::tie(o.end, o.seq);
  }
};

class Simulation {
 public:
  Simulation(const SimInput& in, const SimOptions& opt)
      : in_(in),
        opt_(opt),
        n_(in.jobs.size()),
        default_duration_(opt.policy.default_duration > absl::ZeroDuration()
                              ? opt.policy.default_duration
                              : absl::Hours(1)) {}

  SimResult Run() {
    Setup();
    absl::Time now = in_.start;
    Record(now);
    while (true) {
      absl::Time next = absl::InfiniteFuture();
      if (next_arrival_ < order_.size()) next = arrival_[order_[next_arrival_]];
      if (!completions_.empty()) next = std::min(next, completions_.top().end);
      if (next == absl::InfiniteFuture()) break;
      now = std::max(now, next);
      bool completed = false;
      while (!completions_.empty() && completions_.top().end <= now) {
        Complete(completions_.top().owner, now);
        completions_.pop();
        completed = true;
      }
      while (next_arrival_ < order_.size() &&
             arrival_[order_[next_arrival_]] <= now) {
        Arrive(order_[next_arrival_++], now);
      }
      if (opt_.mode == SimMode::kPlanner) {
        if (completed || !Exhausted(now)) PlanAndApply(now);
      } else {
        BaselineAdmit(now);
      }
      Record(now);
      ReportProgress();
    }
    // Anything still queued can never start.
    for (size_t k = 0; k < queued_owner_.size(); ++k) {
      SimJobResult& r = result_.jobs[queued_owner_[k]];
      CloseWait(queued_owner_[k], now);
      r.outcome = SimOutcome::kNotRun;
      r.start = r.end = now;
    }
    for (size_t i : baseline_queue_) {
      SimJobResult& r = result_.jobs[i];
      r.outcome = SimOutcome::kNotRun;
      r.start = r.end = now;
    }
    result_.end = std::max(result_.start, last_end_);
    if (!result_.timeline.empty() && result_.timeline.back().time < result_.end) {
      Record(result_.end);
    }
    if (opt_.progress) opt_.progress(1.0);
    return std::move(result_);
  }

 private:
  void Setup() {
    result_.start = in_.start;
    result_.end = in_.start;
    result_.jobs.resize(n_);
    last_end_ = in_.start;
    cur_reason_.assign(n_, Reason::kUnspecified);
    cur_since_.assign(n_, in_.start);
    reason_time_.assign(n_ * kReasonCount, absl::ZeroDuration());
    running_pos_.assign(n_, -1);
    initial_pos_.assign(in_.running.size(), -1);
    baseline_limit_ = opt_.baseline_max_workers > 0 ? opt_.baseline_max_workers
                                                    : in_.budgets.max_workers;

    auto& index = index_;
    index.reserve(n_);
    for (size_t i = 0; i < n_; ++i) index.emplace(in_.jobs[i].job.id, i);
    // State::finished only needs the jobs some job still in (or yet to
    // enter) the queue depends on; keeping every finished job would make
    // each Plan() index all of them.
    for (size_t i = 0; i < n_; ++i) {
      for (const std::string& d : in_.jobs[i].job.depends_on) ++dependants_[d];
    }

    internal::Arrivals arrivals = internal::ComputeArrivals(in_, index_);
    arrival_ = std::move(arrivals.time);
    order_ = std::move(arrivals.order);

    state_.queued.reserve(n_);
    state_.running.reserve(in_.running.size() + 64);
    for (size_t k = 0; k < in_.running.size(); ++k) {
      const RunningJob& r = in_.running[k];
      AddRunning(r, -static_cast<Owner>(k) - 1);
      absl::Time end = std::max(
          r.started_at + Effective(r.expected_duration, default_duration_),
          in_.start);
      completions_.push({end, seq_++, -static_cast<Owner>(k) - 1});
      initial_end_.emplace(r.id, end);
    }
  }

  void AddRunning(const RunningJob& r, Owner owner) {
    if (owner >= 0) {
      running_pos_[owner] = static_cast<int64_t>(state_.running.size());
    } else {
      initial_pos_[-owner - 1] = static_cast<int64_t>(state_.running.size());
    }
    state_.running.push_back(r);
    running_owner_.push_back(owner);
    used_memory_ += std::max<int64_t>(0, r.resources.memory_bytes);
    used_cpu_ += std::max<int64_t>(0, r.resources.cpu_millis);
  }

  void Complete(Owner owner, absl::Time now) {
    int64_t pos = owner >= 0 ? running_pos_[owner] : initial_pos_[-owner - 1];
    const RunningJob& r = state_.running[pos];
    used_memory_ -= std::max<int64_t>(0, r.resources.memory_bytes);
    used_cpu_ -= std::max<int64_t>(0, r.resources.cpu_millis);
    bool failed =
        owner >= 0 && (in_.jobs[owner].fails || result_.jobs[owner].timed_out);
    if (dependants_.contains(r.id)) {
      state_.finished[r.id] =
          failed ? DependencyOutcome::kFailed : DependencyOutcome::kSucceeded;
    }
    if (owner >= 0) {
      SimJobResult& res = result_.jobs[owner];
      res.outcome = failed ? SimOutcome::kFailed : SimOutcome::kSucceeded;
      res.end = now;
      ++done_;
    }
    last_end_ = std::max(last_end_, now);
    // Swap-remove.
    size_t last = state_.running.size() - 1;
    if (static_cast<size_t>(pos) != last) {
      state_.running[pos] = std::move(state_.running[last]);
      Owner moved = running_owner_[last];
      running_owner_[pos] = moved;
      if (moved >= 0) {
        running_pos_[moved] = pos;
      } else {
        initial_pos_[-moved - 1] = pos;
      }
    }
    state_.running.pop_back();
    running_owner_.pop_back();
  }

  void Arrive(size_t i, absl::Time now) {
    SimJobResult& r = result_.jobs[i];
    r.arrival = now;
    r.ready = now;
    cur_since_[i] = now;
    if (opt_.mode == SimMode::kPlanner) {
      state_.queued.push_back(in_.jobs[i].job);
      queued_owner_.push_back(i);
    } else {
      baseline_queue_.push_back(i);
    }
  }

  void Start(size_t i, absl::Time now) {
    SimJobResult& r = result_.jobs[i];
    r.start = now;
    const SimJob& sj = in_.jobs[i];
    for (const std::string& d : sj.job.depends_on) {
      if (auto it = index_.find(d); it != index_.end()) {
        r.ready = std::max(r.ready, result_.jobs[it->second].end);
      } else if (auto e = initial_end_.find(d); e != initial_end_.end()) {
        r.ready = std::max(r.ready, e->second);
      }
    }
    r.ready = std::min(r.ready, now);
    ReleaseDependencies(i);
    absl::Duration run = Effective(
        sj.actual_duration, Effective(sj.job.expected_duration, default_duration_));
    if (sj.max_duration > absl::ZeroDuration() && run > sj.max_duration) {
      run = sj.max_duration;
      r.timed_out = true;
    }
    completions_.push({now + run, seq_++, static_cast<Owner>(i)});
  }

  // Ends job i's current wait reason at `now`.
  void CloseWait(size_t i, absl::Time now) {
    Reason cur = cur_reason_[i];
    if (cur != Reason::kUnspecified) {
      reason_time_[i * kReasonCount + static_cast<int>(cur)] += now - cur_since_[i];
    }
    cur_since_[i] = now;
    SimJobResult& r = result_.jobs[i];
    for (int k = 0; k < kReasonCount; ++k) {
      if (k == static_cast<int>(Reason::kWaitingForDependencies)) continue;
      absl::Duration d = reason_time_[i * kReasonCount + k];
      if (d > r.main_wait_time) {
        r.main_wait_time = d;
        r.main_wait_reason = static_cast<Reason>(k);
      }
    }
  }

  void Leave(size_t i, absl::Time now, SimOutcome outcome, Problem problem) {
    CloseWait(i, now);
    SimJobResult& r = result_.jobs[i];
    r.outcome = outcome;
    r.problem = problem;
    r.start = r.end = now;
    if (dependants_.contains(in_.jobs[i].job.id)) {
      state_.finished[in_.jobs[i].job.id] = DependencyOutcome::kFailed;
    }
    ReleaseDependencies(i);
    last_end_ = std::max(last_end_, now);
    ++done_;
  }

  // Job i left the queue: its dependencies no longer need to be remembered
  // for it.
  void ReleaseDependencies(size_t i) {
    for (const std::string& d : in_.jobs[i].job.depends_on) {
      auto it = dependants_.find(d);
      if (it == dependants_.end()) continue;
      if (--it->second == 0) {
        state_.finished.erase(d);
        dependants_.erase(it);
      }
    }
  }

  // True if no job can be admitted whatever is queued: every admission needs
  // a worker slot and memory and cpu > 0, and one of them has none free. Then
  // a Plan() after arrivals alone would admit nothing, so it is skipped (the
  // new jobs are planned at the next completion, which must come since jobs
  // run); the new jobs' wait is attributed to the exhausted dimension.
  bool Exhausted(absl::Time now) {
    Reason reason = Reason::kUnspecified;
    if (static_cast<int64_t>(state_.running.size()) >= in_.budgets.max_workers) {
      reason = Reason::kWaitingForWorkerSlot;
    } else if (used_memory_ >= in_.budgets.memory_bytes) {
      reason = Reason::kWaitingForMemory;
    } else if (used_cpu_ >= in_.budgets.cpu_millis) {
      reason = Reason::kWaitingForCpu;
    }
    if (reason == Reason::kUnspecified || completions_.empty()) return false;
    for (size_t k = 0; k < queued_owner_.size(); ++k) {
      size_t i = queued_owner_[k];
      if (cur_reason_[i] == Reason::kUnspecified && result_.jobs[i].arrival == now) {
        cur_reason_[i] = reason;
      }
    }
    ++result_.plan_calls_skipped;
    return true;
  }

  void PlanAndApply(absl::Time now) {
    // One call: Plan() rejects a whole failed chain (kDependencyFailed, then
    // kDependencyRejected for the jobs behind it) in one pass.
    if (state_.queued.empty()) return;
    {
      PlanResult plan = Plan(state_, in_.budgets, opt_.policy, now);
      ++result_.plan_calls;
      keep_.assign(state_.queued.size(), 1);
      for (const Decision& d : plan.decisions) {
        size_t i = queued_owner_[d.job];
        switch (d.verdict) {
          case Verdict::kAdmit: {
            CloseWait(i, now);
            cur_reason_[i] = Reason::kUnspecified;
            QueuedJob& q = state_.queued[d.job];
            RunningJob r;
            r.id = q.id;
            r.workspace = q.workspace;
            r.pool = q.pool;
            r.resources = q.resources;
            r.started_at = now;
            r.expected_duration = q.expected_duration;
            AddRunning(r, static_cast<Owner>(i));
            Start(i, now);
            keep_[d.job] = 0;
            break;
          }
          case Verdict::kReject: {
            bool dep = d.reason == Reason::kDependencyFailed;
            Leave(i, now, dep ? SimOutcome::kDependencyFailed : SimOutcome::kRejected,
                  d.problem);
            if (d.reason == Reason::kNeverFits) result_.never_fits.push_back(i);
            keep_[d.job] = 0;
            break;
          }
          default:
            if (cur_reason_[i] != d.reason) {
              CloseWait(i, now);
              cur_reason_[i] = d.reason;
            }
            break;
        }
      }
      // Compact the queue (order does not matter to Plan()).
      size_t w = 0;
      for (size_t k = 0; k < state_.queued.size(); ++k) {
        if (!keep_[k]) continue;
        if (w != k) {
          state_.queued[w] = std::move(state_.queued[k]);
          queued_owner_[w] = queued_owner_[k];
        }
        ++w;
      }
      state_.queued.resize(w);
      queued_owner_.resize(w);
    }
  }

  void BaselineAdmit(absl::Time now) {
    // FIFO: baseline_queue_ is in arrival order; skip jobs whose
    // dependencies are not done; admit while fewer than N run.
    size_t w = 0;
    for (size_t k = 0; k < baseline_queue_.size(); ++k) {
      size_t i = baseline_queue_[k];
      const QueuedJob& q = in_.jobs[i].job;
      bool ready = true, failed = false;
      for (const std::string& d : q.depends_on) {
        auto it = state_.finished.find(d);
        if (it == state_.finished.end()) {
          ready = false;
        } else if (it->second == DependencyOutcome::kFailed) {
          failed = true;
        }
      }
      if (failed) {
        Leave(i, now, SimOutcome::kDependencyFailed, Problem::kDependencyFailed);
        continue;
      }
      if (ready && static_cast<int64_t>(state_.running.size()) < baseline_limit_) {
        RunningJob r;
        r.id = q.id;
        r.workspace = q.workspace;
        r.pool = q.pool;
        r.resources = q.resources;
        r.started_at = now;
        r.expected_duration = q.expected_duration;
        AddRunning(r, static_cast<Owner>(i));
        Start(i, now);
        continue;
      }
      baseline_queue_[w++] = i;
    }
    baseline_queue_.resize(w);
  }

  void Record(absl::Time now) {
    SimUsagePoint p;
    p.time = now;
    p.memory_bytes = used_memory_;
    p.cpu_millis = used_cpu_;
    p.workers = static_cast<int32_t>(state_.running.size());
    p.queued = static_cast<int32_t>(queued_owner_.size() + baseline_queue_.size());
    if (used_memory_ > result_.peak_memory_bytes) {
      result_.peak_memory_bytes = used_memory_;
      result_.peak_memory_at = now;
    }
    result_.peak_cpu_millis = std::max(result_.peak_cpu_millis, used_cpu_);
    result_.peak_memory_over_budget =
        std::max(result_.peak_memory_over_budget, used_memory_ - in_.budgets.memory_bytes);
    result_.peak_cpu_over_budget =
        std::max(result_.peak_cpu_over_budget, used_cpu_ - in_.budgets.cpu_millis);
    auto& tl = result_.timeline;
    if (!tl.empty() && tl.back().time == now) {
      tl.back() = p;
    } else if (!tl.empty() && tl.back().memory_bytes == p.memory_bytes &&
               tl.back().cpu_millis == p.cpu_millis &&
               tl.back().workers == p.workers && tl.back().queued == p.queued) {
      // Unchanged: the step continues.
    } else {
      tl.push_back(p);
    }
  }

  void ReportProgress() {
    if (!opt_.progress || n_ == 0) return;
    size_t step = std::max<size_t>(1, n_ / 100);
    if (done_ / step != last_progress_) {
      last_progress_ = done_ / step;
      opt_.progress(static_cast<double>(done_) / static_cast<double>(n_));
    }
  }

  const SimInput& in_;
  const SimOptions& opt_;
  const size_t n_;
  const absl::Duration default_duration_;
  int64_t baseline_limit_ = 0;

  SimResult result_;
  State state_;
  std::vector<size_t> queued_owner_;   // parallel to state_.queued
  std::vector<Owner> running_owner_;   // parallel to state_.running
  std::vector<int64_t> running_pos_;   // per sim job, -1 if not running
  std::vector<int64_t> initial_pos_;   // per initial running job
  std::vector<size_t> baseline_queue_;  // kCountBaseline, FIFO order
  std::vector<absl::Time> arrival_;
  absl::flat_hash_map<absl::string_view, size_t> index_;  // id -> jobs index
  absl::flat_hash_map<std::string, absl::Time> initial_end_;  // running at start
  // Per id: how many jobs that have not left the queue depend on it.
  absl::flat_hash_map<std::string, int64_t> dependants_;
  std::vector<size_t> order_;  // jobs by arrival
  size_t next_arrival_ = 0;
  std::priority_queue<Completion, std::vector<Completion>, std::greater<>>
      completions_;
  uint64_t seq_ = 0;
  int64_t used_memory_ = 0;
  int64_t used_cpu_ = 0;
  absl::Time last_end_;
  size_t done_ = 0;
  size_t last_progress_ = 0;
  std::vector<uint8_t> keep_;
  std::vector<Reason> cur_reason_;
  std::vector<absl::Time> cur_since_;
  std::vector<absl::Duration> reason_time_;  // n_ x kReasonCount
};

}  // namespace

absl::string_view SimOutcomeName(SimOutcome o) {
  switch (o) {
    case SimOutcome::kSucceeded:
      return "SUCCEEDED";
    case SimOutcome::kFailed:
      return "FAILED";
    case SimOutcome::kDependencyFailed:
      return "DEPENDENCY_FAILED";
    case SimOutcome::kRejected:
      return "REJECTED";
    case SimOutcome::kNotRun:
      return "NOT_RUN";
  }
  return "UNKNOWN";
}

SimResult Simulate(const SimInput& input, const SimOptions& options) {
  return Simulation(input, options).Run();
}

}  // namespace berth::planner
