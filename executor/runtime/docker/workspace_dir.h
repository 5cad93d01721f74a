// Workspace directories on the Docker host: <workspaces root>/<workspace>,
// bind-mounted read-write at /workspace in each of the workspace's jobs.
//
// berthd prepares the directory before every start so that the job's user
// can write its outputs there and nobody else on the host can: the directory
// itself (not its contents: nothing is done recursively) is made owned by
// the container's uid:gid with mode 0770. The job-server, which writes a
// job's inputs and reads its outputs, does so as root or as a member of the
// container's group. With a shared workspace group (berthd
// --workspace_group) the directory is uid:<that group> with mode 02770
// instead: setgid, so what the job writes there (the job runs with the group
// as a supplementary group) belongs to the group, and with the engine's
// default umask 022 its files are group-readable. A workspace name never names a path outside the root
// (it is validated like an id, executor/runtime_limits.h), and a workspace
// that is a symbolic link is followed only to a directory inside the root
// (checked before every start; the engine follows the same link when it
// mounts it, so only who may write the root, its operator, can re-point it).
//
// Thread-safe (no state); does I/O.
#ifndef BERTH_EXECUTOR_RUNTIME_DOCKER_WORKSPACE_DIR_H_
#define BERTH_EXECUTOR_RUNTIME_DOCKER_WORKSPACE_DIR_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace berth {

inline constexpr uint32_t kWorkspaceDirMode = 0770;
// With a shared workspace group: setgid, rwx for the job's user and the group.
inline constexpr uint32_t kSharedWorkspaceDirMode = 02770;

// The directory's group and mode for a job whose user's primary group is
// `user_gid`, given the shared workspace group (EngineRuntimeOptions::
// workspace_gid; -1: none).
inline uint32_t WorkspaceDirGid(int64_t workspace_gid, uint32_t user_gid) {
  return workspace_gid > 0 ? static_cast<uint32_t>(workspace_gid) : user_gid;
}
inline uint32_t WorkspaceDirMode(int64_t workspace_gid) {
  return workspace_gid > 0 ? kSharedWorkspaceDirMode : kWorkspaceDirMode;
}

// "<root>/<workspace>".
std::string WorkspaceDirPath(absl::string_view root, absl::string_view workspace);

// The directory <root>/<workspace> is: that path when it is a directory;
// when it is a symbolic link, its canonical target if that is a directory
// strictly inside the root's canonical path. FAILED_PRECONDITION naming the
// path and why otherwise: missing, not a directory, or a link whose target
// is missing, not a directory, the root itself or outside the root.
absl::StatusOr<std::string> ResolveWorkspaceDir(absl::string_view root,
                                                absl::string_view workspace);

// True if ResolveWorkspaceDir finds a directory.
bool WorkspaceDirExists(absl::string_view root, absl::string_view workspace);

// Makes <root>/<workspace> owned by uid:gid with mode `mode`
// (kWorkspaceDirMode, or kSharedWorkspaceDirMode with gid the shared group),
// changing only what differs, and checks the result (the kernel drops a
// setgid bit silently for a caller outside the group without CAP_FSETID).
// A symbolic link is resolved as ResolveWorkspaceDir does and its target
// prepared. FAILED_PRECONDITION naming the path when ResolveWorkspaceDir
// refuses it, or it cannot be changed (berthd must run as
// root, or with CAP_CHOWN and CAP_FOWNER; setting the setgid bit also needs
// CAP_FSETID and no RestrictSUIDSGID, or a directory already so prepared).
[[nodiscard]] absl::Status PrepareWorkspaceDir(absl::string_view root,
                                               absl::string_view workspace, uint32_t uid,
                                               uint32_t gid, uint32_t mode = kWorkspaceDirMode);

}  // namespace berth

#endif  // BERTH_EXECUTOR_RUNTIME_DOCKER_WORKSPACE_DIR_H_
