// ReconcileLoop: runs Reconciler passes on a background thread, one at a
// time, whenever triggered (a snapshot, a Docker event, a budget or flag
// change) and at least every `tick`. A pass that reports more_work is
// followed at once by another. A failed pass is logged ("reconcile pass
// failed"); the same error pass after pass (a full disk, while it lasts) is
// logged once and then every 30th pass, with the count ("repeats").
//
// Thread-safe. Start() once; Stop() (or the destructor) joins the thread.
#ifndef BERTH_EXECUTOR_RECONCILE_RECONCILE_LOOP_H_
#define BERTH_EXECUTOR_RECONCILE_RECONCILE_LOOP_H_

#include <cstdint>
#include <functional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "executor/reconcile/reconciler.h"

namespace berth {

class ReconcileLoop {
 public:
  // Called after every pass on the loop's thread (metrics, logs).
  using PassObserver = std::function<void(const absl::StatusOr<PassStats>&)>;

  ReconcileLoop(Reconciler& reconciler, absl::Duration tick,
                PassObserver observer = nullptr);
  ~ReconcileLoop();

  void Start();
  void Stop();

  // Requests a pass as soon as the current one (if any) ends.
  void Trigger();

  // Blocks until a pass that *started* after this call has completed, or
  // `timeout` passed. Returns true in the first case.
  bool AwaitPass(absl::Duration timeout);

  // Passes completed so far.
  uint64_t passes() const;

 private:
  void Run();

  Reconciler& reconciler_;
  const absl::Duration tick_;
  const PassObserver observer_;

  mutable absl::Mutex mu_;
  bool triggered_ ABSL_GUARDED_BY(mu_) = true;  // first pass at once (recovery)
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t started_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t completed_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

}  // namespace berth

#endif  // BERTH_EXECUTOR_RECONCILE_RECONCILE_LOOP_H_
