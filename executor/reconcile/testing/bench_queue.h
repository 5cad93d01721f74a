// The large queue the replan, GetPlan and dashboard benchmarks run on, built
// one way for all so that their figures describe the same store: job i is
// "ws<i%20>.job-<i>" in workspace ws<i%20>, action act<i%7>, priority i%4,
// 0.5-1.25 cores, 1-8 GiB, a 1 h estimate, created within 1000 s; the first
// `running` jobs run; the last `finished` ones (not among those) have run
// and ended, every 4th failed with exit code 1. A test-only helper for
// bounded tools, not a test.
#ifndef BERTH_EXECUTOR_RECONCILE_TESTING_BENCH_QUEUE_H_
#define BERTH_EXECUTOR_RECONCILE_TESTING_BENCH_QUEUE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "berth/v1/budgets.pb.h"
#include "berth/v1/job.pb.h"
#include "executor/store/store.h"

namespace berth {

// The budgets the queue is planned with: 256 GiB, 32 cores, 24 workers.
v1::Budgets BenchBudgets();

// Job i of the queue.
v1::JobSpec BenchJobSpec(int i);

struct BenchQueue {
  int jobs = 0;
  int running = 8;
  int finished = 0;
};

// Applies the queue to the empty `store` at `now` (one snapshot, then the
// decisions and transitions); fills `ids` with the jobs' ids in order.
absl::Status FillBenchQueue(Store& store, const BenchQueue& q, absl::Time now,
                            std::vector<std::string>* ids);

}  // namespace berth

#endif  // BERTH_EXECUTOR_RECONCILE_TESTING_BENCH_QUEUE_H_
