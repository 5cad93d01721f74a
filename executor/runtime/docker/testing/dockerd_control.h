// Stopping and starting the host's dockerd, for the manual tests that prove
// recovery from a real daemon restart (testonly; never run under
// `bazel test`, which kills daemons a test starts).
#ifndef BERTH_EXECUTOR_RUNTIME_DOCKER_TESTING_DOCKERD_CONTROL_H_
#define BERTH_EXECUTOR_RUNTIME_DOCKER_TESTING_DOCKERD_CONTROL_H_

#include <functional>

namespace berth::testing {

inline constexpr char kDockerdBinary[] = "/usr/sbin/dockerd";
inline constexpr char kDockerdPidFile[] = "/var/run/docker.pid";
inline constexpr char kDockerdLog[] = "/var/log/berth-dockerd.log";

// dockerd's pid from its pid file; 0 if none.
int DockerdPid();

bool ProcessAlive(int pid);

// Starts dockerd the way tools/setup.sh does — detached (new session, not
// our child), log appended to kDockerdLog — and waits up to 90 s until
// `ready` (e.g. a /_ping) is true.
bool StartDockerd(const std::function<bool()>& ready);

}  // namespace berth::testing

#endif  // BERTH_EXECUTOR_RUNTIME_DOCKER_TESTING_DOCKERD_CONTROL_H_
