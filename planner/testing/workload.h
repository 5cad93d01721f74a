// Seeded random workloads for tests, benchmarks and the fuzzer's seeds.
// Test-only. The default mix is the benchmark mix: 60 workspaces,
// priorities 0-3, memory 0.5-64 GiB log-uniform, cpu 0.5-8 cores, 2% of jobs
// with dependencies, 24-64 running jobs.
#ifndef BERTH_PLANNER_TESTING_WORKLOAD_H_
#define BERTH_PLANNER_TESTING_WORKLOAD_H_

#include <cstdint>

#include "absl/time/time.h"
#include "planner/model/model.h"

namespace berth::planner::testing {

struct WorkloadOptions {
  uint64_t seed = 1;
  int num_queued = 1000;
  int min_running = 24;         // running jobs: uniform in [min, max],
  int max_running = 64;         // as many as the budgets hold
  int num_workspaces = 60;
  int max_priority = 3;         // priorities uniform in [0, max]
  double min_memory_gib = 0.5;  // log-uniform
  double max_memory_gib = 64;
  int64_t min_cpu_millis = 500;  // uniform, multiples of 100
  int64_t max_cpu_millis = 8000;
  double dependency_fraction = 0.02;  // on 1-2 other jobs
  double database_fraction = 0.05;    // jobs in pool "database"
  double unknown_duration_fraction = 0.1;
  absl::Duration min_duration = absl::Minutes(1);  // log-uniform
  absl::Duration max_duration = absl::Hours(6);
  // Spread of created_at before `now`.
  absl::Duration created_spread = absl::Hours(24);
};

struct Workload {
  State state;
  Budgets budgets;
  absl::Time now;
};

// Budgets used by the benchmark: 1 TiB, 256 cores, 64 workers, database pool
// of 8, 16 per workspace.
Budgets BenchmarkBudgets();

// A random workload; the same options always give the same workload.
Workload MakeWorkload(const WorkloadOptions& options,
                      const Budgets& budgets = BenchmarkBudgets());

// The benchmarks' workload of `num_queued` jobs (seed 42, the other options
// at their defaults), made once per size and kept for the process.
// Not thread-safe.
const Workload& BenchmarkWorkload(int64_t num_queued);

}  // namespace berth::planner::testing

#endif  // BERTH_PLANNER_TESTING_WORKLOAD_H_
