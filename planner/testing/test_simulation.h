// A minimal discrete-event simulation for tests: plans at every event (start
// and each job's end) passing the previous plan's reservation holder (as the
// executor does), starts what Plan() admits, and ends jobs exactly at
// started_at + expected_duration. Test-only; the real planner/simulator
// (arrivals, metrics) is built separately on top of Plan().
#ifndef BERTH_PLANNER_TESTING_TEST_SIMULATION_H_
#define BERTH_PLANNER_TESTING_TEST_SIMULATION_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "planner/model/model.h"
#include "planner/ranking/policy.h"

namespace berth::planner::testing {

struct SimulationResult {
  // When each job started (jobs that never started are absent).
  absl::flat_hash_map<std::string, absl::Time> started;
  // Every reservation seen: (job id, the reservation's start) per plan.
  std::vector<std::pair<std::string, absl::Time>> reservations;
  int plans = 0;
  // True if the queue emptied; false if the simulation stopped with jobs
  // that could never start (nothing running, nothing admitted).
  bool completed = false;
};

// Runs `state` from `now` until the queue is empty or stuck, or after
// `max_plans` plans. REQUIRES: every queued and running job has an
// expected_duration > 0.
SimulationResult Simulate(State state, const Budgets& budgets,
                          const Policy& policy, absl::Time now,
                          int max_plans = 100000);

}  // namespace berth::planner::testing

#endif  // BERTH_PLANNER_TESTING_TEST_SIMULATION_H_
