// RuntimeHealthProbe: tells within a tick whether the container engine
// answers, for the "berth.runtime" health status (a paused dockerd
// stayed SERVING for ~40 s, until a bulk list timed out after its retries).
//
// One thread pings the engine (Runtime::Ping) every `interval`; another
// checks every interval / 4 whether the last ping succeeded and whether a
// ping has been outstanding for longer than `deadline`: a hung engine is
// detected `deadline` after the ping that hangs was sent, however long the
// engine takes to answer. Changes (and the first verdict) go to `report`.
//
// Thread-safe. The destructor stops both threads; it waits for an
// outstanding Ping to return (DockerRuntime's ping has its own short
// timeout, DockerRuntimeOptions::ping_timeout).
#ifndef BERTH_SERVER_DAEMON_RUNTIME_HEALTH_H_
#define BERTH_SERVER_DAEMON_RUNTIME_HEALTH_H_

#include <functional>
#include <optional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "planner/base/clock.h"
#include "executor/runtime/runtime.h"

namespace berth {

struct RuntimeHealthOptions {
  // Time between pings. berthd: tick / 2.
  absl::Duration interval = absl::Seconds(1);
  // A ping outstanding this long means the engine hangs. berthd: tick / 2.
  absl::Duration deadline = absl::Seconds(1);
};

class RuntimeHealthProbe {
 public:
  // `runtime` must outlive the probe. `report(healthy)` is called from the
  // probe's thread, never concurrently with itself.
  RuntimeHealthProbe(Runtime& runtime, RuntimeHealthOptions options,
                     std::function<void(bool healthy)> report);
  ~RuntimeHealthProbe();

  RuntimeHealthProbe(const RuntimeHealthProbe&) = delete;
  RuntimeHealthProbe& operator=(const RuntimeHealthProbe&) = delete;

  // The last verdict (false until the first ping answered).
  bool healthy() const;

 private:
  void PingLoop();
  void WatchLoop();

  Runtime& runtime_;
  const RuntimeHealthOptions options_;
  const std::function<void(bool)> report_;

  mutable absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  bool last_ok_ ABSL_GUARDED_BY(mu_) = false;
  bool in_flight_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time sent_ ABSL_GUARDED_BY(mu_);
  std::optional<bool> verdict_ ABSL_GUARDED_BY(mu_);

  std::thread pinger_;
  std::thread watcher_;
};

}  // namespace berth

#endif  // BERTH_SERVER_DAEMON_RUNTIME_HEALTH_H_
