#include "planner/convert/workload_state.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"

#include "planner/convert/convert.h"

namespace berth::planner {

v1::JobSpec PlanningSpecOf(const QueuedJob& q, const std::string& action) {
  v1::JobSpec s;
  s.set_id(q.id);
  s.set_workspace(q.workspace);
  if (!action.empty()) s.set_action(action);
  s.set_priority(q.priority);
  s.mutable_resources()->set_cpu_millis(q.resources.cpu_millis);
  s.mutable_resources()->set_memory_bytes(q.resources.memory_bytes);
  if (q.pool != kDefaultPool) s.set_pool(q.pool);
  if (q.expected_duration > absl::ZeroDuration()) {
    *s.mutable_expected_duration() = ToProtoDuration(q.expected_duration);
  }
  for (const std::string& d : q.depends_on) s.add_depends_on(d);
  if (q.created_at > absl::UnixEpoch()) *s.mutable_created_at() = ToProtoTimestamp(q.created_at);
  return s;
}

v1::RunningJob RunningJobToProto(const RunningJob& r) {
  v1::RunningJob out;
  QueuedJob q;
  q.id = r.id;
  q.workspace = r.workspace;
  q.pool = r.pool;
  q.resources = r.resources;
  q.expected_duration = r.expected_duration;
  *out.mutable_spec() = PlanningSpecOf(q, "");
  *out.mutable_started_at() = ToProtoTimestamp(r.started_at);
  if (!r.node.empty()) out.set_node(r.node);
  return out;
}

bool IsEmpty(const PlannerMemory& m) {
  return m.reservation_holder.empty() && m.workspace_turns.empty() &&
         m.top_priority_seen == absl::InfinitePast();
}

v1::PlannerMemory MemoryToProto(const PlannerMemory& m) {
  v1::PlannerMemory p;
  p.set_reservation_holder(m.reservation_holder);
  if (!m.reservation_holder.empty() && m.reservation_promised != absl::InfiniteFuture()) {
    *p.mutable_reservation_promised() = ToProtoTimestamp(m.reservation_promised);
  }
  std::vector<std::pair<std::string, uint64_t>> turns(m.workspace_turns.begin(),
                                                      m.workspace_turns.end());
  std::sort(turns.begin(), turns.end());
  for (const auto& [ws, turn] : turns) {
    v1::WorkspaceTurn* t = p.add_workspace_turns();
    t->set_workspace(ws);
    t->set_turn(turn);
  }
  if (m.top_priority_seen != absl::InfinitePast()) {
    p.set_top_priority(m.top_priority);
    *p.mutable_top_priority_seen() = ToProtoTimestamp(m.top_priority_seen);
  }
  return p;
}

v1::Workload WorkloadOfState(const State& state, const Budgets& budgets, absl::Time now,
                             const std::string& description, int* left_out) {
  v1::Workload w;
  w.set_description(description);
  *w.mutable_start_time() = ToProtoTimestamp(now);
  *w.mutable_budgets() = ToProto(budgets);
  for (const RunningJob& r : state.running) *w.add_running() = RunningJobToProto(r);
  // Left out: a job with a dependency that failed or that no one knows
  // (the plan holds it forever), and, transitively, its dependents: a
  // workload names only jobs it has.
  absl::flat_hash_set<absl::string_view> present;
  for (const RunningJob& r : state.running) present.insert(r.id);
  for (const QueuedJob& j : state.queued) present.insert(j.id);
  absl::flat_hash_map<absl::string_view, std::vector<uint32_t>> dependents;
  std::vector<bool> out_of(state.queued.size(), false);
  std::vector<uint32_t> work;
  for (uint32_t i = 0; i < state.queued.size(); ++i) {
    for (const std::string& d : state.queued[i].depends_on) {
      const auto it = state.finished.find(d);
      if (it != state.finished.end() ? it->second == DependencyOutcome::kFailed
                                     : !present.contains(d)) {
        if (!out_of[i]) work.push_back(i);
        out_of[i] = true;
      } else if (it == state.finished.end()) {
        dependents[d].push_back(i);
      }
    }
  }
  while (!work.empty()) {
    const uint32_t i = work.back();
    work.pop_back();
    const auto it = dependents.find(state.queued[i].id);
    if (it == dependents.end()) continue;
    for (uint32_t k : it->second) {
      if (!out_of[k]) work.push_back(k);
      out_of[k] = true;
    }
  }
  int dropped = 0;
  bool holder_queued = false;
  PlannerMemory memory = MemoryOf(state);
  for (uint32_t i = 0; i < state.queued.size(); ++i) {
    if (out_of[i]) {
      ++dropped;
      continue;
    }
    QueuedJob q = state.queued[i];
    // Dependencies met (succeeded) are dropped; the rest are jobs of the file.
    q.depends_on.erase(std::remove_if(q.depends_on.begin(), q.depends_on.end(),
                                      [&](const std::string& d) {
                                        return state.finished.contains(d);
                                      }),
                       q.depends_on.end());
    if (q.id == memory.reservation_holder) holder_queued = true;
    v1::WorkloadJob* out = w.add_jobs();
    *out->mutable_spec() = PlanningSpecOf(q, "");
    // A job queued while the plan was being made is dated by it (a wait of
    // 0, which is what the plan counted).
    if (q.queued_at > absl::UnixEpoch()) {
      *out->mutable_queued_at() = ToProtoTimestamp(std::min(q.queued_at, now));
    }
  }
  // The plan ignores a holder no longer queued; a workload names only jobs it has.
  if (!holder_queued) {
    memory.reservation_holder.clear();
    memory.reservation_promised = absl::InfiniteFuture();
  }
  if (!IsEmpty(memory)) *w.mutable_planner_memory() = MemoryToProto(memory);
  if (left_out != nullptr) *left_out = dropped;
  return w;
}

}  // namespace berth::planner
