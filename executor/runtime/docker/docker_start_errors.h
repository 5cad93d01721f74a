// Which refusals of Docker's container start are permanent.
//
// Docker answers a start it cannot perform with HTTP 500 (INTERNAL after
// DockerErrorToStatus) whether the cause is the job's spec or the engine's
// momentary trouble. A spec the kernel or runc refuses -- a CPU quota below
// the CFS minimum ("cpu.cfs_quota_us: invalid argument"), a command that is
// not in the image ("executable file not found"), a missing path or user --
// will be refused the same way on every retry, so the job must fail at once
// (START_FAILED with Docker's reason) instead of holding a worker slot.
// Host pressure (EAGAIN, ENOMEM, ENOSPC, EMFILE) stays transient.
//
// Pure; thread-safe.
#ifndef BERTH_EXECUTOR_RUNTIME_DOCKER_DOCKER_START_ERRORS_H_
#define BERTH_EXECUTOR_RUNTIME_DOCKER_DOCKER_START_ERRORS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace berth {

// True if `docker_message` (Docker's error text for a failed create or
// start) says the OCI runtime refused the container's configuration.
bool IsPermanentStartRefusal(absl::string_view docker_message);

// `s` unchanged, unless it is an INTERNAL error whose message is a permanent
// refusal: then FAILED_PRECONDITION with "Docker refused to start the
// container: <Docker's message>" (which Runtime callers treat as permanent,
// see ClassifyStartError).
absl::Status ClassifyDockerStartError(const absl::Status& s);

}  // namespace berth

#endif  // BERTH_EXECUTOR_RUNTIME_DOCKER_DOCKER_START_ERRORS_H_
