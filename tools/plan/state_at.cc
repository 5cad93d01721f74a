#include "tools/plan/state_at.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "planner/convert/convert.h"
#include "planner/convert/workload_state.h"
#include "planner/plan/plan.h"

namespace berth {
namespace plan {

planner::SimResult SimulateRecordingPlacements(const planner::SimInput& in,
                                               planner::SimOptions opt, Placements* placements,
                                               MemoryAt* memory) {
  if (memory != nullptr) {
    memory->memory = in.memory;
    auto chained = std::move(opt.on_plan);
    opt.on_plan = [memory, chained](const planner::State& state, const planner::PlanResult& plan) {
      if (plan.now < memory->at) {
        planner::State next;
        planner::CarryReservation(state, plan, next);
        memory->memory = planner::MemoryOf(next);
      }
      if (chained) chained(state, plan);
    };
  }
  if (!in.budgets.nodes.empty()) {
    auto chained = std::move(opt.on_plan);
    opt.on_plan = [placements, chained](const planner::State& state,
                                        const planner::PlanResult& plan) {
      for (size_t k = 0; k < plan.placements.size() && k < plan.decisions.size(); ++k) {
        const int32_t node = plan.placements[k].node;
        if (plan.decisions[k].verdict != planner::Verdict::kAdmit || node < 0 ||
            static_cast<size_t>(node) >= plan.nodes.size()) {
          continue;
        }
        (*placements)[state.queued[plan.decisions[k].job].id] = plan.nodes[node];
      }
      if (chained) chained(state, plan);
    };
  }
  return planner::Simulate(in, opt);
}

planner::SimInput ContinuationAt(const planner::SimInput& in, const planner::SimResult& result,
                                 const Placements& placements, absl::Time at,
                                 absl::Duration default_duration,
                                 const std::vector<PlanInput::Actual>& actuals,
                                 std::vector<PlanInput::Actual>* out_actuals,
                                 const planner::PlannerMemory& memory) {
  planner::SimInput out;
  out.start = at;
  out.budgets = in.budgets;
  out.memory = memory;
  out_actuals->clear();
  // Jobs that succeeded by `at`: their dependants' dependency is met.
  absl::flat_hash_set<std::string> met;
  for (const planner::RunningJob& r : in.running) {
    const absl::Duration d =
        r.expected_duration > absl::ZeroDuration() ? r.expected_duration : default_duration;
    if (std::max(r.started_at + d, in.start) <= at) {
      met.insert(r.id);
    } else {
      out.running.push_back(r);
    }
  }
  for (size_t i = 0; i < in.jobs.size(); ++i) {
    const planner::SimJobResult& r = result.jobs[i];
    if (r.outcome == planner::SimOutcome::kSucceeded && r.end <= at) met.insert(in.jobs[i].job.id);
  }
  const std::vector<absl::Time> arrival = planner::ArrivalTimes(in);
  for (size_t i = 0; i < in.jobs.size(); ++i) {
    const planner::SimJob& sj = in.jobs[i];
    const planner::SimJobResult& r = result.jobs[i];
    const bool ran = r.outcome == planner::SimOutcome::kSucceeded ||
                     r.outcome == planner::SimOutcome::kFailed;
    if (ran && r.start < at) {
      if (r.end <= at) continue;  // finished
      planner::RunningJob run;
      run.id = sj.job.id;
      run.workspace = sj.job.workspace;
      run.pool = sj.job.pool;
      run.resources = sj.job.resources;
      run.started_at = r.start;  // admission, as berthd dates a running job
      run.expected_duration = sj.job.expected_duration;
      if (auto it = placements.find(run.id); it != placements.end()) run.node = it->second;
      out.running.push_back(std::move(run));
      continue;
    }
    // Left the queue before `at` without running: a dependency failed (at
    // a completion, before that instant's plan) or the planner rejected it
    // (at a plan; one at `at` itself rejects it again).
    if (r.outcome == planner::SimOutcome::kDependencyFailed && r.start <= at) continue;
    if (r.outcome == planner::SimOutcome::kRejected && r.start < at) continue;
    planner::SimJob job = sj;
    if (arrival[i] <= at) {
      job.arrival_offset = absl::ZeroDuration();
      // Dated from when it was first seen, as the simulator dates it.
      if (job.job.created_at <= absl::UnixEpoch()) job.job.created_at = r.arrival;
      // Queued when the run queued it: aging counts from there, and
      // workspaces of equal share are ordered by it.
      if (job.job.queued_at <= absl::UnixEpoch()) job.job.queued_at = r.arrival;
    } else {
      job.arrival_offset = std::max(absl::ZeroDuration(), in.start + sj.arrival_offset - at);
    }
    auto& deps = job.job.depends_on;
    deps.erase(std::remove_if(deps.begin(), deps.end(),
                              [&met](const std::string& d) { return met.contains(d); }),
               deps.end());
    out.jobs.push_back(std::move(job));
    out_actuals->push_back(i < actuals.size() ? actuals[i] : PlanInput::Actual{});
  }
  if (!out.memory.reservation_holder.empty() &&
      std::none_of(out.jobs.begin(), out.jobs.end(), [&out](const planner::SimJob& j) {
        return j.arrival_offset == absl::ZeroDuration() &&
               j.job.id == out.memory.reservation_holder;
      })) {
    out.memory.reservation_holder.clear();
    out.memory.reservation_promised = absl::InfiniteFuture();
  }
  return out;
}

v1::Workload WorkloadOf(const planner::SimInput& state,
                        const std::vector<PlanInput::Actual>& actuals,
                        const planner::Budgets& budgets, const std::string& description) {
  v1::Workload w;
  w.set_description(description);
  *w.mutable_start_time() = planner::ToProtoTimestamp(state.start);
  *w.mutable_budgets() = planner::ToProto(budgets);
  for (const planner::RunningJob& r : state.running) {
    *w.add_running() = planner::RunningJobToProto(r);
  }
  for (size_t i = 0; i < state.jobs.size(); ++i) {
    const planner::SimJob& j = state.jobs[i];
    v1::WorkloadJob* out = w.add_jobs();
    const PlanInput::Actual none;
    const PlanInput::Actual& a = i < actuals.size() ? actuals[i] : none;
    *out->mutable_spec() = planner::PlanningSpecOf(j.job, a.action);
    if (j.max_duration > absl::ZeroDuration()) {
      *out->mutable_spec()->mutable_max_duration() = planner::ToProtoDuration(j.max_duration);
    }
    if (j.arrival_offset > absl::ZeroDuration()) {
      *out->mutable_arrival_offset() = planner::ToProtoDuration(j.arrival_offset);
    }
    if (j.actual_duration > absl::ZeroDuration()) {
      *out->mutable_actual_duration() = planner::ToProtoDuration(j.actual_duration);
    }
    out->set_fails(j.fails);
    out->set_actual_peak_memory_bytes(a.peak_memory_bytes);
    if (j.job.queued_at > absl::UnixEpoch()) {
      *out->mutable_queued_at() = planner::ToProtoTimestamp(j.job.queued_at);
    }
  }
  if (!planner::IsEmpty(state.memory)) {
    *w.mutable_planner_memory() = planner::MemoryToProto(state.memory);
  }
  return w;
}

}  // namespace plan
}  // namespace berth
