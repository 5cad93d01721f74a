#include "executor/runtime/docker/docker_start_errors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "absl/strings/match.h"
#include "executor/runtime/docker/workspace_dir.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

// Docker 20.10's answers, as seen on this machine's engine.
constexpr char kCpuQuota[] =
    "start container x: docker API HTTP 500: failed to create shim task: OCI runtime create "
    "failed: runc create failed: unable to start container process: error during container "
    "init: error setting cgroup config for procHooks process: failed to write \"500\": write "
    "/sys/fs/cgroup/cpu/docker/7126/cpu.cfs_quota_us: invalid argument: unknown";
constexpr char kNoExecutable[] =
    "start container x: docker API HTTP 500: failed to create shim task: OCI runtime create "
    "failed: runc create failed: unable to start container process: exec: \"nope\": "
    "executable file not found in $PATH: unknown";
constexpr char kEagain[] =
    "start container x: docker API HTTP 500: OCI runtime create failed: fork/exec: resource "
    "temporarily unavailable";

TEST(DockerStartErrorsTest, PermanentRefusalsFailAtOnce) {
  for (const char* m : {kCpuQuota, kNoExecutable}) {
    absl::Status s = ClassifyDockerStartError(absl::InternalError(m));
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << m;
    EXPECT_TRUE(absl::StrContains(s.message(), "Docker refused to start the container"));
    EXPECT_TRUE(absl::StrContains(s.message(), m));  // Docker's reason, whole
  }
}

TEST(DockerStartErrorsTest, TransientStaysTransient) {
  for (absl::Status s :
       {absl::InternalError(kEagain), absl::InternalError("docker API HTTP 500: boom"),
        absl::UnavailableError("connect: refused invalid argument"),
        absl::DeadlineExceededError("timeout")}) {
    EXPECT_EQ(ClassifyDockerStartError(s), s);
  }
  EXPECT_TRUE(ClassifyDockerStartError(absl::OkStatus()).ok());
}

class WorkspaceDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TEST_TMPDIR");
    root_ = std::string(tmp ? tmp : "/tmp") + "/ws-root";
    mkdir(root_.c_str(), 0755);
  }
  std::string root_;
};

TEST_F(WorkspaceDirTest, PreparesOwnerAndMode) {
  const std::string dir = root_ + "/alpha";
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  EXPECT_TRUE(WorkspaceDirExists(root_, "alpha"));
  const uid_t uid = geteuid();
  const gid_t gid = getegid();
  ASSERT_TRUE(PrepareWorkspaceDir(root_, "alpha", uid, gid).ok());
  struct stat st;
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, kWorkspaceDirMode);
  EXPECT_EQ(st.st_uid, uid);
  if (uid == 0) {  // only root may give a directory away
    absl::Status given = PrepareWorkspaceDir(root_, "alpha", 65534, 65534);
    ASSERT_TRUE(given.ok()) << given;
    ASSERT_EQ(stat(dir.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, 65534u);
    EXPECT_EQ(st.st_gid, 65534u);
  }
}

TEST_F(WorkspaceDirTest, SharedGroupMakesTheDirectorySetgid) {
  EXPECT_EQ(WorkspaceDirMode(-1), kWorkspaceDirMode);
  EXPECT_EQ(WorkspaceDirMode(4242), kSharedWorkspaceDirMode);
  EXPECT_EQ(WorkspaceDirGid(-1, 65534), 65534u);
  EXPECT_EQ(WorkspaceDirGid(4242, 65534), 4242u);
  const std::string dir = root_ + "/beta";
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);
  const uid_t uid = geteuid();
  const gid_t gid = getegid();  // a group the test is in: setgid needs no privilege
  absl::Status s = PrepareWorkspaceDir(root_, "beta", uid, gid, kSharedWorkspaceDirMode);
  ASSERT_TRUE(s.ok()) << s;
  struct stat st;
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 02770u);
  EXPECT_EQ(st.st_gid, gid);
  // Back to the plain mode when the group flag is gone.
  ASSERT_TRUE(PrepareWorkspaceDir(root_, "beta", uid, gid).ok());
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, kWorkspaceDirMode);
}

