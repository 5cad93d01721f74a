// Amounts and rejection sentences of explanations. Internal to planner/
// (explain.cc).
//
// Thread-safe: pure functions.
#ifndef BERTH_PLANNER_EXPLAIN_EXPLAIN_REJECTION_H_
#define BERTH_PLANNER_EXPLAIN_EXPLAIN_REJECTION_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "planner/base/units.h"
#include "planner/model/model.h"
#include "planner/plan/plan.h"

namespace berth::planner::internal {

// `v` of dimension `d` for people: bytes, CPUs or a plain count.
std::string Amount(Dimension d, int64_t v, Rounding r = Rounding::kNearest);

// Why result.decisions[index] is rejected ("needs 48 GiB memory, more than
// the whole budget of 32 GiB"). `detailed` names unknown dependencies, which
// costs a scan of the state: for Explain() (one job), not DecisionSummary()
// (called for every decision of a plan).
std::string Rejection(const State& state, const PlanResult& r, size_t index,
                      bool detailed);

}  // namespace berth::planner::internal

#endif  // BERTH_PLANNER_EXPLAIN_EXPLAIN_REJECTION_H_
