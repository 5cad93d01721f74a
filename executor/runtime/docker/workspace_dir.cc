#include "executor/runtime/docker/workspace_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"
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

bool WorkspaceDirExists(absl::string_view root, absl::string_view workspace) {
  struct stat st;
  const std::string path = WorkspaceDirPath(root, workspace);
  return lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

absl::Status PrepareWorkspaceDir(absl::string_view root, absl::string_view workspace,
                                 uint32_t uid, uint32_t gid, uint32_t mode) {
  const std::string path = WorkspaceDirPath(root, workspace);
  auto fail = [&path](absl::string_view what) {
    return absl::FailedPreconditionError(absl::StrCat(
        "workspace directory ", path, " ", what, ": ", std::strerror(errno)));
  };
  const std::string root_path(root);
  ScopedFd root_fd(open(root_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (root_fd.get() < 0) return fail("cannot be reached (workspaces root)");
  const std::string name(workspace);
  struct stat link;
  if (fstatat(root_fd.get(), name.c_str(), &link, AT_SYMLINK_NOFOLLOW) == 0 &&
      S_ISLNK(link.st_mode)) {
    errno = ELOOP;
    return fail("is a symbolic link");
  }
  // O_NOFOLLOW: a symbolic link planted as a workspace is refused (ELOOP).
  ScopedFd fd(openat(root_fd.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
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
