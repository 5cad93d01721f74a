// StopOnSignal: ends a streaming call of berthctl (watch, logs --follow)
// cleanly on SIGINT/SIGTERM. Internal to //tools/ctl:commands.
#ifndef BERTH_TOOLS_CTL_STOP_ON_SIGNAL_H_
#define BERTH_TOOLS_CTL_STOP_ON_SIGNAL_H_

#include <signal.h>

#include <memory>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/grpcpp.h"

namespace berth {
namespace ctl {

// Cancels the attached call when SIGINT or SIGTERM arrives (REQUIRES: both
// blocked in every thread; main() does that for watch and logs). The waiting thread
// outlives this object, so what it touches is shared and the context is
// detached in the destructor.
class StopOnSignal {
 public:
  StopOnSignal() : shared_(std::make_shared<Shared>()) {
    std::thread([shared = shared_] {
      sigset_t set;
      sigemptyset(&set);
      sigaddset(&set, SIGINT);
      sigaddset(&set, SIGTERM);
      int sig = 0;
      if (sigwait(&set, &sig) == 0) {
        absl::MutexLock lock(&shared->mu);
        shared->stopped = true;
        if (shared->context != nullptr) shared->context->TryCancel();
      }
    }).detach();
  }
  ~StopOnSignal() { Attach(nullptr); }
  // The call a signal cancels from now on (nullptr: none). A signal that
  // came before cancels `context` at once.
  void Attach(grpc::ClientContext* context) {
    absl::MutexLock lock(&shared_->mu);
    shared_->context = context;
    if (shared_->stopped && context != nullptr) context->TryCancel();
  }
  bool stopped() const {
    absl::MutexLock lock(&shared_->mu);
    return shared_->stopped;
  }
  // Waits `d` or until a signal; true if stopped.
  bool WaitFor(absl::Duration d) const {
    absl::MutexLock lock(&shared_->mu);
    shared_->mu.AwaitWithTimeout(absl::Condition(&shared_->stopped), d);
    return shared_->stopped;
  }

 private:
  struct Shared {
    absl::Mutex mu;
    grpc::ClientContext* context ABSL_GUARDED_BY(mu) = nullptr;
    bool stopped ABSL_GUARDED_BY(mu) = false;
  };
  std::shared_ptr<Shared> shared_;
};


}  // namespace ctl
}  // namespace berth

#endif  // BERTH_TOOLS_CTL_STOP_ON_SIGNAL_H_
