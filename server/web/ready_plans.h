// ReadyPlans: the plan the dashboard's pages show — the newest one whose ETA
// forecast is complete, so that no page waits for a plan or a forecast.
//
// A page of the plan needs its rows' ETAs, and the overview's drain line
// needs every ETA: the whole bounded forecast (planner/forecast/eta.h), up to
// ~0.7 s of CPU at 100k queued jobs. Pages do not pay it. Get() answers with
// the latest plan (PlanCache::Latest(), never planning) if its forecast is
// complete, else with the newest plan whose forecast is (older by a
// reconcile pass or a sync; the pages print its revision and time), and
// hands the latest to a background thread that completes its forecast —
// one plan at a time, the newest, skipping those overtaken meanwhile. The
// forecast it makes is the plan's own table (PlanSnapshot::estimates()),
// shared with GetPlan and ExplainJob, never a second one. Only before any
// forecast is complete (the first page after start) does a page plan and
// forecast itself.
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
#include "executor/reconcile/plan_snapshot.h"

namespace berth::web {

class ReadyPlans {
 public:
  // `plans` must outlive this object.
  explicit ReadyPlans(PlanCache& plans);
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
  static bool Complete(const PlanSnapshot& s);
  void Loop();

  PlanCache& plans_;
  mutable absl::Mutex mu_;
  std::shared_ptr<const PlanSnapshot> ready_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const PlanSnapshot> pending_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  int64_t completed_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;  // started by the first Get() that needs it
};

}  // namespace berth::web

#endif  // BERTH_SERVER_WEB_READY_PLANS_H_
