#include "planner/model/reasons.h"

namespace berth::planner {

absl::string_view VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kUnspecified: return "UNSPECIFIED";
    case Verdict::kAdmit: return "ADMIT";
    case Verdict::kWait: return "WAIT";
    case Verdict::kReject: return "REJECT";
  }
  return "UNKNOWN";
}

absl::string_view ReasonName(Reason r) {
  switch (r) {
    case Reason::kUnspecified: return "UNSPECIFIED";
    case Reason::kAdmitted: return "ADMITTED";
    case Reason::kWaitingForMemory: return "WAITING_FOR_MEMORY";
    case Reason::kWaitingForCpu: return "WAITING_FOR_CPU";
    case Reason::kWaitingForWorkerSlot: return "WAITING_FOR_WORKER_SLOT";
    case Reason::kWaitingForPoolSlot: return "WAITING_FOR_POOL_SLOT";
    case Reason::kWaitingForWorkspaceCap: return "WAITING_FOR_WORKSPACE_CAP";
    case Reason::kWaitingForDependencies: return "WAITING_FOR_DEPENDENCIES";
    case Reason::kWaitingForPriority: return "WAITING_FOR_PRIORITY";
    case Reason::kPaused: return "PAUSED";
    case Reason::kPoolInMaintenance: return "POOL_IN_MAINTENANCE";
    case Reason::kNeverFits: return "NEVER_FITS";
    case Reason::kDependencyFailed: return "DEPENDENCY_FAILED";
  }
  return "UNKNOWN";
}

absl::string_view DimensionName(Dimension d) {
  switch (d) {
    case Dimension::kUnspecified: return "UNSPECIFIED";
    case Dimension::kMemory: return "MEMORY";
    case Dimension::kCpu: return "CPU";
    case Dimension::kWorkerSlots: return "WORKER_SLOTS";
    case Dimension::kPoolSlots: return "POOL_SLOTS";
    case Dimension::kWorkspaceSlots: return "WORKSPACE_SLOTS";
  }
  return "UNKNOWN";
}

absl::string_view ProblemName(Problem p) {
  switch (p) {
    case Problem::kNone: return "NONE";
    case Problem::kInvalidResources: return "INVALID_RESOURCES";
    case Problem::kExceedsBudget: return "EXCEEDS_BUDGET";
    case Problem::kUnknownPool: return "UNKNOWN_POOL";
    case Problem::kDuplicateId: return "DUPLICATE_ID";
    case Problem::kUnknownDependency: return "UNKNOWN_DEPENDENCY";
    case Problem::kDependencyCycle: return "DEPENDENCY_CYCLE";
    case Problem::kDependencyFailed: return "DEPENDENCY_FAILED";
    case Problem::kDependencyRejected: return "DEPENDENCY_REJECTED";
  }
  return "UNKNOWN";
}

}  // namespace berth::planner
