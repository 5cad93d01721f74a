// Ranking policies: the order in which the admission search considers queued
// jobs. A policy is small, stateless and chosen by name; adding one means
// writing a RankingPolicy and listing it in ranking.cc — the search
// (plan.cc) does not change.
//
// Built-in policies:
//   "drf"  (default) effective priority desc, jobs aged to a priority
//          after the jobs whose own priority it is (JobRecord::aged_levels;
//          aged jobs of one level by when they reached it, whatever their
//          workspace, then by their own priority, then created_at); among
//          the jobs at their own priority, fair share across
//          workspaces: the workspace with the smallest dominant resource share
//          (DRF: max of memory/memory budget and cpu/cpu budget, counting its
//          running jobs and its jobs ranked so far) goes next; within a
//          workspace created_at, then id. Workspaces tied on share go by
//          when their next job was queued (JobRecord::waiting_since_ns),
//          then take turns: the least recently admitted
//          (State::workspace_turns) goes first, whatever their jobs'
//          created_at.
//   "fifo" created_at, then id (priority and workspace ignored).
//
// Thread-safe: policies are immutable singletons.
#ifndef BERTH_PLANNER_RANKING_RANKING_H_
#define BERTH_PLANNER_RANKING_RANKING_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "planner/model/job_record.h"
#include "planner/model/model.h"
#include "planner/model/scratch.h"

namespace berth::planner {

// The keys a policy ranked one job by (RankingInput::keys), as the policy
// compared them: "why is this job where it is" for explanations, never
// recomputed elsewhere. Only "drf" fills the share fields.
struct JobRankKey {
  // The job is in its level's aged band (JobRecord::aged_levels > 0).
  bool aged = false;
  // Its 0-based place in its run: among its workspace's jobs of its level
  // (by created_at, then id) or, in an aged band, among the band's jobs (by
  // reached_ns, then own priority, created_at, id).
  uint32_t position = 0;
  // Aged: when it reached its level (waiting_since + levels x interval).
  int64_t reached_ns = 0;
  // Its workspace's share before this job was ranked (running jobs and its
  // jobs ranked before it in this plan), each as a fraction of the budget.
  double memory_share = 0;
  double cpu_share = 0;
  // The fair-share merge key its workspace held when this job was picked
  // (smallest first): the dominant share as compared (a float's bits), when
  // its next job was queued, its last turn, then a hash and its name rank.
  // A workspace's share never falls, but the later fields can: the key is
  // the lexicographic maximum of the workspace's keys at its picks so far
  // in the level, which is what the merge order amounts to, so that
  // different workspaces' jobs order exactly by (share_bits, since_ns,
  // turn, salt, workspace) and one workspace's jobs by position.
  uint32_t share_bits = 0;
  int64_t since_ns = 0;
  uint64_t turn = 0;
  uint64_t salt = 0;
};

// What a policy may look at. Jobs are identified by their index in `jobs`
// (= index in State::queued).
struct RankingInput {
  absl::Span<const JobRecord> jobs;
  // The original jobs, for tie-breaks on ids.
  const State* state = nullptr;
  // Budget totals (DRF normalises shares by them; <= 0 means the dimension
  // is ignored for shares).
  int64_t memory_capacity = 0;
  int64_t cpu_capacity = 0;
  // Running jobs' reservations per workspace (index = JobRecord::workspace).
  absl::Span<const int64_t> running_memory_by_workspace;
  absl::Span<const int64_t> running_cpu_by_workspace;
  // Summaries of `jobs`, so policies need not scan them: every
  // JobRecord::workspace is < num_workspaces, and every priority lies in
  // [min_priority, max_priority] (both 0 when there are no jobs).
  uint32_t num_workspaces = 0;
  // Per workspace (index = JobRecord::workspace): the turn of its most
  // recent admission (State::workspace_turns), 0 = never admitted. May be
  // shorter than num_workspaces (missing = 0).
  absl::Span<const uint64_t> last_turn_by_workspace;
  int32_t min_priority = 0;
  int32_t max_priority = 0;
  // Policy::aging_interval in nanoseconds (0: aging off). Jobs aged to a
  // level (JobRecord::aged_levels > 0) reached it at waiting_since_ns +
  // aged_levels x this.
  int64_t aging_interval_ns = 0;
  // Buffers the policy may reuse across calls instead of allocating. Never
  // null when called by Plan().
  ScratchBuffers* scratch = nullptr;
  // If not null, Rank() also writes (*keys)[i] for every job i (resized to
  // jobs.size()): for explanations only, Plan() leaves it null.
  std::vector<JobRankKey>* keys = nullptr;
};

// Total order on two jobs that agree on every key a policy ranks by: id,
// then the remaining fields, then index (only identical duplicates reach
// the index, and their decisions are identical too). Deterministic under
// any permutation of State::queued for distinct jobs.
bool TieBreakLess(const State& state, uint32_t a, uint32_t b);

class RankingPolicy {
 public:
  virtual ~RankingPolicy() = default;

  // The name it is chosen by, e.g. "drf".
  virtual absl::string_view name() const = 0;

  // Replaces `order` with a permutation of [0, input.jobs.size()), best
  // first. Must depend only on the jobs' contents, never on their indices
  // (use TieBreakLess for full ties), so that the plan is the same for any
  // input order. Must be O(n log n) and must not throw or crash on any
  // JobRecord values (rejected jobs are ranked too).
  virtual void Rank(const RankingInput& input,
                    std::vector<uint32_t>& order) const = 0;
};

// The built-in policies. Never null; live forever.
const RankingPolicy& DrfRanking();
const RankingPolicy& FifoRanking();

// The policy called `name`. NOT_FOUND (naming the known ones) if none.
[[nodiscard]] absl::StatusOr<const RankingPolicy*> FindRankingPolicy(absl::string_view name);

// Names of all policies, sorted.
std::vector<absl::string_view> RankingPolicyNames();

}  // namespace berth::planner

#endif  // BERTH_PLANNER_RANKING_RANKING_H_
