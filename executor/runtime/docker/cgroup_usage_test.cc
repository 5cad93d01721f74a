// CgroupUsage over directory trees laid out as the kernel's cgroup mounts
// (the real files are read by docker_usage_test with real containers).
#include "executor/runtime/docker/cgroup_usage.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

namespace fs = std::filesystem;

const std::string kId(64, 'a');

class CgroupUsageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TEST_TMPDIR");
    root_ = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/cgroup-",
                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void Write(const std::string& rel, const std::string& text) {
    const fs::path p = fs::path(root_) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  CgroupUsage Reader() const { return CgroupUsage(CgroupUsageOptions{root_}); }
  std::string root_;
};

TEST_F(CgroupUsageTest, ReadsCgroupV1CgroupfsLayout) {
  const std::string dir = "docker/" + kId;
  Write("memory/" + dir + "/memory.usage_in_bytes", "1048576\n");
  Write("memory/" + dir + "/memory.max_usage_in_bytes", "104857600\n");
  Write("cpuacct/" + dir + "/cpuacct.usage", "2500000000\n");
  absl::StatusOr<UsageSample> s = Reader().Read(kId);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->memory_bytes, 1048576);
  EXPECT_EQ(s->peak_memory_bytes, 104857600);
  EXPECT_EQ(s->cpu, absl::Milliseconds(2500));
}

TEST_F(CgroupUsageTest, ReadsCgroupV1SystemdLayoutWithJoinedCpuHierarchy) {
  const std::string dir = "system.slice/docker-" + kId + ".scope";
  Write("memory/" + dir + "/memory.usage_in_bytes", "10");
  Write("memory/" + dir + "/memory.max_usage_in_bytes", "20");
  Write("cpu,cpuacct/" + dir + "/cpuacct.usage", "1000");
  absl::StatusOr<UsageSample> s = Reader().Read(kId);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->peak_memory_bytes, 20);
  EXPECT_EQ(s->cpu, absl::Microseconds(1));
}

TEST_F(CgroupUsageTest, ReadsCgroupV2WithAndWithoutMemoryPeak) {
  const std::string dir = "docker/" + kId;
  Write(dir + "/memory.current", "4096\n");
  Write(dir + "/cpu.stat", "usage_usec 1500000\nuser_usec 1000000\nsystem_usec 500000\n");
  absl::StatusOr<UsageSample> s = Reader().Read(kId);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->memory_bytes, 4096);
  EXPECT_EQ(s->peak_memory_bytes, 0);  // kernel before 5.19: no memory.peak
  EXPECT_EQ(s->cpu, absl::Milliseconds(1500));
  Write(dir + "/memory.peak", "8192\n");
  s = Reader().Read(kId);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->peak_memory_bytes, 8192);
}

TEST_F(CgroupUsageTest, MissingCgroupIsNotFoundAndBadIdInvalid) {
  EXPECT_EQ(Reader().Read(kId).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(Reader().Read("../../etc").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Reader().Read("").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(CgroupUsageTest, GarbledFileIsDataLoss) {
  const std::string dir = "docker/" + kId;
  Write("memory/" + dir + "/memory.usage_in_bytes", "lots");
  absl::Status s = Reader().Read(kId).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("memory.usage_in_bytes"), absl::string_view::npos) << s;
}

TEST_F(CgroupUsageTest, SweepReadsRunningContainersOnly) {
  const std::string other(64, 'b');
  for (const std::string& id : {kId, other}) {
    Write("memory/docker/" + id + "/memory.usage_in_bytes", "1");
    Write("memory/docker/" + id + "/memory.max_usage_in_bytes", "2");
    Write("cpuacct/docker/" + id + "/cpuacct.usage", "3");
  }
  ContainerList list;
  list["run"] = ContainerSummary{"run", kId, ContainerState::kRunning};
  list["done"] = ContainerSummary{"done", other, ContainerState::kExited};
  list["gone"] = ContainerSummary{"gone", std::string(64, 'c'), ContainerState::kRunning};
  UsageSamples samples = Reader().Sweep(list);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples.at("run").peak_memory_bytes, 2);
}

}  // namespace
}  // namespace berth
