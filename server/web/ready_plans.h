// ReadyPlans: the plan the dashboard's pages show — the newest one whose ETA
// forecast is complete, so that no page waits for a plan or a forecast.
//
// A page of the plan needs its rows' ETAs, and the overview's drain line
// needs every ETA: the whole bounded forecast (planner/forecast/eta.h), up to
// ~0.7 s of CPU at 100k queued jobs. Pages pay at most `inline_budget` of
// it. Get() takes the plan at the store's revision (PlanCache::Get()) and
// advances its forecast for up to inline_budget: if that completes it (any
// queue of a few thousand jobs), the page shows that plan; else it shows
// the newest plan whose forecast is complete (older by a reconcile pass or
// a sync; the pages print its revision and time), and a background thread
// completes the rest — one plan at a time, the newest, skipping those
// overtaken meanwhile. The forecast is the plan's own table
// (PlanSnapshot::estimates()), shared with GetPlan and ExplainJob, never a
// second one. Only before any forecast is complete (the first page after
// start at 100k) does a page forecast to the end itself.
//
// Thread-safe. The background thread (nice 10: below the request threads)
// works only while pages are viewed.
#ifndef BERTH_SERVER_WEB_READY_PLANS_H_
#define BERTH_SERVER_WEB_READY_PLANS_H_

#include <cstdint>
#include <memory>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "executor/reconcile/plan_snapshot.h"

namespace berth::web {

class ReadyPlans {
 public:
  // `plans` must outlive this object.
  explicit ReadyPlans(PlanCache& plans,
                      absl::Duration inline_budget = absl::Milliseconds(50));
  // Stops the background thread (after the forecast it is making).
  ~ReadyPlans();
  ReadyPlans(const ReadyPlans&) = delete;
  ReadyPlans& operator=(const ReadyPlans&) = delete;

  // The newest plan with a complete forecast (see above). Errors: the
  // store's, when there is no plan yet and planning fails.
  [[nodiscard]] absl::StatusOr<std::shared_ptr<const PlanSnapshot>> Get();

  // Forecasts completed in the background so far (for tests).
  int64_t completed() const;

 private:
  void Loop();

  PlanCache& plans_;
  const absl::Duration inline_budget_;
  mutable absl::Mutex mu_;
  std::shared_ptr<const PlanSnapshot> ready_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const PlanSnapshot> pending_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  int64_t completed_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;  // started by the first Get() that needs it
};

}  // namespace berth::web

#endif  // BERTH_SERVER_WEB_READY_PLANS_H_
