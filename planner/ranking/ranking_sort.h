// Shared building block of ranking policies: sort keys (major, created,
// tie-break). Internal to planner/.
#ifndef BERTH_PLANNER_RANKING_RANKING_SORT_H_
#define BERTH_PLANNER_RANKING_RANKING_SORT_H_

#include <cstdint>
#include <vector>

#include "planner/model/model.h"

namespace berth::planner::internal {

struct SortKey {
  uint64_t major;      // policy-defined; smaller first
  int64_t created_ns;  // then older first
  uint32_t job;        // then TieBreakLess (id, ...)
};

// Sorts [begin, end) by (major, created_ns, TieBreakLess(job)).
void SortKeys(const State& state, SortKey* begin, SortKey* end);

}  // namespace berth::planner::internal

#endif  // BERTH_PLANNER_RANKING_RANKING_SORT_H_
