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
  // every full `aging_interval` since its created_at, but never above the
  // highest priority among the queued jobs that fit the budgets (so aging
  // lifts lower priorities up to the top level and never reorders jobs of
  // the top level, which fair share ranks). A job of priority p is therefore
  // ranked with the top level P after at most (P - p) * aging_interval
  // waited. <= 0 turns aging off. Default 2 hours, measured on examples/
  // (docs/BENCHMARKS.md, "Planner promises (issue 12)"): on week.json it
  // cuts the longest wait from 4h51m to 2h53m and on burst.json the longest
  // priority-0 wait from 3h14m to 2h07m, while the longest waits of
  // priorities 2 and 3 stay as without aging; 1 hour cuts week.json's to
  // 2h14m but delays burst.json's priority-2 jobs by up to 14 minutes more,
  // 30 minutes by up to 1h28m more.
  absl::Duration aging_interval = absl::Hours(2);
};

}  // namespace berth::planner

#endif  // BERTH_PLANNER_RANKING_POLICY_H_
