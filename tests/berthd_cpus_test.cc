// A CPU budget above the Docker host's cores (--cpus may overcommit them:
// jobs then share the CPUs) with the real berthd and the real Docker: a job
// asking more cores than the host has is REJECTED NEVER_FITS at sync, naming
// the host's cores; it used to be admitted and then fail START_FAILED
// ("Range of CPUs is from 0.01 to N"). A job asking exactly the host's cores
// is accepted and runs.
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "executor/runtime/docker/docker_runtime.h"
#include "executor/runtime/docker/testing/docker_test_util.h"
#include "gtest/gtest.h"
#include "tests/berthd_process.h"

namespace berth {
namespace {

int EngineCpus() {
  absl::StatusOr<std::unique_ptr<DockerRuntime>> docker =
      DockerRuntime::Create(testing::TestOptions(testing::UniqueName("cpus")));
  if (!docker.ok()) return 0;
  absl::StatusOr<HostInfo> info = (*docker)->GetHostInfo();
  return info.ok() ? info->ncpu : 0;
}

TEST(BerthdCpus, AJobWiderThanTheHostIsRefusedAtSyncAndOneAsWideAsItRuns) {
  const int ncpu = EngineCpus();
  ASSERT_GT(ncpu, 0) << "docker info gave no NCPU";
  BerthdProcessOptions o;
  o.cpus = absl::StrCat(ncpu + 2);  // above the host: warned, allowed
  absl::StatusOr<std::unique_ptr<BerthdProcess>> b = BerthdProcess::Start(o);
  ASSERT_TRUE(b.ok()) << b.status();
  std::unique_ptr<BerthClient> c = (*b)->Client(Role::kPusher);
  const std::string prefix = UniqueJobPrefix();
  v1::Snapshot s;
  s.set_generation(1);
  v1::JobSpec wide = BusyboxJob(prefix + "wide", "cpus", 64 << 20, "true");
  wide.mutable_resources()->set_cpu_millis(int64_t{ncpu} * 1000 + 1000);
  v1::JobSpec whole = BusyboxJob(prefix + "whole", "cpus", 64 << 20, "true");
  whole.mutable_resources()->set_cpu_millis(int64_t{ncpu} * 1000);
  *s.add_jobs() = wide;
  *s.add_jobs() = whole;
  absl::StatusOr<v1::SyncSnapshotResponse> r = c->Sync(s);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rejections_size(), 1) << r->DebugString();
  const v1::JobRejection& rejected = r->rejections(0);
  EXPECT_EQ(rejected.job_id(), wide.id());
  EXPECT_EQ(rejected.reason(), v1::REJECT_REASON_NEVER_FITS);
  EXPECT_EQ(rejected.field(), "resources.cpu_millis");
  EXPECT_TRUE(absl::StrContains(rejected.message(),
                                absl::StrCat("the Docker host has ", ncpu, " core")))
      << rejected.message();
  // The widest job the host can run does run.
  const absl::Time deadline = absl::Now() + absl::Seconds(90);
  v1::Job last;
  while (absl::Now() < deadline) {
    absl::StatusOr<v1::Job> j = c->GetJob(whole.id());
    if (j.ok()) {
      last = *j;
      if (last.state() == v1::JOB_STATE_SUCCEEDED || last.state() == v1::JOB_STATE_FAILED) break;
    }
    absl::SleepFor(absl::Milliseconds(200));
  }
  EXPECT_EQ(last.state(), v1::JOB_STATE_SUCCEEDED) << last.DebugString();
}

}  // namespace
}  // namespace berth
