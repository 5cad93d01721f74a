// Simulator: a deterministic discrete-event simulation of a workload under
// the real planner. Jobs arrive at their offsets, run for their actual
// duration (which may differ from the estimate the planner sees), succeed or
// fail; failures fail their dependants. Plan() is called at every instant at
// which something arrives or finishes (events at the same instant are
// processed together: completions first, then arrivals, then one Plan(),
// which is told the previous plan's reservation holder), as berthd plans at
// every change of its store — also while nothing can be admitted: such a
// plan still moves the reservation to a job that now ranks first (aged, or
// of a higher priority) and refreshes aging's memory of the top priority.
//
// A second, deliberately different admission rule is available as a
// baseline (SimMode::kCountBaseline): the count-only limit the old backend
// used — at most N running jobs, first come first served, blind to memory
// and CPU — so that `berth-plan compare` can show what it would have
// committed above the memory budget. It does not call Plan().
//
// Pure: no I/O, no clock; the same input gives the same result. Simulate()
// is thread-compatible (it touches only its arguments).
#ifndef BERTH_PLANNER_SIMULATOR_SIMULATOR_H_
#define BERTH_PLANNER_SIMULATOR_SIMULATOR_H_

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "planner/model/model.h"
#include "planner/plan/plan.h"
#include "planner/ranking/policy.h"
#include "planner/model/reasons.h"

