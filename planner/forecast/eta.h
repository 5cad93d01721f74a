// Start estimates for the queued jobs of a plan: when each job starts if
// every estimate holds and nothing else arrives — the planner's own forward
// simulation of the current state, never "now" for a job that cannot start
// now.
//
// The forecast (forecast.cc) plays the plan forward with the planner itself:
// the plan's admissions start now; every running and started job ends at
// its expected end (the overrun rule of planner/plan/prepare.h for running
// jobs past their estimate, the policy's default duration where there is no
// estimate); at each instant something ends, Plan() is called on what is
// left — with the reservation and the fair turns carried from one plan to
// the next (CarryReservation), backfill, aging, pools, workspace caps, nodes
// and dependencies (a dependant becomes eligible when its parents' forecast
// ends) exactly as berthd and the simulator (planner/simulator) apply them.
// A waiting job's ETA is the instant a forecast plan admits it. So with
// exact estimates and no arrivals every ETA equals the start
// planner::Simulate() gives the job from the same state (forecast_property_test).
//
// Bounded: the forecast stops before a plan that would take the work past
// ForecastOptions::max_planned_jobs (the sum of the jobs its plans decide:
// a plan costs about the jobs it decides) or at an instant past
// now + ForecastOptions::horizon. Jobs it has not started by then get
// EtaKind::kBeyondForecast with the instant the forecast covers ("not before
// this"): never a made-up number.
//
// Thread-safe: ForecastStarts and EstimateStarts are pure functions of their
// arguments; StartEstimateTable locks.
#ifndef BERTH_PLANNER_FORECAST_ETA_H_
#define BERTH_PLANNER_FORECAST_ETA_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "planner/model/model.h"
#include "planner/plan/plan.h"
#include "planner/ranking/policy.h"

namespace berth::planner {

namespace internal {
class Forward;  // forward.h
}  // namespace internal

enum class EtaKind : uint8_t {
  // No start exists: paused, pool in maintenance, rejected, a dependency
  // that never succeeds, or it never fits what the forecast leaves free.
  kUnknown = 0,
  // Admitted by this plan: starts now.
  kNow = 1,
  // Holds the head-of-line reservation: a start Berth keeps (backfill never
  // delays it) unless estimates prove wrong or a higher priority arrives.
  // The time is the forecast's start (= the reservation's start when the
  // estimates hold).
  kReserved = 2,
  // Waiting: the start the forecast gives it, if every estimate holds and
  // nothing else arrives. Always after now. Estimates that prove too long
  // make it earlier, too short later; arrivals of higher rank, later.
  kIfEstimatesHold = 3,
  // Not started within the forecast's bound: starts after `time` (the last
  // instant the forecast covered), if at all.
  kBeyondForecast = 4,
};

// "unknown", "now", "reserved", "if_estimates_hold", "beyond_forecast".
absl::string_view EtaKindName(EtaKind k);

struct StartEstimate {
  EtaKind kind = EtaKind::kUnknown;
  // The start; for kBeyondForecast the instant the forecast covers (the
  // job starts after it); InfiniteFuture() if unknown.
  absl::Time time = absl::InfiniteFuture();
  // With Budgets::nodes: the node it starts on in the forecast (index into
  // PlanResult::nodes); -1 without nodes, if unknown or beyond the forecast.
  int32_t node = -1;
};

// How the executor starts containers, as planner::SimOptions models it
// (start_latency, start_contention, start_parallelism, finish_latency; the
// model berth-plan simulates and berth-fidelity calibrates). A job holds its
// capacity from admission until its container has started, run its
// estimate and been seen to end; the planner still dates it from its
// admission, so in the gap past admission + estimate it is a running job
// past its estimate (the overrun rule) to every plan made then. All zero:
// capacity comes back at admission + estimate.
struct ExecutorModel {
  // A container runs from admission + start_latency (>= 0).
  absl::Duration start_latency = absl::ZeroDuration();
  // > 0: the last start_contention of start_latency is work every start in
  // flight shares equally (SimOptions::start_contention).
  absl::Duration start_contention = absl::ZeroDuration();
  // > 0: at most this many starts in flight, the others wait in admission
  // order (berthd's --start_parallelism). 0: unbounded.
  int32_t start_parallelism = 0;
  // Capacity comes back this long after the container ends (>= 0).
  absl::Duration finish_latency = absl::ZeroDuration();
  // Also plan when a container starts (a store change in berthd), as
  // SimOptions::plan_at_starts; skipped when the budgets are used up.
  bool plan_at_starts = true;

