// JobRecord: the compact, string-free form of a queued job that ranking
// policies and the admission search work on. Built once per Plan() call by
// Prepare() (prepare.h); index i describes State::queued[i].
#ifndef BERTH_PLANNER_MODEL_JOB_RECORD_H_
#define BERTH_PLANNER_MODEL_JOB_RECORD_H_

#include <cstdint>

#include "planner/model/reasons.h"

namespace berth::planner {

struct JobRecord {
  int64_t memory_bytes;  // as queued (may be <= 0 for rejected jobs)
  int64_t cpu_millis;
  int64_t created_ns;    // created_at in Unix nanoseconds, saturated
  int64_t duration_ns;   // expected duration, default applied, >= 1
  // Where aging counts the wait from, Unix nanoseconds: queued_at, or
  // created_at when that is unknown (QueuedJob::queued_at); <= 0: no age.
  int64_t waiting_since_ns;
  int32_t priority;
  uint32_t workspace;    // rank of the workspace name among all names
  uint32_t pool;         // rank of the pool name among all names
  Problem problem;       // kNone unless the job is rejected
  uint8_t flags;         // kFlag* below
  // Aging (Policy::aging_interval): how many levels `priority` (the
  // effective one) is above the job's own; 0 if aging did not move it,
  // saturated at UINT16_MAX. An aged job ranks after the jobs whose own
  // priority is its effective one, and among aged jobs of one level by when
  // it reached that level (waiting_since_ns + aged_levels x the interval:
  // first come, first served within the level, so that of two jobs that
  // waited equally long the higher own priority goes first), then by its
  // own priority, then created_ns.
  uint16_t aged_levels;

  static constexpr uint8_t kFlagPoolInMaintenance = 1;
  static constexpr uint8_t kFlagDependenciesPending = 2;
  static constexpr uint8_t kFlagHasDependencies = 4;

  bool rejected() const { return problem != Problem::kNone; }
  // What the job adds to its workspace's fair share once ranked: its
  // resources, or nothing for jobs that will not run.
  int64_t share_memory() const { return rejected() ? 0 : memory_bytes; }
  int64_t share_cpu() const { return rejected() ? 0 : cpu_millis; }
};

}  // namespace berth::planner

#endif  // BERTH_PLANNER_MODEL_JOB_RECORD_H_
