// The planner's domain model: what is queued, what runs, what finished, and
// the budgets admission must respect. Independent of protobuf: converters at
// the edge (server/, tools/) map berth.v1 messages to and from these types.
//
// Plain value types; not thread-safe to mutate concurrently, safe to read
// from any number of threads.
#ifndef BERTH_PLANNER_MODEL_MODEL_H_
#define BERTH_PLANNER_MODEL_MODEL_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/time/time.h"

namespace berth::planner {

// The pool every job belongs to unless it names another. Always known: it
// needs no entry in Budgets::pool_max_workers.
inline constexpr char kDefaultPool[] = "default";

// What a job reserves while it runs. Valid jobs have both fields > 0; the
// planner rejects queued jobs with a field <= 0 (Problem::kInvalidResources)
// and counts running jobs' negative fields as 0.
struct Resources {
  int64_t cpu_millis = 0;    // millicores; 1000 = one core
  int64_t memory_bytes = 0;  // bytes
};

// A job waiting for admission.
struct QueuedJob {
  std::string id;         // unique among queued, running and finished jobs
  std::string workspace;  // fair-share unit
  std::string pool = kDefaultPool;
  int32_t priority = 0;   // higher runs first
  Resources resources;
  absl::Time created_at = absl::UnixEpoch();  // FIFO tie-break
  // When Berth first queued it (berthd: Job.queued_at; the simulator and
  // berth-plan: its arrival). Aging counts the wait from here, not from
  // created_at, so that a backlog pushed with old creation times keeps its
  // priority levels; created_at still orders equal jobs. At or before the
  // Unix epoch (unknown): aging counts from created_at.
  absl::Time queued_at = absl::UnixEpoch();
  // How long it is expected to run. Zero or negative = unknown: the planner
  // uses Policy::default_duration.
  absl::Duration expected_duration = absl::ZeroDuration();
  // Ids that must have SUCCEEDED before this job may start.
  std::vector<std::string> depends_on;
};

// A job holding resources now (admitted or running).
struct RunningJob {
  std::string id;
  std::string workspace;
  std::string pool = kDefaultPool;
  Resources resources;
  absl::Time started_at = absl::UnixEpoch();
  // Zero or negative = unknown: Policy::default_duration is assumed.
  absl::Duration expected_duration = absl::ZeroDuration();
  // The node it runs on (Node::id), when Budgets::nodes is not empty. A job
  // on a node absent from the inventory (drained, down) counts against the
  // cluster-wide budgets only.
  std::string node;
};

// How a finished job ended, as far as its dependents care.
enum class DependencyOutcome : uint8_t {
  kSucceeded,
  // FAILED, CANCELLED or REJECTED: dependents fail with DEPENDENCY_FAILED.
  kFailed,
};

// Everything the planner looks at besides budgets and policy.
struct State {
  // Queued jobs, in any order: the plan does not depend on it.
  std::vector<QueuedJob> queued;
  // Jobs holding resources now, in any order.
  std::vector<RunningJob> running;
  // Terminal jobs that queued jobs may depend on, by id.
  absl::flat_hash_map<std::string, DependencyOutcome> finished;
  // Admission paused by an operator: nothing is admitted, running jobs go on.
  bool paused = false;
  // The operator's reason for the pause (shown in explanations); may be empty.
  std::string pause_reason;
  // Pools whose jobs are not admitted for now.
  absl::flat_hash_set<std::string> pools_in_maintenance;
  // The operator's reason per pool in maintenance (shown in explanations);
  // pools without an entry have none.
  absl::flat_hash_map<std::string, std::string> maintenance_reasons;
  // The job that held the head-of-line reservation in the previous plan
  // (PlanResult::reserved_job_id), empty if none. If it is still queued and
  // eligible, it is ranked ahead of every job of the same or a lower
  // own priority than its effective one, so that it keeps its reservation
  // until it starts unless a job of higher priority arrives (or ages past
  // it) — or, if it is aged, a job of the top priority created after it
  // reached the top. Ids of jobs no longer queued are ignored.
  std::string reservation_holder;
  // The start first promised to reservation_holder (the reservation_start
  // of the first plan in which it held the reservation); InfiniteFuture() if
  // unknown. Once now >= this, the reservation is due but its job still
  // does not fit — running jobs overran their estimates — and no job may
  // backfill on the strength of its own estimate ("ends before the
  // reservation"): only jobs that fit what the reservation leaves spare.
  absl::Time reservation_promised = absl::InfiniteFuture();
  // Fair turns between equals: per workspace, the turn of its most recent
  // admission (larger = more recent; a workspace without an entry has never
  // been admitted and goes first). The DRF ranking orders workspaces tied on
  // dominant share and on their next job's created_at by it, least recently
  // admitted first, so that identical workspaces take turns instead of a
  // hash picking the same ones every plan. Maintained by CarryReservation()
  // (plan.h) from each plan's admissions; names of workspaces with nothing
  // queued are ignored.
  absl::flat_hash_map<std::string, uint64_t> workspace_turns;
  // Aging's memory of the top priority: the highest priority of
  // a queued job that fit the budgets in recent plans, and the last plan
  // (its `now`) in which a job of that priority was queued; INT32_MIN /
  // InfinitePast() = none. While now - top_priority_seen <=
  // Policy::aging_top_memory, aging treats it as the top level even when no
  // job of it is queued: aged jobs may then pass the natives of the level
  // below, never a job of this priority when one arrives. Maintained by
  // CarryReservation() (plan.h); a planner without it (a first plan, a
  // restarted berthd) takes the highest queued priority as the top.
  int32_t top_priority = INT32_MIN;
  absl::Time top_priority_seen = absl::InfinitePast();
};

// The planner's memory between plans, apart from any job: the State fields
// CarryReservation() maintains (reservation holder and its first promise,
// fair turns, aging's top priority), as a value its owner saves and restores
// — a simulation started mid-run, a state written to a file and planned
// again. Each job's own part of that memory is QueuedJob::queued_at.
struct PlannerMemory {
  std::string reservation_holder;
  absl::Time reservation_promised = absl::InfiniteFuture();
  absl::flat_hash_map<std::string, uint64_t> workspace_turns;
  int32_t top_priority = INT32_MIN;
  absl::Time top_priority_seen = absl::InfinitePast();
};

inline PlannerMemory MemoryOf(const State& s) {
  return {s.reservation_holder, s.reservation_promised, s.workspace_turns, s.top_priority,
          s.top_priority_seen};
}

inline void RestoreMemory(const PlannerMemory& m, State& s) {
  s.reservation_holder = m.reservation_holder;
  s.reservation_promised = m.reservation_promised;
  s.workspace_turns = m.workspace_turns;
  s.top_priority = m.top_priority;
  s.top_priority_seen = m.top_priority_seen;
}

// The label that dedicates a node to one pool: a node labelled
// pool=<name> runs only jobs of that pool, and jobs of a pool with such nodes
// run only on them. Jobs of other pools run on nodes without the label.
inline constexpr char kPoolLabel[] = "pool";

// One host of a multi-node backend (Budgets::nodes).
struct Node {
  std::string id;            // unique among the inventory's nodes
  int64_t memory_bytes = 0;  // for jobs; a node's memory is never overcommitted
  int64_t cpu_millis = 0;
  int32_t max_workers = 0;   // jobs running on it at once; <= 0 = no limit
  std::map<std::string, std::string> labels;  // e.g. {"pool", "database"}
  // How messages name it (a Swarm node's hostname); empty: the id.
  std::string name = {};
};

// The capacity admission hands out. Running jobs' reservations count against
// every field; memory is never overcommitted.
struct Budgets {
  int64_t memory_bytes = 0;  // jobs larger than this are NEVER_FITS
  int64_t cpu_millis = 0;    // jobs larger than this are NEVER_FITS
  int32_t max_workers = 0;   // concurrently running jobs; <= 0: every job
                             // is NEVER_FITS
  // Per-pool limit on running jobs, by pool name; <= 0 = no pool-specific
  // limit (the global max_workers still applies). A pool is *known* if it is "default" or has an entry here. Jobs
  // of unknown pools are rejected (Reason::kNeverFits, Problem::kUnknownPool)
  // — the edge should have rejected them already; the planner never crashes
  // on them.
  absl::flat_hash_map<std::string, int32_t> pool_max_workers;
  // At most this many running jobs per workspace; <= 0 = no cap.
  int32_t workspace_max_workers = 0;
  // Optional node inventory. Empty (the single-host case): only the fields
  // above apply. Otherwise every admitted job is also placed on one node
  // where it fits memory, cpu and a worker slot (best fit: least memory left,
  // then least cpu, ties by node id), reservations are made on one node, and
  // a job that fits no node of its pool's nodes (kPoolLabel) is NEVER_FITS.
  // The fields above still cap the whole cluster; those <= 0 are taken as
  // the nodes' sums (max_workers: unlimited if a node has no limit).
  std::vector<Node> nodes;
};

}  // namespace berth::planner

#endif  // BERTH_PLANNER_MODEL_MODEL_H_
