// Policy: how Plan() ranks and admits. An options struct with defaults; a
// value type (the ranking it points to is an immutable singleton).
#ifndef BERTH_PLANNER_POLICY_H_
#define BERTH_PLANNER_POLICY_H_

#include "absl/time/time.h"
#include "planner/ranking.h"

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
  // every full `aging_interval` since its created_at, but never above the
  // highest priority among the queued jobs that fit the budgets (so aging
  // lifts lower priorities up to the top level and never reorders jobs of
  // the top level, which fair share ranks). A job of priority p is therefore
  // ranked with the top level P after at most (P - p) * aging_interval. <= 0
  // turns aging off. Default 30 minutes: on examples/week.json it cuts the
  // longest wait of priority-0 jobs while p50 waits of higher priorities
  // barely move (docs/BENCHMARKS.md, "Planner promises (issue 12)").
  absl::Duration aging_interval = absl::Minutes(30);
};

}  // namespace berth::planner

#endif  // BERTH_PLANNER_POLICY_H_
