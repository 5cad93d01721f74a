#include "planner/simulator/simulator_arrivals.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>

namespace berth::planner::internal {

std::vector<absl::Time> ComputeArrivalTimes(
    const SimInput& in, const absl::flat_hash_map<absl::string_view, size_t>& index) {
  const size_t n = in.jobs.size();
  Arrivals out;
  out.time.resize(n);
  std::vector<uint8_t> mark(n, 0);  // 0 new, 1 on the stack, 2 done
  std::vector<std::pair<size_t, size_t>> stack;  // job, next dependency
  for (size_t root = 0; root < n; ++root) {
    if (mark[root] == 2) continue;
    // Iterative post-order DFS: a job's time is known once its
    // dependencies' are. A dependency still on the stack is a cycle.
    stack.assign(1, {root, 0});
    mark[root] = 1;
    while (!stack.empty()) {
      size_t i = stack.back().first;
      const auto& deps = in.jobs[i].job.depends_on;
      if (stack.back().second < deps.size()) {
        auto it = index.find(deps[stack.back().second++]);
        if (it != index.end() && mark[it->second] == 0) {
          mark[it->second] = 1;
          stack.push_back({it->second, 0});
        }
        continue;
      }
      absl::Time t = in.start + std::max(absl::ZeroDuration(), in.jobs[i].arrival_offset);
      for (const std::string& d : deps) {
        auto it = index.find(d);
        if (it != index.end() && mark[it->second] == 2) t = std::max(t, out.time[it->second]);
      }
      out.time[i] = t;
      mark[i] = 2;
      stack.pop_back();
    }
  }
  return std::move(out.time);
}

Arrivals ComputeArrivals(const SimInput& in,
                         const absl::flat_hash_map<absl::string_view, size_t>& index) {
  const size_t n = in.jobs.size();
  Arrivals out;
  out.time = ComputeArrivalTimes(in, index);
  out.order.resize(n);
  for (size_t i = 0; i < n; ++i) out.order[i] = i;
  std::sort(out.order.begin(), out.order.end(), [&](size_t a, size_t b) {
    const QueuedJob& ja = in.jobs[a].job;
    const QueuedJob& jb = in.jobs[b].job;
    return std::tie(out.time[a], ja.created_at, ja.id, a) <
           std::tie(out.time[b], jb.created_at, jb.id, b);
  });
  return out;
}

}  // namespace berth::planner::internal
