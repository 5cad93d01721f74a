// The planner's memory (planner::PlannerMemory) in a workload file
// (berth.v1.PlannerMemory, Workload.planner_memory): written with a state
// berth-plan emits at a moment, read back — strictly — when that state is
// planned again. Written by planner/convert/workload_state.h (MemoryToProto).
//
// Pure functions; thread-compatible.
#ifndef BERTH_TOOLS_PLAN_MEMORY_H_
#define BERTH_TOOLS_PLAN_MEMORY_H_

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "berth/v1/files.pb.h"
#include "planner/model/model.h"
#include "planner/simulator/simulator.h"

namespace berth {
namespace plan {

// `proto` as the memory of `sim` (its start and jobs already read), or the
// problems with it, one per line, each naming the field (and the job or
// workspace): a reservation holder that is not a job of the workload queued
// at its start, a promise without a holder, a workspace turn of 0, of an
// empty name or listed twice, a top priority seen after the start or given without when.
// Appends to `problems`; `*out` is valid only if it added none.
void MemoryFromProto(const v1::PlannerMemory& proto, const planner::SimInput& sim,
                     planner::PlannerMemory* out, std::vector<std::string>* problems);

}  // namespace plan
}  // namespace berth

#endif  // BERTH_TOOLS_PLAN_MEMORY_H_
