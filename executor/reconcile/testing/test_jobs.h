// Job specs and budgets for unit tests of the executor and the service core
// (testonly). Sizes in whole GiB keep test arithmetic readable.
#ifndef BERTH_EXECUTOR_RECONCILE_TESTING_TEST_JOBS_H_
#define BERTH_EXECUTOR_RECONCILE_TESTING_TEST_JOBS_H_

#include <cstdint>
#include <string>

#include "berth/v1/budgets.pb.h"
#include "berth/v1/job.pb.h"

namespace berth::testing {

inline constexpr int64_t kGiB = int64_t{1} << 30;

// A job of workspace "ws", image berth-test/busybox:1, 0.5 cores,
// `memory_gib` GiB, expected to run 10 minutes.
inline v1::JobSpec TestJob(const std::string& id, int64_t memory_gib, int priority = 0) {
  v1::JobSpec j;
  j.set_id(id);
  j.set_workspace("ws");
  j.set_image("berth-test/busybox:1");
  j.add_argv("true");  // required at ingest
  j.set_priority(priority);
  j.mutable_resources()->set_cpu_millis(500);
  j.mutable_resources()->set_memory_bytes(memory_gib * kGiB);
  j.mutable_expected_duration()->set_seconds(600);
  return j;
}

// `memory_gib` GiB, 8 cores, `workers` slots.
inline v1::Budgets TestBudgets(int64_t memory_gib, int workers = 10) {
  v1::Budgets b;
  b.set_memory_bytes(memory_gib * kGiB);
  b.set_cpu_millis(8000);
  b.set_max_workers(workers);
  return b;
}

}  // namespace berth::testing

#endif  // BERTH_EXECUTOR_RECONCILE_TESTING_TEST_JOBS_H_
