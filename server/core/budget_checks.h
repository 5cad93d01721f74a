// Checks of budgets against what can run, shared by berthd's
// start-up flags and SetBudgets: a budget below the smallest job the runtime
// runs admits nothing, ever, so it is refused; a budget above what the
// engine reports (docker info: MemTotal, NCPU) is allowed (an operator may
// overcommit on purpose) but warned about.
//
// Pure functions; thread-safe.
#ifndef BERTH_SERVER_CORE_BUDGET_CHECKS_H_
#define BERTH_SERVER_CORE_BUDGET_CHECKS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "berth/v1/budgets.pb.h"

namespace berth {

// INVALID_ARGUMENT when the memory budget is below Docker's smallest memory
// limit (executor/runtime/runtime_limits.h kMinMemoryBytes, 6 MiB) or the
// CPU budget below the smallest CPU quota (kMinCpuMillis, 0.01 cores): no
// job could ever be admitted. The message starts with
// `<memory_field>: ` or `<cpu_field>: ` (e.g. "budgets.memory_bytes" for
// SetBudgets, "memory" for the --memory flag) and gives the value and the
// minimum. OK otherwise (including values <= 0, which callers refuse
// with their own message).
[[nodiscard]] absl::Status CheckBudgetsCanRunAJob(int64_t memory_bytes, int64_t cpu_millis,
                                                  absl::string_view memory_field,
                                                  absl::string_view cpu_field);

// What the engine reports; 0 = unknown (that dimension is not compared).
struct EngineSize {
  int64_t memory_bytes = 0;
  int64_t cpu_millis = 0;
};

// One sentence per budget dimension above what the engine has, e.g.
// "memory_bytes 256 GiB is more than the engine's 23.4 GiB (docker info
// MemTotal): jobs admitted on it may not fit". Empty when none is.
std::vector<std::string> BudgetsAboveEngine(const v1::Budgets& budgets, const EngineSize& engine);

}  // namespace berth

#endif  // BERTH_SERVER_CORE_BUDGET_CHECKS_H_
