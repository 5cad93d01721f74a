// Workspaces and image references on the real swarm (tools/swarm_cluster.sh
// up): a job writes its workspace on a worker node (berthd prepares the
// directory on the share, as on one host: the test swarm's nodes share this
// machine's filesystem), a missing workspace is refused before any service
// exists, and `name@<image id>` runs. Unsandboxed: it gives a directory to
// uid 65534 (Bazel's sandbox maps only uid 0).
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "executor/runtime/docker/testing/docker_test_util.h"
#include "executor/runtime/swarm/swarm_runtime.h"
#include "executor/runtime/swarm/testing/swarm_test_util.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

class SwarmWorkspaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::SwarmAvailable()) {
      FAIL() << "no swarm manager at " << testing::SwarmManagerUrl()
             << "; run: bash tools/swarm_cluster.sh up (or leave the swarm tests out"
             << " with --test_tag_filters=-swarm)";
    }
    char tmpl[] = "/tmp/berth-swarm-ws-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    ASSERT_EQ(chmod(root_.c_str(), 0755), 0);
    instance_ = testing::UniqueName("swarmws");
    SwarmRuntimeOptions o = testing::SwarmTestOptions(instance_);
    o.workspaces_root = root_;
    rt_ = *SwarmRuntime::Create(o);
  }
  void TearDown() override {
    if (!instance_.empty()) (void)testing::RemoveInstanceServices(instance_);
    if (!root_.empty()) (void)system(absl::StrCat("rm -rf ", root_).c_str());
  }
  std::string root_, instance_;
  std::unique_ptr<SwarmRuntime> rt_;
};

TEST_F(SwarmWorkspaceTest, JobWritesItsWorkspaceOnAWorker) {
  const std::string dir = root_ + "/ws1";
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);  // root:root 0755, as an operator leaves it
  ContainerSpec s = testing::TestSpec("writes", {"sh", "-c", "echo written > /workspace/out"});
  s.memory_bytes = 32 << 20;
  s.workspace = "ws1";
  s.mount_workspace = true;
  absl::StatusOr<StartResult> r = rt_->Start(s);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->running);  // accepted; RUNNING only once its task runs
  absl::StatusOr<ContainerObservation> obs =
      testing::WaitFinished(*rt_, "writes", absl::Seconds(60));
  ASSERT_TRUE(obs.ok()) << obs.status();
  EXPECT_EQ(ClassifyExit(*obs, StopIntent::kNone), (ExitOutcome{ExitKind::kSucceeded, 0}))
      << obs->error;
  std::set<std::string> workers;
  for (const NodeInfo& n : testing::ReadyWorkers(*rt_)) workers.insert(n.id);
  EXPECT_TRUE(workers.count(obs->node_id)) << "ran on " << obs->node_id;
  std::ifstream f(dir + "/out");
  const std::string out((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(out, "written\n");
  struct stat st;
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
  EXPECT_EQ(st.st_gid, 65534u);
  EXPECT_EQ(st.st_mode & 07777, 0770u);
}

// berthd --workspace_group (SwarmRuntimeOptions::workspace_gid) on a worker
// node: the job runs with the researchers' group as its one supplementary
// group, its workspace is <uid>:<group> setgid 02770, and the file it writes
// there belongs to the group and is group-readable. The node is a dockerd in
// its own network namespace on this machine's filesystem: what the job
// wrote on the node is checked at the same path here.
TEST_F(SwarmWorkspaceTest, WorkspaceGroupOnAWorkerMakesOutputsGroupReadable) {
  constexpr uint32_t kGroup = 4244;  // the researchers' group (by gid: no name needed)
  SwarmRuntimeOptions o = testing::SwarmTestOptions(instance_);
  o.workspaces_root = root_;
  o.workspace_gid = kGroup;
  std::unique_ptr<SwarmRuntime> rt = *SwarmRuntime::Create(o);
  const std::string dir = root_ + "/ws-group";
  ASSERT_EQ(mkdir(dir.c_str(), 0755), 0);  // root:root 0755, as an operator leaves it
  ContainerSpec s = testing::TestSpec(
      "group", {"sh", "-c", "id -G > /workspace/out; touch /workspace/also"});
  s.memory_bytes = 32 << 20;
  s.workspace = "ws-group";
  s.mount_workspace = true;
  absl::StatusOr<StartResult> r = rt->Start(s);
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<ContainerObservation> obs =
      testing::WaitFinished(*rt, "group", absl::Seconds(60));
  ASSERT_TRUE(obs.ok()) << obs.status();
  ASSERT_EQ(ClassifyExit(*obs, StopIntent::kNone), (ExitOutcome{ExitKind::kSucceeded, 0}))
      << obs->error;
  std::set<std::string> workers;
  for (const NodeInfo& n : testing::ReadyWorkers(*rt)) workers.insert(n.id);
  EXPECT_TRUE(workers.count(obs->node_id)) << "ran on " << obs->node_id;

  struct stat st;
  ASSERT_EQ(stat(dir.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
  EXPECT_EQ(st.st_gid, kGroup);
  EXPECT_EQ(st.st_mode & 07777, 02770u);
  for (const char* name : {"out", "also"}) {
    SCOPED_TRACE(name);
    ASSERT_EQ(stat((dir + "/" + name).c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, 65534u);
    EXPECT_EQ(st.st_gid, kGroup);        // setgid: the directory's group
    EXPECT_NE(st.st_mode & S_IRGRP, 0u);  // group-readable
    EXPECT_EQ(st.st_mode & S_IWOTH, 0u);
  }
  // Its groups: its own (65534) and the researchers', nothing more.
  std::ifstream f(dir + "/out");
  const std::string groups((std::istreambuf_iterator<char>(f)),
                           std::istreambuf_iterator<char>());
  EXPECT_EQ(groups, absl::StrCat("65534 ", kGroup, "\n"));
}

TEST_F(SwarmWorkspaceTest, MissingWorkspaceIsRefusedBeforeAnyService) {
  ContainerSpec s = testing::TestSpec("nows", {"true"});
  s.memory_bytes = 32 << 20;
  s.workspace = "absent";
  s.mount_workspace = true;
  absl::StatusOr<StartResult> r = rt_->Start(s);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), root_ + "/absent")) << r.status();
  EXPECT_EQ(rt_->Inspect("nows").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(SwarmWorkspaceTest, NameAtImageIdRuns) {
  absl::StatusOr<std::string> id = testing::ManagerImageId("berth-test/busybox:1");
  ASSERT_TRUE(id.ok()) << id.status();
  SwarmRuntimeOptions o = testing::SwarmTestOptions(instance_);
  o.image_allow_list.push_back("berth-test/busybox@*");
  std::unique_ptr<SwarmRuntime> rt = *SwarmRuntime::Create(o);
  ContainerSpec s = testing::TestSpec("by-id", {"true"});
  s.memory_bytes = 32 << 20;
  s.image = "berth-test/busybox@" + *id;
  absl::StatusOr<StartResult> r = rt->Start(s);
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<ContainerObservation> obs =
      testing::WaitFinished(*rt, "by-id", absl::Seconds(60));
  ASSERT_TRUE(obs.ok()) << obs.status();
  EXPECT_EQ(ClassifyExit(*obs, StopIntent::kNone)->kind, ExitKind::kSucceeded) << obs->error;
  // A digest that is no image's id is still not present.
  s.job_id = "by-bad-id";
  s.image = "berth-test/busybox@sha256:" + std::string(64, '0');
  EXPECT_EQ(rt->Start(s).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace berth
