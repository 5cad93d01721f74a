// DockerRuntime::SampleUsage against the real dockerd and the real cgroup
// files: containers that fill a tmpfs with a known number of bytes (tmpfs
// pages are charged to the writer's memory cgroup, like anonymous memory).
#include <string>

#include "executor/runtime/docker/docker_runtime.h"
#include "executor/runtime/docker/testing/docker_test_util.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

using ::berth::testing::InstanceCleanup;
using ::berth::testing::TestOptions;
using ::berth::testing::TestSpec;
using ::berth::testing::UniqueName;
using ::berth::testing::WaitFor;

constexpr int64_t kMiB = int64_t{1} << 20;

class DockerUsageTest : public ::testing::Test {
 protected:
  DockerUsageTest() : instance_(UniqueName("usage")), cleanup_(instance_) {}

  void SetUp() override {
    DockerRuntimeOptions o = TestOptions(instance_);
    o.tmp_size = "256m";  // room for the fills below
    absl::StatusOr<std::unique_ptr<DockerRuntime>> rt = DockerRuntime::Create(o);
    ASSERT_TRUE(rt.ok()) << rt.status();
    rt_ = std::move(*rt);
  }

  // A job that writes `mib` MiB to /tmp and then sleeps.
  ContainerSpec Filler(const std::string& name, int64_t mib) {
    ContainerSpec spec = TestSpec(instance_ + "-" + name,
                                  {"sh", "-c",
                                   "head -c " + std::to_string(mib * kMiB) +
                                       " /dev/zero > /tmp/fill && sleep 120"});
    spec.memory_bytes = 384 * kMiB;
    return spec;
  }

  // Sweeps until every job in `want` shows at least its fill charged.
  UsageSamples SweepUntilFilled(const std::map<std::string, int64_t>& want) {
    UsageSamples last;
    const bool filled = WaitFor(
        [&] {
          absl::StatusOr<ContainerList> list = rt_->List();
          if (!list.ok()) return false;
          absl::StatusOr<UsageSamples> s = rt_->SampleUsage(*list);
          if (!s.ok()) return false;
          last = *s;
          for (const auto& [job, bytes] : want) {
            auto it = last.find(job);
            if (it == last.end() || it->second.memory_bytes < bytes) return false;
          }
          return true;
        },
        absl::Seconds(60), absl::Milliseconds(200));
    EXPECT_TRUE(filled) << "the fills never showed in the cgroups";
    return last;
  }

  const std::string instance_;
  InstanceCleanup cleanup_;
  std::unique_ptr<DockerRuntime> rt_;
};

TEST_F(DockerUsageTest, PeakOfKnownAllocationsIsWithinTenPercentInOneSweep) {
  const ContainerSpec a = Filler("a", 100), b = Filler("b", 40);
  ASSERT_TRUE(rt_->Start(a).ok());
  ASSERT_TRUE(rt_->Start(b).ok());
  const UsageSamples s = SweepUntilFilled({{a.job_id, 100 * kMiB}, {b.job_id, 40 * kMiB}});
  ASSERT_EQ(s.size(), 2u);
  for (const auto& [job, mib] : {std::pair{a.job_id, 100}, std::pair{b.job_id, 40}}) {
    const UsageSample& u = s.at(job);
    const double want = static_cast<double>(mib * kMiB);
    // This kernel keeps a high-water mark (cgroup v1 max_usage_in_bytes, v2
    // memory.peak); where it does not, the peak is the sampled maximum.
    const int64_t peak = u.peak_memory_bytes > 0 ? u.peak_memory_bytes : u.memory_bytes;
    EXPECT_GE(static_cast<double>(peak), want) << job;
    EXPECT_LE(static_cast<double>(peak), want * 1.1) << job << ": " << peak;
    EXPECT_GT(u.cpu, absl::ZeroDuration()) << job;  // it wrote 100 MiB
  }

  // A sweep reads files only: no engine call.
  absl::StatusOr<ContainerList> list = rt_->List();
  ASSERT_TRUE(list.ok());
  const int64_t before = TotalCalls(rt_->Counters());
  ASSERT_TRUE(rt_->SampleUsage(*list).ok());
  EXPECT_EQ(TotalCalls(rt_->Counters()), before);

  // A stopped container has no cgroup left: it is not in the sweep.
  ASSERT_TRUE(rt_->Stop(b.job_id, absl::ZeroDuration()).ok());
  list = rt_->List();
  ASSERT_TRUE(list.ok());
  absl::StatusOr<UsageSamples> after = rt_->SampleUsage(*list);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->count(b.job_id), 0u);
  EXPECT_EQ(after->count(a.job_id), 1u);
}

TEST_F(DockerUsageTest, RemoteEngineOrNoCgroupRootDoesNotObserve) {
  DockerRuntimeOptions o = TestOptions(instance_);
  o.endpoint.url = "https://127.0.0.1:2376";
  absl::StatusOr<std::unique_ptr<DockerRuntime>> remote = DockerRuntime::Create(o);
  ASSERT_TRUE(remote.ok()) << remote.status();
  EXPECT_EQ((*remote)->SampleUsage({}).status().code(), absl::StatusCode::kUnimplemented);
  o = TestOptions(instance_);
  o.cgroup_root = "";
  absl::StatusOr<std::unique_ptr<DockerRuntime>> off = DockerRuntime::Create(o);
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_EQ((*off)->SampleUsage({}).status().code(), absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace berth
