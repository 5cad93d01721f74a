// A valid ContainerSpec for the runtimes' unit tests (testonly): workspace
// "ws", action "run", image berth-test/busybox:1, env A=1, 500 millicpu and
// 64 MiB; the job id and argv are the caller's.
#ifndef BERTH_EXECUTOR_RUNTIME_UNIT_TEST_SPEC_H_
#define BERTH_EXECUTOR_RUNTIME_UNIT_TEST_SPEC_H_

#include <string>
#include <utility>
#include <vector>

#include "executor/runtime/runtime.h"

namespace berth {

inline ContainerSpec UnitTestSpec(std::string job_id, std::vector<std::string> argv) {
  ContainerSpec s;
  s.job_id = std::move(job_id);
  s.workspace = "ws";
  s.action = "run";
  s.image = "berth-test/busybox:1";
  s.argv = std::move(argv);
  s.env = {{"A", "1"}};
  s.cpu_millis = 500;
  s.memory_bytes = 64 << 20;
  return s;
}

}  // namespace berth

#endif  // BERTH_EXECUTOR_RUNTIME_UNIT_TEST_SPEC_H_
