// Workspace directories on the Docker host: <workspaces root>/<workspace>,
// bind-mounted read-write at /workspace in each of the workspace's jobs.
//
// berthd prepares the directory before every start so that the job's user
// can write its outputs there and nobody else on the host can: the directory
// itself (not its contents: nothing is done recursively) is made owned by
// the container's uid:gid with mode 0770. The job-server, which writes a
// job's inputs and reads its outputs, does so as root or as a member of the
// container's group. A workspace name never names a path outside the root
// (it is validated like an id, executor/runtime_limits.h), and a workspace
// that is a symbolic link is refused.
//
// Thread-safe (no state); does I/O.
#ifndef BERTH_EXECUTOR_RUNTIME_DOCKER_WORKSPACE_DIR_H_
#define BERTH_EXECUTOR_RUNTIME_DOCKER_WORKSPACE_DIR_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace berth {

inline constexpr uint32_t kWorkspaceDirMode = 0770;

// "<root>/<workspace>".
std::string WorkspaceDirPath(absl::string_view root, absl::string_view workspace);

// True if <root>/<workspace> is a directory (a symbolic link is not).
bool WorkspaceDirExists(absl::string_view root, absl::string_view workspace);

// Makes <root>/<workspace> owned by uid:gid with mode kWorkspaceDirMode,
// changing only what differs. FAILED_PRECONDITION naming the path when it
// does not exist, is not a directory, is a symbolic link, or cannot be
// changed (berthd must run as root, or as uid with gid among its groups).
[[nodiscard]] absl::Status PrepareWorkspaceDir(absl::string_view root,
                                               absl::string_view workspace, uint32_t uid,
                                               uint32_t gid);

}  // namespace berth

#endif  // BERTH_EXECUTOR_RUNTIME_DOCKER_WORKSPACE_DIR_H_
