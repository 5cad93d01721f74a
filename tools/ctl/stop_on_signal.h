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

// Cancels a call when SIGINT or SIGTERM arrives (REQUIRES: both blocked in
// every thread; main() does that for watch). The waiting thread outlives
// this object, so what it touches is shared and the context is detached in
// the destructor.
class StopOnSignal {
 public:
  explicit StopOnSignal(grpc::ClientContext* context) : shared_(std::make_shared<Shared>()) {
    shared_->context = context;
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
  ~StopOnSignal() {
    absl::MutexLock lock(&shared_->mu);
    shared_->context = nullptr;
  }
  bool stopped() const {
    absl::MutexLock lock(&shared_->mu);
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
