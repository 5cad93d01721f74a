// The planner's vocabulary for decisions. Verdict, Reason and Dimension are
// 1:1 with berth.v1's enums of the same names (plan.proto), with the same
// numeric values, so the edge converts with a static_cast. Problem is the
// detail of a REJECT, mapped to berth.v1.RejectReason / FailureCause at the
// edge (see each value). Thread-safe: constants and pure functions.
#ifndef BERTH_PLANNER_MODEL_REASONS_H_
#define BERTH_PLANNER_MODEL_REASONS_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace berth::planner {

// = berth.v1.Verdict.
enum class Verdict : uint8_t {
  kUnspecified = 0,
  kAdmit = 1,   // start it now
  kWait = 2,    // keep it queued; Reason says why
  kReject = 3,  // it can never run as specified; Problem says why
};

// = berth.v1.WaitReason.
enum class Reason : uint8_t {
  kUnspecified = 0,
  kAdmitted = 1,
  kWaitingForMemory = 2,
  kWaitingForCpu = 3,
  kWaitingForWorkerSlot = 4,
  kWaitingForPoolSlot = 5,
  kWaitingForWorkspaceCap = 6,
  kWaitingForDependencies = 7,
  // Fits what is free now, but starting it would delay the head-of-line
  // reservation (no backfill possible).
  kWaitingForPriority = 8,
  kPaused = 9,
  kPoolInMaintenance = 10,
  // Larger than the whole budget in some dimension, or invalid input
  // (Problem says which). Verdict REJECT.
  kNeverFits = 11,
  // A dependency failed, was cancelled or rejected. Verdict REJECT; the
  // executor records FAILED / DEPENDENCY_FAILED.
  kDependencyFailed = 12,
};

// = berth.v1.Dimension.
enum class Dimension : uint8_t {
  kUnspecified = 0,
  kMemory = 1,          // bytes
  kCpu = 2,             // millicores
  kWorkerSlots = 3,     // jobs
  kPoolSlots = 4,       // jobs in the job's pool
  kWorkspaceSlots = 5,  // jobs of the job's workspace
};

// Why a job is rejected (Verdict::kReject); kNone otherwise.
enum class Problem : uint8_t {
  kNone = 0,
  // Reason kNeverFits:
  kInvalidResources = 1,   // cpu or memory <= 0   (RejectReason INVALID_RESOURCES)
  kExceedsBudget = 2,      // > whole budget        (RejectReason NEVER_FITS)
  kUnknownPool = 3,        // pool has no budget    (RejectReason UNKNOWN_POOL)
  kDuplicateId = 4,        // id used twice         (RejectReason INVALID_ID)
  kUnknownDependency = 5,  // depends on an unknown id (UNKNOWN_DEPENDENCY)
  kDependencyCycle = 6,    // on a cycle, incl. self (DEPENDENCY_CYCLE)
  // Reason kDependencyFailed:
  kDependencyFailed = 7,    // a dependency finished unsuccessfully
  kDependencyRejected = 8,  // a queued dependency is itself rejected
};

// Stable upper-snake names ("WAITING_FOR_MEMORY", "DIMENSION_CPU" without the
// prefix: "MEMORY"), for logs, canonical output and tests.
absl::string_view VerdictName(Verdict v);
absl::string_view ReasonName(Reason r);
absl::string_view DimensionName(Dimension d);
absl::string_view ProblemName(Problem p);

}  // namespace berth::planner

#endif  // BERTH_PLANNER_MODEL_REASONS_H_
