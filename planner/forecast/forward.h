// The forward forecast behind every ETA (eta.h), as a resumable walk: the
// planner playing the current state forward with no arrivals and exact
// estimates, one forecast plan per Step(), so that a reader who needs only
// the first jobs' estimates pays only for the plans that start them
// (StartEstimateTable), and a reader who needs all of them continues the
// same walk (ForecastStarts): one forecast per plan, however it is read.
//
// Internal to planner/forecast.
//
// Thread-compatible: one caller at a time (StartEstimateTable holds a mutex).
#ifndef BERTH_PLANNER_FORECAST_FORWARD_H_
#define BERTH_PLANNER_FORECAST_FORWARD_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <queue>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/time/time.h"
#include "planner/forecast/eta.h"
#include "planner/model/model.h"
#include "planner/plan/incremental.h"
#include "planner/plan/plan.h"
#include "planner/ranking/policy.h"
#include "planner/starts/start_model.h"

namespace berth::planner::internal {

class Forward {
 public:
  // Receives each decision's estimate exactly once, when it is final.
  using Sink = std::function<void(size_t decision, const StartEstimate&)>;

  // Copies what it changes of `state` (the queue, the running jobs); keeps
  // references to the rest. state, budgets, policy, result and options must
  // outlive it. REQUIRES: result = Plan(state, budgets, policy, result.now).
  // Calls `sink` for every decision that the given plan settles (admitted
  // now, rejected).
  Forward(const State& state, const Budgets& budgets, const Policy& policy,
          const PlanResult& result, const ForecastOptions& options, Sink sink);

  Forward(const Forward&) = delete;
  Forward& operator=(const Forward&) = delete;

  // Makes the next forecast plan and reports the jobs it starts or rejects.
  // Returns false, having reported every decision still open (beyond the
  // forecast, reserved, or unknown), once the forecast is over: no job
  // left, nothing left that ends, or a bound reached. Then done().
  bool Step();
  bool done() const { return done_; }

  // Plans made after the given one, and the sum of the jobs they decided
  // (a whole-queue plan decides its queue; an incremental one its prefix,
  // incremental.h).
  int64_t plans() const { return plans_; }
  int64_t planned_jobs() const { return planned_jobs_; }
  // Forecast::bounded / covered; final once done().
  bool bounded() const { return bounded_; }
  absl::Time covered() const { return done_ && !bounded_ ? absl::InfinitePast() : covered_; }

 private:
  // A job holding resources ends (by its estimate).
  struct End {
    absl::Time at;
    uint64_t seq;
    size_t slot;  // index into slot_id_
    bool operator>(const End& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };

  using TimeHeap = std::priority_queue<absl::Time, std::vector<absl::Time>, std::greater<>>;

  void Setup();
  void Finish();
  // A running job `id` was added: a slot tracks its end.
  size_t NewSlot(const std::string& id);
  void EndAt(size_t slot, absl::Time end);
  // The executor model (forward_starts.cc): the job in `slot`, admitted at
  // `t`, runs `run` once its container has started.
  void Launch(size_t slot, absl::Time t, absl::Duration run);
  // The job in `slot`, admitted at `admitted`, runs `run` from `at`.
  void RunContainer(size_t slot, absl::Time admitted, absl::Time at, absl::Duration run);
  absl::Time NextWakeup();
  void Complete(size_t slot);
  // What the queued `job` becomes, admitted at `t` on `node` (-1: none) of
  // `plan`: made before the job leaves the queue.
  static RunningJob RunningOf(const QueuedJob& job, absl::Time t, int32_t node,
                              const PlanResult& plan);
  // The admitted job starts: it holds its resources and is launched.
  void Start(RunningJob r);
  // The forecast's queued job at `index` leaves the queue.
  void Dequeue(size_t index);
  void Leave(const QueuedJob& job);
  void ApplyFirst();
  void Apply(const PlanResult& plan, absl::Time t);

  const State& state_;
  const Budgets& budgets_;
  const Policy& policy_;
  const PlanResult& result_;
  const ForecastOptions& options_;
  Sink sink_;

  absl::Time last_;  // no forecast plan after it
  bool done_ = false;
  bool bounded_ = false;
  absl::Time covered_;
  int64_t plans_ = 0;
  int64_t planned_jobs_ = 0;

  // The forecast's own state, planned incrementally from one end to the
  // next (only the decided prefix of each plan is read).
  std::unique_ptr<IncrementalPlanner> planner_;
  PlanResult plan_;                    // the latest forecast plan (buffers reused)
  std::vector<uint32_t> decision_of_;  // parallel to planner_->state().queued
  std::vector<std::string> slot_id_;   // slot -> the running job's id
  std::priority_queue<End, std::vector<End>, std::greater<>> ends_;
  absl::flat_hash_set<std::string> depended_;
  uint64_t seq_ = 0;

  // The executor model's state.
  absl::Time last_plan_;
  StartModel starts_;     // the container starts, as the simulator plays them
  TimeHeap wakeups_;      // container starts to plan at
};

}  // namespace berth::planner::internal

#endif  // BERTH_PLANNER_FORECAST_FORWARD_H_
