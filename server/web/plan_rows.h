// The rows of one page of the plan (/ui/plan), straight from berthd's latest
// plan (executor/reconcile/plan_snapshot.h) without converting the decisions
// of other pages: one O(n) walk of the ranking for the filter, then the API
// conversion (planner/convert) and summary (planner/explain) of at most
// `page_size` decisions, with their start estimates (the plan's shared
// table, planner/forecast).
//
// Thread-safe: reads an immutable snapshot.
#ifndef BERTH_SERVER_WEB_PLAN_ROWS_H_
#define BERTH_SERVER_WEB_PLAN_ROWS_H_

#include "executor/reconcile/plan_snapshot.h"
#include "server/web/pages.h"

namespace berth::web {

// The page `filter.page` (clamped to 1..pages) of the decisions matching
// `filter`, page_size > 0 rows a page.
PlanPageData SelectPlanRows(const PlanSnapshot& snap, PlanFilter filter, int page_size);

// The overview's queue forecast: when the last queued job with an estimate
// starts, and how many have none.
void ForecastDrain(const PlanSnapshot& snap, OverviewData* out);

}  // namespace berth::web

#endif  // BERTH_SERVER_WEB_PLAN_ROWS_H_
