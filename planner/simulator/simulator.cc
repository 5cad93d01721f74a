// The simulator's events: arrivals, starts and ends. See simulator.h and
// simulation.h.
#include "planner/simulator/simulator.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "planner/simulator/simulation.h"
#include "planner/simulator/simulator_arrivals.h"

namespace berth::planner {
namespace internal {
namespace {

absl::Duration Effective(absl::Duration d, absl::Duration fallback) {
  return d > absl::ZeroDuration() ? d : fallback;
}

}  // namespace

Simulation::Simulation(const SimInput& in, const SimOptions& opt)
    : in_(in),
      opt_(opt),
      n_(in.jobs.size()),
      default_duration_(opt.policy.default_duration > absl::ZeroDuration()
                            ? opt.policy.default_duration
                            : absl::Hours(1)),
      starts_({opt.start_latency, opt.start_contention, opt.start_parallelism},
              [this](size_t i, absl::Time, absl::Time at, absl::Duration run) {
                RunContainer(i, at, run);
              },
              [this](size_t i, absl::Duration delay) { return Jittered(i, delay); }) {}

SimResult Simulation::Run() {
  Setup();
  absl::Time now = in_.start;
  Record(now);
  while (true) {
    absl::Time next = absl::InfiniteFuture();
    if (next_arrival_ < order_.size()) next = arrival_[order_[next_arrival_]];
    if (!completions_.empty()) next = std::min(next, completions_.top().end);
    if (const absl::Time s = starts_.NextEvent();
        s != absl::InfiniteFuture() && s <= std::min(next, NextWakeup())) {
      // A start ends (or begins its shared work) first: that may schedule
      // an end or a plan at a container start.
      starts_.Advance(s);
      continue;
    }
    if (next == absl::InfiniteFuture()) break;
    if (const absl::Time wake = NextWakeup(); wake < next) {
      // A container started: nothing arrives or ends, time has moved.
      now = std::max(now, wake);
      PlanAndApply(now);
      last_plan_ = now;
      Record(now);
      continue;
    }
    now = std::max(now, next);
    while (!completions_.empty() && completions_.top().end <= now) {
      Complete(completions_.top().owner, now);
      completions_.pop();
    }
    while (next_arrival_ < order_.size() &&
           arrival_[order_[next_arrival_]] <= now) {
      Arrive(order_[next_arrival_++], now);
    }
    last_plan_ = now;
    if (opt_.mode == SimMode::kPlanner) {
      PlanAndApply(now);
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
    r.start = r.end = r.run_start = r.run_end = now;
  }
  for (size_t i : baseline_queue_) {
    SimJobResult& r = result_.jobs[i];
    r.outcome = SimOutcome::kNotRun;
    r.start = r.end = r.run_start = r.run_end = now;
  }
  result_.end = std::max(result_.start, last_end_);
  if (!result_.timeline.empty() && result_.timeline.back().time < result_.end) {
    Record(result_.end);
  }
  if (opt_.progress) opt_.progress(1.0);
  return std::move(result_);
}

void Simulation::Setup() {
  result_.start = in_.start;
  result_.end = in_.start;
  result_.jobs.resize(n_);
  last_end_ = in_.start;
  cur_reason_.assign(n_, Reason::kUnspecified);
  cur_since_.assign(n_, in_.start);
  reason_time_.assign(n_ * kReasonCount, 0);
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
    for (const std::string& d : in_.jobs[i].job.depends_on) {
      ++dependants_[d];
      waiters_[d].push_back(i);
    }
  }
  planner_.set_whole_queue_only(opt_.whole_queue_plans);
  if (opt_.mode == SimMode::kPlanner) {
    State controls;
    RestoreMemory(in_.memory, controls);
    planner_.SetControls(controls);
  }
  queue_pos_.assign(n_, -1);
  watched_.assign(n_, 0);
  // The pools and workspaces whose free worker slots a tail reason reads
  // (the others are unlimited: id 0).
  for (const auto& [pool, cap] : in_.budgets.pool_max_workers) {
    if (cap > 0) pool_id_.emplace(pool, 0);
  }
  for (const SimJob& j : in_.jobs) {
    if (auto it = pool_id_.find(j.job.pool); it != pool_id_.end() && it->second == 0) {
      capped_pools_.push_back(j.job.pool);
      it->second = static_cast<uint32_t>(capped_pools_.size());
    }
    if (in_.budgets.workspace_max_workers > 0 &&
        workspace_id_.emplace(j.job.workspace, workspaces_.size() + 1).second) {
      workspaces_.push_back(j.job.workspace);
    }
  }

  internal::Arrivals arrivals = internal::ComputeArrivals(in_, index_);
  arrival_ = std::move(arrivals.time);
  order_ = std::move(arrivals.order);

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

void Simulation::AddRunning(const RunningJob& r, Owner owner) {
  if (owner >= 0) {
    running_pos_[owner] = static_cast<int64_t>(state_.running.size());
  } else {
    initial_pos_[-owner - 1] = static_cast<int64_t>(state_.running.size());
  }
  state_.running.push_back(r);
  if (opt_.mode == SimMode::kPlanner) planner_.AddRunning(r);
  running_owner_.push_back(owner);
  used_memory_ += std::max<int64_t>(0, r.resources.memory_bytes);
  used_cpu_ += std::max<int64_t>(0, r.resources.cpu_millis);
}

void Simulation::Complete(Owner owner, absl::Time now) {
  int64_t pos = owner >= 0 ? running_pos_[owner] : initial_pos_[-owner - 1];
  const RunningJob& r = state_.running[pos];
  if (opt_.mode == SimMode::kPlanner) planner_.RemoveRunning(r.id);
  used_memory_ -= std::max<int64_t>(0, r.resources.memory_bytes);
  used_cpu_ -= std::max<int64_t>(0, r.resources.cpu_millis);
  bool failed =
      owner >= 0 && (in_.jobs[owner].fails || result_.jobs[owner].timed_out);
  if (dependants_.contains(r.id)) {
    const DependencyOutcome outcome =
        failed ? DependencyOutcome::kFailed : DependencyOutcome::kSucceeded;
    state_.finished[r.id] = outcome;
    if (opt_.mode == SimMode::kPlanner) {
      planner_.SetFinished(r.id, outcome);
      WatchWaiters(r.id);
    }
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

void Simulation::Arrive(size_t i, absl::Time now) {
  SimJobResult& r = result_.jobs[i];
  r.arrival = now;
  r.ready = now;
  cur_since_[i] = now;
  if (opt_.mode == SimMode::kPlanner) {
    QueuedJob q = in_.jobs[i].job;
    // A job without created_at dates from when it was first seen, as
    // berthd dates it from queued_at (aging never counts from 1970); and
    // its arrival is when it was first queued, what aging counts from (a
    // backlog arriving with old created_at keeps its levels).
    if (q.created_at <= absl::UnixEpoch()) q.created_at = now;
    if (q.queued_at <= absl::UnixEpoch()) q.queued_at = now;
    queue_pos_[i] = static_cast<int64_t>(queued_owner_.size());
    Queued& tail = queued_.emplace_back();
    tail.memory = q.resources.memory_bytes;
    tail.cpu = q.resources.cpu_millis;
    if (auto it = pool_id_.find(q.pool); it != pool_id_.end()) tail.pool = it->second;
    if (auto it = workspace_id_.find(q.workspace); it != workspace_id_.end())
      tail.workspace = it->second;
    planner_.Enqueue(std::move(q));
    queued_owner_.push_back(i);
    joined_.push_back(i);
    Watch(i);
  } else {
    baseline_queue_.push_back(i);
  }
}

void Simulation::Start(size_t i, absl::Time now) {
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
  // The executor's latencies: the container runs after a start latency, and
  // the capacity comes back a finish latency after it ends.
  starts_.Request(i, now, run);
}

void Simulation::RunContainer(size_t i, absl::Time at, absl::Duration run) {
  SimJobResult& r = result_.jobs[i];
  r.run_start = at;
  r.run_end = at + run;
  const absl::Time end = r.run_end + std::max(absl::ZeroDuration(), opt_.finish_latency);
  completions_.push({end, seq_++, static_cast<Owner>(i)});
  if (opt_.plan_at_starts && opt_.mode == SimMode::kPlanner && at > r.start) {
    // berthd records RUNNING, a store change, and plans again.
    wakeups_.push(at);
  }
}

absl::Time Simulation::NextWakeup() {
  while (!wakeups_.empty() && wakeups_.top() <= last_plan_) wakeups_.pop();
  return wakeups_.empty() ? absl::InfiniteFuture() : wakeups_.top();
}

void Simulation::Leave(size_t i, absl::Time now, SimOutcome outcome, Problem problem) {
  CloseWait(i, now);
  SimJobResult& r = result_.jobs[i];
  r.outcome = outcome;
  r.problem = problem;
  r.start = r.end = r.run_start = r.run_end = now;
  if (dependants_.contains(in_.jobs[i].job.id)) {
    state_.finished[in_.jobs[i].job.id] = DependencyOutcome::kFailed;
    if (opt_.mode == SimMode::kPlanner) {
      planner_.SetFinished(in_.jobs[i].job.id, DependencyOutcome::kFailed);
      WatchWaiters(in_.jobs[i].job.id);
    }
  }
  ReleaseDependencies(i);
  last_end_ = std::max(last_end_, now);
  ++done_;
}

// Job i left the queue: its dependencies no longer need to be remembered
// for it.
void Simulation::ReleaseDependencies(size_t i) {
  for (const std::string& d : in_.jobs[i].job.depends_on) {
    auto it = dependants_.find(d);
    if (it == dependants_.end()) continue;
    if (--it->second == 0) {
      state_.finished.erase(d);
      if (opt_.mode == SimMode::kPlanner) planner_.ForgetFinished(d);
      dependants_.erase(it);
    }
  }
}

}  // namespace internal

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

std::vector<absl::Time> ArrivalTimes(const SimInput& input) {
  // Only the jobs some job depends on are looked up by id: a queue without
  // dependencies hashes no id (a million ids hashed were a twentieth of
  // `berth-plan now`'s run).
  absl::flat_hash_set<absl::string_view> depended;
  for (const SimJob& j : input.jobs) {
    for (const std::string& d : j.job.depends_on) depended.insert(d);
  }
  absl::flat_hash_map<absl::string_view, size_t> index;
  if (!depended.empty()) {
    for (size_t i = 0; i < input.jobs.size(); ++i) {
      if (depended.contains(input.jobs[i].job.id)) index.emplace(input.jobs[i].job.id, i);
    }
  }
  return internal::ComputeArrivalTimes(input, index);
}

SimResult Simulate(const SimInput& input, const SimOptions& options) {
  return internal::Simulation(input, options).Run();
}

}  // namespace berth::planner