TEST_F(WorkspaceDirTest, RefusesMissingFilesAndLinksOutOfTheRoot) {
  absl::Status missing = PrepareWorkspaceDir(root_, "missing", 1, 1);
  EXPECT_EQ(missing.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(missing.message(), "does not exist")) << missing;
  EXPECT_FALSE(WorkspaceDirExists(root_, "missing"));

  // Out of the root, the root itself, "..", a dangling link: refused, saying
  // it is a link and why; nothing is changed.
  const std::string outside = root_ + "-outside";
  ASSERT_EQ(mkdir(outside.c_str(), 0755), 0);
  ASSERT_EQ(symlink("/etc", (root_ + "/link").c_str()), 0);
  ASSERT_EQ(symlink(outside.c_str(), (root_ + "/out").c_str()), 0);
  ASSERT_EQ(symlink("../ws-root-outside", (root_ + "/dotdot").c_str()), 0);
  ASSERT_EQ(symlink(".", (root_ + "/self").c_str()), 0);
  ASSERT_EQ(symlink("nowhere", (root_ + "/dangling").c_str()), 0);
  for (const char* name : {"link", "out", "dotdot", "self"}) {
    absl::Status link = PrepareWorkspaceDir(root_, name, 1, 1);
    EXPECT_EQ(link.code(), absl::StatusCode::kFailedPrecondition) << name;
    EXPECT_TRUE(absl::StrContains(link.message(), "is a symbolic link to")) << link;
    EXPECT_TRUE(absl::StrContains(link.message(), "outside the workspaces root")) << link;
    EXPECT_FALSE(WorkspaceDirExists(root_, name)) << name;
  }
  absl::Status dangling = PrepareWorkspaceDir(root_, "dangling", 1, 1);
  EXPECT_TRUE(absl::StrContains(dangling.message(), "symbolic link whose target does not exist"))
      << dangling;
  EXPECT_FALSE(WorkspaceDirExists(root_, "dangling"));
  struct stat st;
  ASSERT_EQ(stat(outside.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);  // untouched
}

// A link to a directory inside the root is the workspace: it exists, and
// its target (not the link) is prepared.
TEST_F(WorkspaceDirTest, FollowsALinkToADirectoryInsideTheRoot) {
  ASSERT_EQ(mkdir((root_ + "/data").c_str(), 0755), 0);
  ASSERT_EQ(mkdir((root_ + "/data/gamma").c_str(), 0755), 0);
  ASSERT_EQ(symlink("data/gamma", (root_ + "/gamma").c_str()), 0);
  EXPECT_TRUE(WorkspaceDirExists(root_, "gamma"));
  absl::StatusOr<std::string> dir = ResolveWorkspaceDir(root_, "gamma");
  ASSERT_TRUE(dir.ok()) << dir.status();
  EXPECT_TRUE(absl::EndsWith(*dir, "/ws-root/data/gamma")) << *dir;
  absl::Status s = PrepareWorkspaceDir(root_, "gamma", geteuid(), getegid());
  ASSERT_TRUE(s.ok()) << s;
  struct stat st;
  ASSERT_EQ(stat((root_ + "/data/gamma").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, kWorkspaceDirMode);
  // A link to a file inside the root is no workspace.
  ASSERT_EQ(close(open((root_ + "/data/file").c_str(), O_CREAT | O_WRONLY, 0644)), 0);
  ASSERT_EQ(symlink("data/file", (root_ + "/file").c_str()), 0);
  absl::Status file = PrepareWorkspaceDir(root_, "file", 1, 1);
  EXPECT_TRUE(absl::StrContains(file.message(), "which is not a directory")) << file;
}

}  // namespace
}  // namespace berth
