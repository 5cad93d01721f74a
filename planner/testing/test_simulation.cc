#include "planner/testing/test_simulation.h"

#include <algorithm>

#include "planner/plan/plan.h"

namespace berth::planner::testing {

SimulationResult Simulate(State state, const Budgets& budgets,
                          const Policy& policy, absl::Time now,
                          int max_plans) {
  SimulationResult out;
  while (out.plans < max_plans) {
    // End every job due by now.
    std::vector<RunningJob> still;
    for (RunningJob& r : state.running) {
      if (r.started_at + r.expected_duration <= now) {
        state.finished[r.id] = DependencyOutcome::kSucceeded;
      } else {
        still.push_back(std::move(r));
      }
    }
    state.running = std::move(still);
    if (state.queued.empty()) {
      out.completed = true;
      return out;
    }

    const PlanResult plan = Plan(state, budgets, policy, now);
    ++out.plans;
    CarryReservation(state, plan, state);
    if (plan.reserved_decision >= 0) {
      out.reservations.emplace_back(
          state.queued[plan.decisions[plan.reserved_decision].job].id,
          plan.reservation_start);
    }
    std::vector<bool> admit(state.queued.size(), false);
    for (const Decision& d : plan.decisions) {
      if (d.verdict == Verdict::kAdmit) admit[d.job] = true;
    }
    std::vector<QueuedJob> queued;
    for (size_t i = 0; i < state.queued.size(); ++i) {
      QueuedJob& q = state.queued[i];
      if (!admit[i]) {
        queued.push_back(std::move(q));
        continue;
      }
      out.started[q.id] = now;
      RunningJob r;
      r.id = q.id;
      r.workspace = q.workspace;
      r.pool = q.pool;
      r.resources = q.resources;
      r.started_at = now;
      r.expected_duration = q.expected_duration;
      state.running.push_back(std::move(r));
    }
    state.queued = std::move(queued);

    // Next event: the earliest end.
    absl::Time next = absl::InfiniteFuture();
    for (const RunningJob& r : state.running) {
      next = std::min(next, r.started_at + r.expected_duration);
    }
    if (next == absl::InfiniteFuture()) {
      out.completed = state.queued.empty();
      return out;
    }
    now = std::max(now, next);
  }
  return out;
}

}  // namespace berth::planner::testing
