#include "planner/plan/dependencies.h"

#include <algorithm>
#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

namespace berth::planner::internal {
namespace {

// Where a dependency edge points.
enum class Target : uint8_t {
  kQueued,     // `queued` is the index
  kRunning,    // pending
  kSucceeded,  // satisfied
  kFailed,     // finished unsuccessfully
  kUnknown,
};

struct Edge {
  Target target;
  uint32_t queued;    // for kQueued
  uint32_t position;  // in depends_on
};

}  // namespace

void ResolveDependencies(const State& state, const IdIndex& index,
                         std::vector<uint32_t> with_dependencies,
                         std::vector<JobRecord>& jobs,
                         std::vector<PendingDep>& pending) {
  pending.clear();
  // Nodes: queued jobs with dependencies, in index order.
  const std::vector<uint32_t> nodes = std::move(with_dependencies);
  if (nodes.empty()) return;
  const uint32_t m = static_cast<uint32_t>(nodes.size());
  // Few jobs have dependencies: a map, not an array over all jobs.
  absl::flat_hash_map<uint32_t, uint32_t> node_of;
  node_of.reserve(m);
  for (uint32_t v = 0; v < m; ++v) node_of[nodes[v]] = v;

  absl::flat_hash_set<absl::string_view> running_ids;
  running_ids.reserve(state.running.size());
  for (const RunningJob& r : state.running) running_ids.insert(r.id);
  auto get_id = [&state](uint32_t i) -> absl::string_view {
    return state.queued[i].id;
  };

  // Edges in CSR form; adjacency (queued targets that are nodes) separately.
  std::vector<uint32_t> edge_begin(m + 1, 0);
  std::vector<Edge> edges;
  std::vector<uint32_t> adj_begin(m + 1, 0);
  std::vector<uint32_t> adj;
  std::vector<uint8_t> self_loop(m, 0);
  for (uint32_t v = 0; v < m; ++v) {
    edge_begin[v] = static_cast<uint32_t>(edges.size());
    adj_begin[v] = static_cast<uint32_t>(adj.size());
    const QueuedJob& job = state.queued[nodes[v]];
    bool unknown = false;
    for (uint32_t p = 0; p < job.depends_on.size(); ++p) {
      const std::string& dep = job.depends_on[p];
      Edge e{Target::kUnknown, 0, p};
      if (uint32_t q = index.Find(dep, get_id); q != IdIndex::kNotFound) {
        e.target = Target::kQueued;
        e.queued = q;
        // A duplicated id names several jobs, and Find() returns any one of
        // them: follow no edge into it (all copies are rejected, so the
        // dependent is too), or cycles would depend on the input order.
        if (jobs[q].problem != Problem::kDuplicateId) {
          if (q == nodes[v]) self_loop[v] = 1;
          if (auto it = node_of.find(q); it != node_of.end())
            adj.push_back(it->second);
        }
      } else if (running_ids.contains(dep)) {
        e.target = Target::kRunning;
      } else if (auto it = state.finished.find(dep);
                 it != state.finished.end()) {
        e.target = it->second == DependencyOutcome::kSucceeded
                       ? Target::kSucceeded
                       : Target::kFailed;
      } else {
        unknown = true;
      }
      edges.push_back(e);
    }
    if (unknown && !jobs[nodes[v]].rejected()) {
      jobs[nodes[v]].problem = Problem::kUnknownDependency;
    }
  }
  edge_begin[m] = static_cast<uint32_t>(edges.size());
  adj_begin[m] = static_cast<uint32_t>(adj.size());

  // Decides a job that is not on a cycle, once all its targets are final.
  auto decide = [&](uint32_t v) {
    JobRecord& job = jobs[nodes[v]];
    if (job.rejected()) return;
    bool failed = false, rejected_dep = false, waiting = false;
    for (uint32_t e = edge_begin[v]; e < edge_begin[v + 1]; ++e) {
      switch (edges[e].target) {
        case Target::kFailed: failed = true; break;
        case Target::kRunning: waiting = true; break;
        case Target::kQueued:
          if (jobs[edges[e].queued].rejected()) rejected_dep = true;
          else waiting = true;
          break;
        case Target::kSucceeded:
        case Target::kUnknown:
          break;
      }
    }
    if (failed) {
      job.problem = Problem::kDependencyFailed;
    } else if (rejected_dep) {
      job.problem = Problem::kDependencyRejected;
    } else if (waiting) {
      job.flags |= JobRecord::kFlagDependenciesPending;
      for (uint32_t e = edge_begin[v]; e < edge_begin[v + 1]; ++e) {
        if (edges[e].target == Target::kRunning ||
            edges[e].target == Target::kQueued) {
          pending.push_back(PendingDep{nodes[v], edges[e].position});
        }
      }
    }
  };

  // Tarjan's strongly connected components, iteratively. Components come out
  // dependencies first, so each job is decided after its targets.
  std::vector<int32_t> order(m, -1), low(m, 0);
  std::vector<uint8_t> on_stack(m, 0);
  std::vector<uint32_t> stack;
  struct Frame {
    uint32_t v;
    uint32_t next;
  };
  std::vector<Frame> frames;
  int32_t counter = 0;
  std::vector<uint32_t> component;
  for (uint32_t s = 0; s < m; ++s) {
    if (order[s] >= 0) continue;
    auto visit = [&](uint32_t v) {
      order[v] = low[v] = counter++;
      stack.push_back(v);
      on_stack[v] = 1;
      frames.push_back(Frame{v, adj_begin[v]});
    };
    visit(s);
    while (!frames.empty()) {
      Frame& f = frames.back();
      const uint32_t v = f.v;
      if (f.next < adj_begin[v + 1]) {
        const uint32_t w = adj[f.next++];
        if (order[w] < 0) {
          visit(w);  // invalidates f
        } else if (on_stack[w]) {
          low[v] = std::min(low[v], order[w]);
        }
        continue;
      }
      frames.pop_back();
      if (!frames.empty()) {
        const uint32_t u = frames.back().v;
        low[u] = std::min(low[u], low[v]);
      }
      if (low[v] != order[v]) continue;
      component.clear();
      uint32_t w;
      do {
        w = stack.back();
        stack.pop_back();
        on_stack[w] = 0;
        component.push_back(w);
      } while (w != v);
      if (component.size() > 1 || self_loop[v]) {
        for (uint32_t c : component) {
          if (!jobs[nodes[c]].rejected())
            jobs[nodes[c]].problem = Problem::kDependencyCycle;
        }
      } else {
        decide(v);
      }
    }
  }
  std::sort(pending.begin(), pending.end(),
            [](const PendingDep& a, const PendingDep& b) {
              return a.job != b.job ? a.job < b.job : a.position < b.position;
            });
}

}  // namespace berth::planner::internal
