#include "server/core/budget_checks.h"

#include "absl/strings/str_cat.h"
#include "executor/runtime/runtime_limits.h"
#include "planner/base/units.h"

namespace berth {

absl::Status CheckBudgetsCanRunAJob(int64_t memory_bytes, int64_t cpu_millis,
                                    absl::string_view memory_field,
                                    absl::string_view cpu_field) {
  if (memory_bytes > 0 && memory_bytes < kMinMemoryBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        memory_field, ": ", FormatBytes(memory_bytes),
        " is below the smallest job's memory (Docker's minimum limit, ",
        FormatBytes(kMinMemoryBytes), "): no job could ever be admitted"));
  }
  if (cpu_millis > 0 && cpu_millis < kMinCpuMillis) {
    return absl::InvalidArgumentError(absl::StrCat(
        cpu_field, ": ", FormatCpu(cpu_millis), " is below the smallest job's CPU (",
        FormatCpu(kMinCpuMillis), ", the kernel's minimum CPU quota): no job could ever be "
        "admitted"));
  }
  return absl::OkStatus();
}

std::vector<std::string> BudgetsAboveEngine(const v1::Budgets& budgets, const EngineSize& engine) {
  std::vector<std::string> out;
  if (engine.memory_bytes > 0 && budgets.memory_bytes() > engine.memory_bytes) {
    out.push_back(absl::StrCat("memory_bytes ", FormatBytes(budgets.memory_bytes()),
                               " is more than the engine's ", FormatBytes(engine.memory_bytes),
                               " (docker info MemTotal): jobs admitted on it may not fit"));
  }
  if (engine.cpu_millis > 0 && budgets.cpu_millis() > engine.cpu_millis) {
    out.push_back(absl::StrCat("cpu_millis ", FormatCpu(budgets.cpu_millis()),
                               " is more than the engine's ", FormatCpu(engine.cpu_millis),
                               " (docker info NCPU): jobs admitted on it will share the CPUs"));
  }
  return out;
}

}  // namespace berth
