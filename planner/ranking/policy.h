// Policy: how Plan() ranks and admits. An options struct with defaults; a
// value type (the ranking it points to is an immutable singleton).
#ifndef BERTH_PLANNER_RANKING_POLICY_H_
#define BERTH_PLANNER_RANKING_POLICY_H_

#include "absl/time/time.h"
#include "planner/ranking/ranking.h"

namespace berth::planner {

struct Policy {
  // The ranking policy (FindRankingPolicy("drf" / "fifo")). Default DRF.
  // A null pointer is treated as DRF.
  const RankingPolicy* ranking = &DrfRanking();

  // Expected duration assumed for jobs (queued or running) without one. It
  // places reservations and decides which jobs may backfill; too short lets
  // backfill delay the head job when real jobs overrun, too long makes
  // backfill timid. Values <= 0 mean one hour.
  absl::Duration default_duration = absl::Hours(1);

  // EASY backfill: jobs ranked after the head-of-line reservation may start
  // if they do not delay it. false: nothing ranked after a job that does not
  // fit is admitted (strict order; for comparisons and what-if runs).
  bool backfill = true;

  // Aging: a waiting job's effective priority is its priority plus one for
  // every full `aging_interval` it has waited since Berth queued it
  // (QueuedJob::queued_at; created_at when that is unknown), never above the
  // top level P: the highest priority among the queued jobs that fit the
  // budgets, or the one remembered for `aging_top_memory` if higher. An aged
  // job ranks after the jobs whose own priority is the level it reached and
  // ahead of every lower level; aged jobs of one level by when they reached
  // it, whatever their workspace (at one instant, the higher own priority
  // first). So aging never puts a job ahead of a job of the top priority,
  // nor ahead of a job of higher priority that waited as long
  // (docs/DESIGN.md "Aging"). Jobs without queued_at and created_at (at or
  // before the Unix epoch) do not age.
  // <= 0 turns aging off. Default 2 hours, chosen in docs/BENCHMARKS.md
  // "Planner" (what the policy buys): the one interval measured that, on
  // three overloaded weeks, keeps the top priority's p95 and max wait within
  // 1.5x of no aging and halves the lowest priority's longest wait.
  absl::Duration aging_interval = absl::Hours(2);

  // How long aging remembers the top priority (State::top_priority): the
  // highest priority queued within this time is the level aged jobs stop
  // below, even while none of its jobs is queued. So between the arrivals
  // of top-priority jobs an aged job ranks ahead of the lower levels' own
  // jobs (the lowest priority's longest wait halves on overloaded weeks)
  // and still never ahead of a top-priority job. Too short and the second
  // level's stream blocks aged jobs whenever no top job is queued; too long
  // and a job of an unusually high priority lets aged jobs pass the usual
  // top level for that long. Default 24 hours (one daily cycle of
  // arrivals). <= 0: no memory (the top is the highest queued priority).
  absl::Duration aging_top_memory = absl::Hours(24);
};

}  // namespace berth::planner

#endif  // BERTH_PLANNER_RANKING_POLICY_H_
