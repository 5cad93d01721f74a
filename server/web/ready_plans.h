// ReadyPlans: the plan the dashboard's pages show — the newest one that is
// ready: its ETA forecast complete and its id → position index built, so
// that no page waits for a plan, a forecast or an index.
//
// A page of the plan needs its rows' ETAs, the overview's drain line needs
// every ETA (the whole bounded forecast, planner/forecast/eta.h: up to
// ~0.7 s of CPU at 100k queued jobs), and the job page needs the job's
// position (PlanSnapshot::positions(): a table of every queued id). Pages
// pay at most `inline_budget` of it. Get() takes the plan at the store's
// revision (PlanCache::Get()) and, if it queues at most inline_max_queued
// jobs, advances its forecast for up to inline_budget: if that completes
// it (any queue of a few thousand jobs), the page shows that plan; else it
// shows the newest ready plan (older by a reconcile pass or a sync; the
// pages print its revision and time), and a background thread readies the
// rest — one plan at a time, the newest, skipping those overtaken
// meanwhile. The forecast is the plan's own table
// (PlanSnapshot::estimates()), shared with GetPlan and ExplainJob, never a
// second one. Before any plan is ready (the first page after a start), a
// page readies a plan of at most inline_max_queued jobs itself; a larger one
// is readied by the thread while the page answers UNAVAILABLE ("being
// prepared"; the dashboard's error page reloads itself), so that no page
// waits for a forecast.
//
// Stop() cancels: the forecast is made one forecast plan (the planner's unit
// of work) at a time, checking for Stop() between them, so berthd's
// shutdown waits at most for the step in progress, not the forecast: at
// 100k jobs 54-164 ms (optimised build, loaded machine). Not cancellable:
// the table's set-up (the first call of estimates(): a copy of the queue)
// and one forecast plan of the whole queue, which at 1M jobs take seconds
// (1.8-4.9 s measured; docs/BENCHMARKS.md).
//
// Memory: at most two plans are held here — the ready one and the one being
// readied; the next to ready is PlanCache's latest, taken when the thread
// is free (so plans overtaken meanwhile are never held). Besides
// PlanCache's latest, the dashboard keeps at most these two alive (resident
// memory at 1M jobs in docs/BENCHMARKS.md).
//
// Thread-safe. The background thread (nice 10: below the request threads)
// works only while pages are viewed.
#ifndef BERTH_SERVER_WEB_READY_PLANS_H_
#define BERTH_SERVER_WEB_READY_PLANS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "executor/reconcile/plan_snapshot.h"

namespace berth::web {

class ReadyPlans {
 public:
  // `plans` must outlive this object. A page tries to ready a new plan
  // itself (for up to `inline_budget`) only if it queues at most
  // `inline_max_queued` jobs: the forecast's set-up (a copy of the queue,
  // the first call of PlanSnapshot::estimates()) is not bounded by the
  // budget, ~0.2 s at 100k jobs in an optimised build.
  explicit ReadyPlans(PlanCache& plans,
                      absl::Duration inline_budget = absl::Milliseconds(50),
                      size_t inline_max_queued = 10000);
  // Stop()s.
  ~ReadyPlans();
  ReadyPlans(const ReadyPlans&) = delete;
  ReadyPlans& operator=(const ReadyPlans&) = delete;

  // The newest ready plan (see above): its forecast complete, its positions
  // built. Errors: the store's, when there is no plan yet and planning
  // fails; UNAVAILABLE while no plan is ready and the latest queues more
  // than inline_max_queued jobs (the thread readies it), and once Stop()
  // was called (also for a Get() that was readying a plan itself when it
  // came).
  [[nodiscard]] absl::StatusOr<std::shared_ptr<const PlanSnapshot>> Get();

  // Cancels the forecasts in progress (the background one and any a Get()
  // makes) within one forecast plan, joins the background thread, and
  // makes every later Get() UNAVAILABLE. Idempotent; not concurrently with
  // the destructor.
  void Stop();

  // Plans readied in the background so far (for tests).
  int64_t completed() const;

 private:
  // Completes `plan`'s forecast (cancellably) and builds its positions.
  // UNAVAILABLE if Stop() came first.
  absl::Status Ready(const PlanSnapshot& plan) const;
  bool stopping() const;
  void Loop();

  PlanCache& plans_;
  const absl::Duration inline_budget_;
  const size_t inline_max_queued_;
  mutable absl::Mutex mu_;
  std::shared_ptr<const PlanSnapshot> ready_ ABSL_GUARDED_BY(mu_);
  // A page saw a plan newer than ready_: the thread readies the cache's
  // latest.
  bool wanted_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  int64_t completed_ ABSL_GUARDED_BY(mu_) = 0;
  // Started by the first Get() that needs it (under mu_, never after
  // stop_); joined by Stop().
  std::thread thread_;
};

}  // namespace berth::web

#endif  // BERTH_SERVER_WEB_READY_PLANS_H_
