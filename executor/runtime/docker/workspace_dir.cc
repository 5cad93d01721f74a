#include "executor/runtime/docker/workspace_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "planner/base/status_macros.h"
#include "planner/base/scoped_fd.h"

namespace berth {
namespace {

// "0770", "02770".
std::string OctalMode(uint32_t mode) {
  char buf[16];
  snprintf(buf, sizeof(buf), "0%o", static_cast<unsigned>(mode));
  return buf;
}

}  // namespace

std::string WorkspaceDirPath(absl::string_view root, absl::string_view workspace) {
  return absl::StrCat(root, "/", workspace);
}

namespace {

// The canonical path of `path` (every link followed), or "" with errno set.
std::string RealPath(const std::string& path) {
  char* resolved = realpath(path.c_str(), nullptr);
  if (resolved == nullptr) return "";
  std::string out(resolved);
  free(resolved);
  return out;
}

}  // namespace

absl::StatusOr<std::string> ResolveWorkspaceDir(absl::string_view root,
                                                absl::string_view workspace) {
  const std::string path = WorkspaceDirPath(root, workspace);
  auto fail = [&path](absl::string_view what) {
    return absl::FailedPreconditionError(absl::StrCat("workspace directory ", path, " ", what));
  };
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    return fail(errno == ENOENT ? "does not exist" : "cannot be examined");
  }
  if (S_ISDIR(st.st_mode)) return path;
  if (!S_ISLNK(st.st_mode)) return fail("is not a directory");
  // A link is followed only to a directory inside the root: a link planted
  // in the root must not give a job (and its chown) any other host path.
  const std::string real_root = RealPath(std::string(root));
  if (real_root.empty()) return fail("cannot be reached (workspaces root)");
  const std::string target = RealPath(path);
  if (target.empty()) {
    return fail("is a symbolic link whose target does not exist");
  }
  if (target == real_root || !absl::StartsWith(target, absl::StrCat(real_root, "/"))) {
    return fail(absl::StrCat("is a symbolic link to ", target,
                             ", outside the workspaces root ", real_root,
                             ": a workspace must stay inside the root"));
  }
  if (stat(target.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return fail(absl::StrCat("is a symbolic link to ", target, ", which is not a directory"));
  }
  return target;
}

bool WorkspaceDirExists(absl::string_view root, absl::string_view workspace) {
  return ResolveWorkspaceDir(root, workspace).ok();
}

absl::Status PrepareWorkspaceDir(absl::string_view root, absl::string_view workspace,
                                 uint32_t uid, uint32_t gid, uint32_t mode) {
  const std::string path = WorkspaceDirPath(root, workspace);
  auto fail = [&path](absl::string_view what) {
    return absl::FailedPreconditionError(absl::StrCat(
        "workspace directory ", path, " ", what, ": ", std::strerror(errno)));
  };
  // A symbolic link is followed only to a directory inside the root.
  ASSIGN_OR_RETURN(const std::string dir, ResolveWorkspaceDir(root, workspace));
  // O_NOFOLLOW: the resolved directory's last component is no link; one
  // planted there since is refused (ELOOP).
  ScopedFd fd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno == ENOENT) return fail("does not exist");
    if (errno == ELOOP) return fail("is a symbolic link");
    if (errno == ENOTDIR) return fail("is not a directory");
    return fail("cannot be opened");
  }
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return fail("cannot be examined");
  if (st.st_uid != uid || st.st_gid != gid) {
    if (fchown(fd.get(), uid, gid) != 0) {
      return fail(absl::StrCat("cannot be given to ", uid, ":", gid));
    }
  }
  if ((st.st_mode & 07777) != mode) {
    if (fchmod(fd.get(), mode) != 0) {
      return fail(absl::StrCat("cannot be made mode ", OctalMode(mode)));
    }
    if (fstat(fd.get(), &st) != 0) return fail("cannot be examined");
    if ((st.st_mode & 07777) != mode) {
      errno = EPERM;
      return fail(absl::StrCat(
          "stays mode ", OctalMode(st.st_mode & 07777), " instead of ", OctalMode(mode),
          " (setting the setgid bit needs CAP_FSETID; or prepare it once as root: chmod ",
          OctalMode(mode), " ", path, ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace berth
