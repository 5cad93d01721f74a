// The deterministic workload of store_crash_helper / store_crash_test
// (testonly): snapshot G holds jobs j<3G> .. j<3G+29>, so each generation
// adds 3 jobs and drops (cancels) 3, and some priorities change with G.
#ifndef BERTH_EXECUTOR_STORE_STORE_CRASH_UTIL_H_
#define BERTH_EXECUTOR_STORE_STORE_CRASH_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "berth/v1/job.pb.h"

namespace berth {

inline constexpr uint64_t kCrashWindow = 30;

inline int32_t CrashPriority(uint64_t n, uint64_t generation) {
  return static_cast<int32_t>(n % 7 == 0 ? generation % 4 : n % 4);
}

inline std::vector<berth::v1::JobSpec> CrashSnapshot(uint64_t generation) {
  std::vector<berth::v1::JobSpec> jobs;
  for (uint64_t n = 3 * generation; n < 3 * generation + kCrashWindow; ++n) {
    berth::v1::JobSpec s;
    s.set_id(absl::StrCat("j", n));
    s.set_workspace(absl::StrCat("ws", n % 3));
    s.set_image("registry.example/job-runner:v3");
    s.set_priority(CrashPriority(n, generation));
    s.mutable_resources()->set_cpu_millis(1000);
    s.mutable_resources()->set_memory_bytes(int64_t{1} << 30);
    jobs.push_back(std::move(s));
  }
  return jobs;
}

}  // namespace berth

#endif  // BERTH_EXECUTOR_STORE_STORE_CRASH_UTIL_H_