  bool zero() const {
    return start_latency <= absl::ZeroDuration() && finish_latency <= absl::ZeroDuration();
  }
};

struct ForecastOptions {
  // Work bound: the forecast stops before a plan that would bring the sum of
  // the jobs its plans decided above this. The forecast plans incrementally
  // (planner/plan/incremental.h): a plan decides the prefix of the ranking
  // up to the first job that waits for a worker slot once the reservation is
  // placed, a whole-queue plan (the fallback) its queue; a decided job costs
  // ~0.1-1 µs on this project's 2-core machine (docs/BENCHMARKS.md
  // "Forecast"), so the default keeps a forecast within seconds at any queue
  // size. <= 0: only the plan given (every waiting job beyond the forecast).
  int64_t max_planned_jobs = 4'000'000;
  // Time bound: no forecast plan after now + horizon. Default 30 days: a
  // forecast plan costs about the same at any instant, so the forecast's cost
  // grows with the span it covers. The benchmark's 100k queue drains in
  // 60-75 days (every job dated with 75, ~7 s CPU under drf); at 1M a 75-day
  // forecast took ~38 s CPU against ~11 s at 30 days (docs/BENCHMARKS.md
  // "Forecast"), so the default stays at 30 days and jobs starting later get
  // "after T".
  absl::Duration horizon = absl::Hours(24 * 30);
  // The executor the forecast plays the plan on. The default (all zero)
  // forecasts the planner alone: exact against planner::Simulate() with no
  // latencies; berthd passes its own start model so that ETAs hold against
  // the latency it really has (docs/DESIGN.md "Promises").
  ExecutorModel executor;
};

// The forecast's estimates and how far it went.
struct Forecast {
  // One per result.decisions[k].
  std::vector<StartEstimate> starts;
  // Plans the forecast made after the given one.
  int64_t plans = 0;
  // Sum of the jobs they decided (ForecastOptions::max_planned_jobs).
  int64_t planned_jobs = 0;
  // True if it stopped at a bound with jobs still waiting (some estimates
  // are kBeyondForecast); `covered` is then the last instant it planned at
  // (result.now if it made no plan).
  bool bounded = false;
  absl::Time covered = absl::InfinitePast();
};

// The forecast of a plan. REQUIRES: result = Plan(state, budgets, policy,
// result.now).
[[nodiscard]] Forecast ForecastStarts(const State& state, const Budgets& budgets,
                                      const Policy& policy, const PlanResult& result,
                                      const ForecastOptions& options = {});

// ForecastStarts(...).starts.
[[nodiscard]] std::vector<StartEstimate> EstimateStarts(const State& state,
                                                        const Budgets& budgets,
                                                        const Policy& policy,
                                                        const PlanResult& result,
                                                        const ForecastOptions& options = {});

// Every decision's estimate of one plan, from one forecast that advances only
// as far as the estimates read so far need: reading decision k makes the
// forecast plans up to the one that settles k (starts it, or ends the
// forecast), never more, and every later read continues the same walk. So a
// reader of the first rows (GetPlan with a limit, ExplainJob of a job near
// the head, a dashboard page) pays for the plans that start those rows, and
// all readers of one plan together pay for at most one forecast. Estimates
// are kept in 16 bytes each (a StartEstimate is 32): a time as nanoseconds
// after result.now; the rare one that is not a whole number of them (or is
// out of range) is kept exactly on the side.
//
// Thread-safe: reads are serialised by a mutex; a read that advances the
// forecast takes it once per forecast plan.
class StartEstimateTable {
 public:
  // An empty table.
  StartEstimateTable();
  // The forecast of `result` (ForecastStarts), started: its set-up and the
  // given plan's admissions now, its plans as reads need them. Keeps copies
  // of budgets, policy and options; state and result must outlive the table.
  StartEstimateTable(const State& state, const Budgets& budgets, const Policy& policy,
                     const PlanResult& result, const ForecastOptions& options = {});
  ~StartEstimateTable();
  StartEstimateTable(const StartEstimateTable&) = delete;
  StartEstimateTable& operator=(const StartEstimateTable&) = delete;

  // result.decisions.size().
  size_t size() const { return size_; }
  // Equal in every field to EstimateStarts(...)[k]; advances the forecast
  // until k's estimate is final. REQUIRES: k < size().
  StartEstimate operator[](size_t k) const;
  // The forecast's bound (Forecast::bounded / covered); completes it.
  bool bounded() const;
  absl::Time covered() const;
  // Whether every estimate is final already (never advances).
  bool complete() const;
  // Makes the rest of the forecast, one plan per hold of the lock, so that
  // readers of estimates already final are not held up behind it (for a
  // background thread that readies the table before pages read it). Stops
  // early, keeping what it made, once `deadline` has passed. Returns
  // complete().
  bool Complete(absl::Time deadline = absl::InfiniteFuture()) const;
  // Forecast plans made so far (Forecast::plans once complete).
  int64_t plans() const;

 private:
  // offset_ns: time - now in nanoseconds, or one of the two markers below.
  struct Packed {
    int64_t offset_ns = 0;
    int32_t node = -1;
    EtaKind kind = EtaKind::kUnknown;
    bool final = false;
  };
  static_assert(sizeof(Packed) == 16, "16 bytes a decision: 16 MB at 1M jobs");
  static constexpr int64_t kInfinite = INT64_MAX;  // InfiniteFuture()
  static constexpr int64_t kInexact = INT64_MIN;   // in inexact_

  void Put(size_t k, const StartEstimate& e) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void CompleteLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  StartEstimate ReadLocked(size_t k) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Budgets budgets_;
  const Policy policy_;
  const ForecastOptions options_;
  const absl::Time now_;
  const size_t size_ = 0;
  mutable absl::Mutex mu_;
  mutable std::vector<Packed> packed_ ABSL_GUARDED_BY(mu_);
  mutable absl::flat_hash_map<uint32_t, absl::Time> inexact_ ABSL_GUARDED_BY(mu_);  // by index
  // The walk; null once complete (its copies of the queue freed).
  mutable std::unique_ptr<internal::Forward> forward_ ABSL_GUARDED_BY(mu_);
  mutable bool bounded_ ABSL_GUARDED_BY(mu_) = false;
  mutable absl::Time covered_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  mutable int64_t plans_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace berth::planner

#endif  // BERTH_PLANNER_FORECAST_ETA_H_