namespace berth::planner {

// One job of a simulated workload.
struct SimJob {
  // The job as the planner sees it (estimates included). created_at is
  // normally the arrival time.
  QueuedJob job;
  // When it arrives, relative to SimInput::start (>= 0). A job whose
  // dependencies arrive later enters the queue when the last of them has
  // arrived (the planner rejects dependencies on ids it has never seen).
  absl::Duration arrival_offset = absl::ZeroDuration();
  // How long it really runs. <= 0: its expected_duration, or the policy's
  // default duration when that is unknown too.
  absl::Duration actual_duration = absl::ZeroDuration();
  // It fails when it ends (its dependants then fail with DEPENDENCY_FAILED).
  bool fails = false;
  // Hard run-time limit (JobSpec.max_duration); <= 0: none. A job whose
  // actual duration exceeds it is stopped at the limit and fails (TIMED_OUT).
  absl::Duration max_duration = absl::ZeroDuration();
};

struct SimInput {
  // Time zero of the simulation.
  absl::Time start = absl::UnixEpoch();
  // Jobs running at `start`; each ends at max(started_at + expected duration
  // (or the default), start) and succeeds.
  std::vector<RunningJob> running;
  std::vector<SimJob> jobs;
  Budgets budgets;
  // kPlanner: the planner's memory at `start` (the plans before it), which
  // the first plan starts from; empty: a first plan. A state taken mid-run
  // continues the run only with it (tools/plan/state_at.h).
  PlannerMemory memory;
};

enum class SimMode : uint8_t {
  // Berth: Plan() with SimOptions::policy at every event.
  kPlanner,
  // The old backend: FIFO by arrival (then created_at, id), at most
  // baseline_max_workers running, resources ignored. Jobs whose
  // dependencies have not succeeded are skipped (they do not block the
  // queue); those whose dependencies failed fail.
  kCountBaseline,
};

struct SimOptions {
  SimMode mode = SimMode::kPlanner;
  // The planner's policy (kPlanner only).
  Policy policy;
  // kCountBaseline: the count limit. <= 0: budgets.max_workers.
  int32_t baseline_max_workers = 0;
  // Called now and then with the fraction of jobs finished (0..1), e.g. for
  // a progress bar. May be empty. Must not call back into the simulator.
  std::function<void(double)> progress;
  // The executor's latencies, both >= 0 (negative is taken as 0):
  // an admitted job's container runs from admission + start_latency (Docker
  // creating and starting it) for its actual duration, and its capacity is
  // given back finish_latency after it ends (Berth noticing the exit and
  // recording it). The planner dates the job from its admission either way
  // (docs/DESIGN.md "One definition of started"). berthd measures both
  // (berth_start_latency_seconds, berth_finish_latency_seconds); 0 (the
  // default) simulates the planner alone.
  absl::Duration start_latency = absl::ZeroDuration();
  absl::Duration finish_latency = absl::ZeroDuration();
  // > 0: the executor starts at most this many containers at once
  // (berthd's --start_parallelism, default 4), each taking start_latency,
  // in admission order; a job admitted while every slot is busy waits for
  // one. 0: unbounded (every start takes start_latency from admission).
  int32_t start_parallelism = 0;
  // How starts slow each other (on the fidelity workload a start
  // took 0.2 s alone and 0.4-0.5 s four at once; docs/BENCHMARKS.md).
  // > 0: the last start_contention of start_latency (capped at it) is work
  // on a resource every start in flight shares equally (processor
  // sharing), the rest a fixed delay before it. So k starts that begin
  // together each take start_latency + (k - 1) * start_contention, and a
  // start that begins while others are finishing is slowed less. 0 (or
  // negative): every start takes start_latency.
  absl::Duration start_contention = absl::ZeroDuration();
  // The executor's noise: > 0 moves each start's fixed delay (the whole
  // start_latency without contention) by a pseudo-random amount, uniform in
  // [-start_jitter, +start_jitter] and never below 0, one draw per job from
  // start_jitter_seed (the same seed gives the same run). Real starts vary
  // by tens of milliseconds from one to the next; simulations with several
  // seeds show which decisions of a plan turn on that (berth-fidelity's
  // repeatability). 0 (or negative): no jitter.
  absl::Duration start_jitter = absl::ZeroDuration();
  uint64_t start_jitter_seed = 0;
  // kPlanner: also Plan() when a container starts (run_start, if after the
  // admission), as berthd does: recording RUNNING changes its store, and
  // every store change is planned at (a tick with none reuses the last
  // plan). The capacity is the same, but time has moved: a running job past
  // its estimate is re-dated (the overrun rule), which can move the
  // reservation and let a job backfill (simulator_replan_test).
  bool plan_at_starts = false;
  // kPlanner: plan the whole queue with Plan() at every event instead of
  // incrementally (planner/plan/incremental.h). The results are the same
  // (simulator_incremental_test); this is the reference, and costs
  // O(queue log queue) per event instead of the jobs each plan decides plus
  // one sweep over an array of the queue for the others' reasons.
  bool whole_queue_plans = false;
  // kPlanner: called with every plan and the state it was computed from
  // (for tests and audits). May be empty. Must not call back into the
  // simulator.
  std::function<void(const State&, const PlanResult&)> on_plan;
};

// How a simulated job ended.
enum class SimOutcome : uint8_t {
  kSucceeded,
  kFailed,            // SimJob::fails, or stopped at SimJob::max_duration
  kDependencyFailed,  // a dependency failed (or was rejected)
  kRejected,          // Plan() rejected it (NEVER_FITS and other problems)
  kNotRun,            // still queued when nothing else could happen (a bug
                      // in the planner or an unsatisfiable input)
};
absl::string_view SimOutcomeName(SimOutcome o);

struct SimJobResult {
  SimOutcome outcome = SimOutcome::kNotRun;
  absl::Time arrival;  // when it entered the queue
  // When it could first have started as far as its dependencies go: the
  // later of `arrival` and its dependencies' ends (kSucceeded / kFailed).
  absl::Time ready;
  // kSucceeded / kFailed: when it started (was admitted: took its
  // capacity) and ended (gave it back). Otherwise both are the time it left
  // the queue (or the end of the simulation for kNotRun), and ready ==
  // arrival.
  absl::Time start;
  absl::Time end;
  // kSucceeded / kFailed: when its container ran, start + start_latency to
  // end - finish_latency (SimOptions); equal to start and end when both
  // latencies are 0. Otherwise equal to start.
  absl::Time run_start;
  absl::Time run_end;
  // Time spent waiting for capacity (not for dependencies).
  absl::Duration wait() const { return start - ready; }
  // The reason it waited longest under, other than
  // WAITING_FOR_DEPENDENCIES (kUnspecified if none), and for how long in
  // total.
  Reason main_wait_reason = Reason::kUnspecified;
  absl::Duration main_wait_time = absl::ZeroDuration();
  // For kRejected / kDependencyFailed: what the planner said.
  Problem problem = Problem::kNone;
  // kFailed because it ran into SimJob::max_duration.
  bool timed_out = false;
  // The first plan that gave it the head-of-line reservation: when that plan
  // ran and the start it promised (both InfiniteFuture() if it never held
  // the reservation). The simulator passes each plan's holder to the next
  // (State::reservation_holder), as the executor does.
  absl::Time first_promised_at = absl::InfiniteFuture();
  absl::Time first_promise = absl::InfiniteFuture();
};

// Usage from `time` until the next point (a step function).
struct SimUsagePoint {
  absl::Time time;
  int64_t memory_bytes = 0;  // reserved by running jobs
  int64_t cpu_millis = 0;
  int32_t workers = 0;
  int32_t queued = 0;  // arrived, not started, not rejected
};

struct SimResult {
  // One per SimInput::jobs, same order.
  std::vector<SimJobResult> jobs;
  // The usage step function; the first point is at `start`, the last at the
  // time the last job ended (all zero unless jobs are stuck).
  std::vector<SimUsagePoint> timeline;
  // When the last job ended (or left the queue).
  absl::Time end;
  absl::Duration makespan() const { return end - start; }
  absl::Time start;
  // Indices (into SimInput::jobs) of jobs Plan() found could never fit
  // (Reason::kNeverFits), in input order.
  std::vector<size_t> never_fits;
  int64_t plan_calls = 0;
  // Highest reservations at any instant (both modes), and how far they went
  // above the budget (0 if never). Under kPlanner the over-budget figures
  // stay 0 unless the jobs running at `start` already exceed the budget;
  // under kCountBaseline they are the overcommit the old backend risked.
  int64_t peak_memory_bytes = 0;
  int64_t peak_cpu_millis = 0;
  int64_t peak_memory_over_budget = 0;
  int64_t peak_cpu_over_budget = 0;
  absl::Time peak_memory_at;
};

// When each of input.jobs enters the queue in a simulation: input.start +
// its arrival offset, but not before every dependency among input.jobs has
// entered (a dependant never queues before what it depends on). Same order
// as input.jobs. O(n + d).
[[nodiscard]] std::vector<absl::Time> ArrivalTimes(const SimInput& input);

// Runs the simulation to completion. Never fails: invalid jobs come back as
// kRejected (validate at the edge for friendly errors).
[[nodiscard]] SimResult Simulate(const SimInput& input, const SimOptions& options);

}  // namespace berth::planner

#endif  // BERTH_PLANNER_SIMULATOR_SIMULATOR_H_
