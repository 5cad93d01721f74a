// Internal to the simulator: when each job of a simulated workload enters
// the queue, and in which order. A job enters at its arrival offset, but not
// before every dependency in the workload has entered (the planner rejects
// dependencies on ids it has never seen). Dependencies outside the workload
// and cycles are ignored here: Plan() reports them. O(n + d log d).
// Pure; thread-safe.
#ifndef BERTH_PLANNER_SIMULATOR_SIMULATOR_ARRIVALS_H_
#define BERTH_PLANNER_SIMULATOR_SIMULATOR_ARRIVALS_H_

#include <cstddef>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "planner/simulator/simulator.h"

namespace berth::planner::internal {

struct Arrivals {
  std::vector<absl::Time> time;  // per SimInput::jobs index
  // Job indices by (time, created_at, id, index): the order jobs enter the
  // queue, which is also the count-only baseline's FIFO order.
  std::vector<size_t> order;
};

// REQUIRES (both): `index` maps every in.jobs[i].job.id to i.
// Arrivals::time alone: O(n + d), no sort.
std::vector<absl::Time> ComputeArrivalTimes(
    const SimInput& in, const absl::flat_hash_map<absl::string_view, size_t>& index);
Arrivals ComputeArrivals(const SimInput& in,
                         const absl::flat_hash_map<absl::string_view, size_t>& index);

}  // namespace berth::planner::internal

#endif  // BERTH_PLANNER_SIMULATOR_SIMULATOR_ARRIVALS_H_
