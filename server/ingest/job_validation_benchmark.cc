// ValidateJobs on a snapshot of 100k jobs with a node inventory of 0, 100 or
// 1,000 nodes (hosts of 64 GiB and 32 cores, a tenth of them with 16 cores,
// every 8th dedicated to the database pool): the ingest cost of the node
// check (server/ingest/node_fit.h). docs/BENCHMARKS.md "berthd sync".
//
//   bazel run --config=bench //server/ingest:job_validation_benchmark
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "server/ingest/job_validation.h"

namespace berth {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

std::vector<v1::JobSpec> Jobs(int n) {
  std::vector<v1::JobSpec> jobs;
  jobs.reserve(n);
  for (int i = 0; i < n; ++i) {
    v1::JobSpec j;
    j.set_id(absl::StrCat("job-", i));
    j.set_workspace(absl::StrCat("ws", i % 50));
    j.set_image("registry.local/research/r:1");
    j.add_argv("run");  // required at ingest
    j.set_pool(i % 10 == 0 ? "database" : "default");
    // 1-48 GiB, 1-24 cores: most fit a node, a few need the 32-core ones.
    j.mutable_resources()->set_memory_bytes((1 + i % 48) * kGiB);
    j.mutable_resources()->set_cpu_millis(1000 * (1 + i % 24));
    jobs.push_back(std::move(j));
  }
  return jobs;
}

void BM_ValidateJobsNodes(benchmark::State& st) {
  const int nodes = static_cast<int>(st.range(0));
  const std::vector<v1::JobSpec> jobs = Jobs(100'000);
  ValidationConfig c;
  c.image_allowed = [](absl::string_view) { return true; };
  c.known_pools = {"database"};
  for (int i = 0; i < nodes; ++i) {
    v1::Node n;
    n.set_id(absl::StrCat("node-", i));
    n.set_memory_bytes(64 * kGiB);
    n.set_cpu_millis(i % 10 == 0 ? 16000 : 32000);
    if (i % 8 == 0) (*n.mutable_labels())["pool"] = "database";
    c.nodes.push_back(std::move(n));
  }
  for (auto _ : st) {
    ValidatedJobs v = ValidateJobs(jobs, c, [](const std::string&) { return false; });
    benchmark::DoNotOptimize(v.accepted.size());
  }
  st.counters["ns_per_job"] = benchmark::Counter(
      static_cast<double>(jobs.size()), benchmark::Counter::kIsIterationInvariantRate |
                                            benchmark::Counter::kInvert);
}
BENCHMARK(BM_ValidateJobsNodes)->Arg(0)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace berth
