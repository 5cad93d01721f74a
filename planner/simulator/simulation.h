// Internal to the simulator (simulator.h): the state of one simulation run.
// Split by concern: simulator.cc drives events (arrivals, starts, ends),
// simulator_admit.cc asks the planner (or the count-only baseline) what to
// start, simulator_record.cc keeps the per-job wait reasons and the usage
// timeline.
//
// Not thread-safe: one per Simulate() call.
#ifndef BERTH_PLANNER_SIMULATOR_SIMULATION_H_
#define BERTH_PLANNER_SIMULATOR_SIMULATION_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <queue>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "planner/model/model.h"
#include "planner/plan/incremental.h"
#include "planner/plan/plan.h"
#include "planner/model/reasons.h"
#include "planner/simulator/simulator.h"
#include "planner/starts/start_model.h"

namespace berth::planner::internal {

inline constexpr int kReasonCount = 13;  // Reason values 0..12

// Waits summed as whole quarter nanoseconds (absl::Duration's resolution):
// exact as Duration sums are, but added inline (Duration's += is a call
// into the shared absl library), and wide enough for any finite time.
using Quarters = __int128;
// REQUIRES: t finite.
inline Quarters ToQuarters(absl::Time t) {
  const absl::Duration d = absl::time_internal::ToUnixDuration(t);
  return static_cast<Quarters>(absl::time_internal::GetRepHi(d)) *
             absl::time_internal::kTicksPerSecond +
         absl::time_internal::GetRepLo(d);
}
// REQUIRES: q fits a Duration (the difference of two finite times does).
inline absl::Duration FromQuarters(Quarters q) {
  constexpr Quarters kPerSecond = absl::time_internal::kTicksPerSecond;
  Quarters hi = q / kPerSecond, lo = q % kPerSecond;
  if (lo < 0) {
    lo += kPerSecond;
    hi -= 1;
  }
  return absl::time_internal::MakeDuration(static_cast<int64_t>(hi),
                                           static_cast<uint32_t>(lo));
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
  // REQUIRES: in and opt outlive the Simulation.
  Simulation(const SimInput& in, const SimOptions& opt);
  SimResult Run();

 private:
  // simulator.cc: events.
  void Setup();
  void AddRunning(const RunningJob& r, Owner owner);
  void Complete(Owner owner, absl::Time now);
  void Arrive(size_t i, absl::Time now);
  void Start(size_t i, absl::Time now);
  // Job i's container runs from `at` for `run`: schedules its end.
  void RunContainer(size_t i, absl::Time at, absl::Duration run);

  // simulator_starts.cc: the start jitter.
  // Job i's fixed start delay `delay`, moved by SimOptions::start_jitter
  // (never below 0).
  absl::Duration Jittered(size_t i, absl::Duration delay) const;
  void Leave(size_t i, absl::Time now, SimOutcome outcome, Problem problem);
  // Job i left the queue: its dependencies no longer need to be remembered
  // for it.
  void ReleaseDependencies(size_t i);

  // simulator_admit.cc: what starts.
  void PlanAndApply(absl::Time now);
  void BaselineAdmit(absl::Time now);
  // Starts job i (whose queued form is q) now.
  // `node`: the node Plan() placed it on (Budgets::nodes), "" without.
  void StartQueued(size_t i, const QueuedJob& q, absl::Time now,
                   const std::string& node = std::string());

  // simulator_record.cc: accounting.
  // Ends job i's current wait reason at `now`.
  void CloseWait(size_t i, absl::Time now);
  void Record(absl::Time now);
  void ReportProgress();

  // simulator_admit.cc: the queued jobs whose wait for a dependency the
  // next incremental plan must ask the planner about (they arrived, a
  // dependency of theirs ended, or a whole plan decided them).
  void Watch(size_t i);
  void WatchWaiters(const std::string& id);
  // The queued job at index k of the planner's queue leaves it.
  void Dequeue(size_t k);
  // After an incremental plan (IncrementalPlanner::Detail::kPrefixFree,
  // call number `call`): every queued job the plan did not decide takes
  // the reason Plan() gives it beyond the prefix.
  void SetTailReasons(const PlanResult& plan, int64_t call, absl::Time now);
  // Sorts the queue into by_memory_ and by_cpu_.
  void SortQueue();
  // Job i's wait reason is `r` from now on (closing the one before if it
  // differs). REQUIRES: i is queued.
  void SetReason(size_t i, Reason r, absl::Time now);
  // Where each of the simulator's pool or workspace names is among a plan's
  // sorted names (-1: absent), for the names it was found among.
  struct NameMap {
    bool valid = false;
    std::vector<std::string> names;
    std::vector<int64_t> at;
  };
  // What each of `mine` had free after the walk (index n + 1 for mine[n]),
  // from the plan's free amounts by sorted name; index 0 (and a name the
  // plan does not know) unlimited.
  static void FreeByName(const std::vector<std::string>& names, const std::vector<int64_t>& free,
                         const std::vector<std::string>& mine, NameMap& map,
                         std::vector<int64_t>& out);

  const SimInput& in_;
  const SimOptions& opt_;
  const size_t n_;
  const absl::Duration default_duration_;
  int64_t baseline_limit_ = 0;

  SimResult result_;
  // Running and finished jobs (both modes); the planner's own state holds
  // them too, and the queue (kPlanner).
  State state_;
  IncrementalPlanner planner_;
  PlanResult plan_;
  std::vector<size_t> queued_owner_;   // parallel to planner_.state().queued
  // What a plan's tail reason reads of each queued job, parallel to
  // queued_owner_ and kept together for the sweep over the queue after
  // every incremental plan.
  struct Queued {
    int64_t memory = 0;
    int64_t cpu = 0;
    int64_t decided_in = -1;  // the plan call that last decided it
    uint32_t pool = 0;        // index into capped_pools_ + 1; 0: no cap
    uint32_t workspace = 0;   // index into workspaces_ + 1; 0: no cap
    Reason reason = Reason::kUnspecified;  // = cur_reason_ of its job
    // Waiting for a dependency, as of the last plan that looked at it.
    bool pending = false;
  };
  std::vector<Queued> queued_;
  // The pools with a worker cap and (with Budgets::workspace_max_workers)
  // the workspaces, by name; and what each had free after the last plan's
  // walk (index 0: uncapped).
  std::vector<std::string> capped_pools_;
  std::vector<std::string> workspaces_;
  absl::flat_hash_map<std::string, uint32_t> pool_id_, workspace_id_;
  // (Only whether one is free: min(free, 1).)
  std::vector<int64_t> pool_free_, workspace_free_;
  NameMap pool_map_, workspace_map_;
  // SetTailReasons: whether a sweep gave every job not decided its reason
  // since the last whole plan, and the free amounts it read; the jobs the
  // last plan and this one decided to keep waiting (SimInput::jobs
  // indices).
  bool swept_ = false;
  Amounts swept_free_;
  std::vector<int64_t> swept_pool_free_, swept_workspace_free_;
  std::vector<size_t> prev_decided_, decided_;
  // The queued jobs (SimInput::jobs indices) by memory and by cpu as of the
  // last SortQueue(), which also empties joined_, the jobs queued since (a
  // job that left stays in them until the next sort).
  std::vector<std::pair<int64_t, size_t>> by_memory_, by_cpu_;
  std::vector<size_t> joined_;
  // The sweep's new reasons (job, reason), applied once it is done.
  std::vector<std::pair<size_t, Reason>> changes_;
  std::vector<int64_t> queue_pos_;     // per sim job, -1 if not queued
  std::vector<size_t> watch_;
  std::vector<uint8_t> watched_;
  // Per id: the jobs that depend on it.
  absl::flat_hash_map<std::string, std::vector<size_t>> waiters_;
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
  // The executor's container starts (SimOptions' start latency,
  // contention and parallelism), shared with the forecast.
  StartModel starts_;
  // SimOptions::plan_at_starts: container starts still to plan at, and
  // the last instant planned at.
  std::priority_queue<absl::Time, std::vector<absl::Time>, std::greater<>> wakeups_;
  absl::Time last_plan_ = absl::InfinitePast();
  // The next start after last_plan_ to plan at, InfiniteFuture() if none.
  absl::Time NextWakeup();
  uint64_t seq_ = 0;
  int64_t used_memory_ = 0;
  int64_t used_cpu_ = 0;
  absl::Time last_end_;
  size_t done_ = 0;
  size_t last_progress_ = 0;
  std::vector<uint8_t> keep_;
  std::vector<Reason> cur_reason_;
  std::vector<absl::Time> cur_since_;
  // n_ x kReasonCount: per job, the wait under each reason; in the slot
  // of kUnspecified (never a wait's reason), the largest of them.
  static constexpr int kMainSlot = static_cast<int>(Reason::kUnspecified);
  std::vector<Quarters> reason_time_;
};

}  // namespace berth::planner::internal

#endif  // BERTH_PLANNER_SIMULATOR_SIMULATION_H_
