// A canonical text form of a plan, for byte-equality checks (determinism
// tests, golden files, debugging). Identifies jobs by id, never by their
// index in the input, so the same state in any order gives the same text.
// Thread-safe: a pure function.
#ifndef BERTH_PLANNER_TESTING_CANONICAL_H_
#define BERTH_PLANNER_TESTING_CANONICAL_H_

#include <string>

#include "planner/model/model.h"
#include "planner/plan/plan.h"

namespace berth::planner {

// One header line, then one line per decision in ranking order.
// REQUIRES: result = Plan(state, ...).
[[nodiscard]] std::string CanonicalString(const State& state, const PlanResult& result);

}  // namespace berth::planner

#endif  // BERTH_PLANNER_TESTING_CANONICAL_H_
