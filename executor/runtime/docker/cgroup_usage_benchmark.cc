// The cost of one usage sweep (CgroupUsage::Sweep): N running
// containers on a fake cgroup v1 tree (cgroupfs layout, the three files a
// sample reads), N = 10, 100, 1000; and, when BERTH_SWEEP_IDS names real
// running containers (comma-separated full ids), the same sweep of the host's
// /sys/fs/cgroup. docs/BENCHMARKS.md "Docker".
//
//   bazel run --config=bench //executor/runtime/docker:cgroup_usage_benchmark
//   BERTH_SWEEP_IDS=$(docker ps -q --no-trunc | paste -sd,) bazel-bin/...
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "benchmark/benchmark.h"
#include "executor/runtime/docker/cgroup_usage.h"

namespace berth {
namespace {

namespace fs = std::filesystem;

void WriteFile(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

ContainerList Running(const std::vector<std::string>& ids) {
  ContainerList list;
  for (size_t i = 0; i < ids.size(); ++i) {
    ContainerSummary& c = list[absl::StrCat("job-", i)];
    c.job_id = absl::StrCat("job-", i);
    c.container_id = ids[i];
    c.state = ContainerState::kRunning;
  }
  return list;
}

void Sweep(benchmark::State& st, const CgroupUsage& reader, const ContainerList& list) {
  size_t read = 0;
  for (auto _ : st) {
    UsageSamples s = reader.Sweep(list);
    read = s.size();
    benchmark::DoNotOptimize(read);
  }
  if (read != list.size()) {
    st.SkipWithError(absl::StrCat("read ", read, " of ", list.size(), " containers").c_str());
  }
  st.counters["ns_per_container"] = benchmark::Counter(
      static_cast<double>(list.size()),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void BM_SweepFakeTree(benchmark::State& st) {
  const int n = static_cast<int>(st.range(0));
  const char* tmp = std::getenv("TEST_TMPDIR");
  const fs::path root = fs::path(tmp != nullptr ? tmp : "/tmp") /
                        absl::StrCat("berth-cgroup-bench-", n);
  fs::remove_all(root);
  std::vector<std::string> ids;
  for (int i = 0; i < n; ++i) {
    const std::string id = absl::StrFormat("%064x", i + 1);
    ids.push_back(id);
    const fs::path dir = fs::path("docker") / id;
    WriteFile(root / "memory" / dir / "memory.usage_in_bytes", "52428800\n");
    WriteFile(root / "memory" / dir / "memory.max_usage_in_bytes", "62914560\n");
    WriteFile(root / "cpuacct" / dir / "cpuacct.usage", "2500000000\n");
  }
  Sweep(st, CgroupUsage(CgroupUsageOptions{root.string()}), Running(ids));
  fs::remove_all(root);
}
BENCHMARK(BM_SweepFakeTree)->Arg(10)->Arg(100)->Arg(1000)->Unit(benchmark::kMicrosecond);

void BM_SweepHost(benchmark::State& st) {
  const char* ids = std::getenv("BERTH_SWEEP_IDS");
  if (ids == nullptr || *ids == '\0') {
    st.SkipWithError("BERTH_SWEEP_IDS not set");
    for (auto _ : st) {
    }
    return;
  }
  Sweep(st, CgroupUsage(CgroupUsageOptions{}),
        Running(absl::StrSplit(ids, ',', absl::SkipWhitespace())));
}
BENCHMARK(BM_SweepHost)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace berth
