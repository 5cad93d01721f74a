// DockerRuntime with a shared workspace group (EngineRuntimeOptions::
// workspace_gid, berthd --workspace_group) against the real dockerd: the
// job runs with that one supplementary group, its workspace is setgid to
// the group, and what it writes is the group's and group-readable on the
// host. Each test has its own instance label and removes its containers.
#include <sys/stat.h>

#include <ios>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "executor/runtime/docker/docker_runtime.h"
#include "executor/runtime/docker/testing/docker_runtime_fixture.h"
#include "executor/runtime/docker/testing/docker_test_util.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

using ::berth::testing::DockerRuntimeTest;
using ::berth::testing::TestOptions;
using ::berth::testing::TestSpec;
using ::berth::testing::WaitFinished;

constexpr uint32_t kGroup = 4242;  // no name needed: the engine takes the gid

TEST_F(DockerRuntimeTest, WorkspaceGroupOwnsWhatTheJobWrites) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  ASSERT_NE(tmp, nullptr);
  const std::string root = absl::StrCat(tmp, "/group-workspaces");
  const std::string ws = "ws-group";
  const std::string dir = absl::StrCat(root, "/", ws);
  ASSERT_EQ(mkdir(root.c_str(), 0755), 0);
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);  // as a job-server leaves it
  DockerRuntimeOptions o = TestOptions(instance_);
  o.workspaces_root = root;
  o.workspace_gid = kGroup;
  auto rt = DockerRuntime::Create(o);
  ASSERT_TRUE(rt.ok()) << rt.status();
  // The file, a subdirectory and a file in it; the job's groups for the log.
  ContainerSpec spec = TestSpec(
      Job("group"), {"sh", "-c",
                     "echo result > /workspace/out.txt && mkdir /workspace/sub && "
                     "echo deeper > /workspace/sub/more.txt && echo GROUPS=$(id -G) && "
                     "echo UID=$(id -u)"});
  spec.workspace = ws;
  spec.mount_workspace = true;
  absl::StatusOr<StartResult> started = (*rt)->Start(spec);
  ASSERT_TRUE(started.ok()) << started.status();
  absl::StatusOr<ContainerObservation> obs = WaitFinished(**rt, spec.job_id, absl::Seconds(60));
  ASSERT_TRUE(obs.ok()) << obs.status();
  EXPECT_EQ(obs->exit_code, 0);
  absl::StatusOr<std::string> logs = (*rt)->LogsTail(spec.job_id, 4096);
  ASSERT_TRUE(logs.ok()) << logs.status();
  // The user and primary group as before, plus exactly the one group.
  EXPECT_TRUE(absl::StrContains(*logs, absl::StrCat("GROUPS=65534 ", kGroup, "\n"))) << *logs;
  EXPECT_TRUE(absl::StrContains(*logs, "UID=65534")) << *logs;

  struct stat st;
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
  EXPECT_EQ(st.st_gid, kGroup);
  EXPECT_EQ(st.st_mode & 07777, 02770u);  // setgid; nobody outside the group
  for (const char* name : {"/out.txt", "/sub/more.txt"}) {
    SCOPED_TRACE(name);
    ASSERT_EQ(stat((dir + name).c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, 65534u);
    EXPECT_EQ(st.st_gid, kGroup);
    EXPECT_NE(st.st_mode & S_IRGRP, 0u) << std::oct << st.st_mode;  // group-readable
    EXPECT_EQ(st.st_mode & S_IWOTH, 0u) << std::oct << st.st_mode;
  }
  ASSERT_EQ(stat((dir + "/sub").c_str(), &st), 0);
  EXPECT_EQ(st.st_gid, kGroup);
  EXPECT_NE(st.st_mode & S_ISGID, 0u) << std::oct << st.st_mode;  // inherited
  EXPECT_NE(st.st_mode & S_IXGRP, 0u) << std::oct << st.st_mode;  // the group can enter it
}

}  // namespace
}  // namespace berth
