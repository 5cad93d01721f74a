// Properties of Plan() on generated node inventories: no node is ever
// overcommitted, placement does not depend on input order, and with exact
// durations a reservation on a node is never delayed by backfill.
#include <algorithm>
#include <array>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "planner/model/model.h"
#include "planner/plan/plan.h"

namespace berth::planner {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;
const absl::Time kT0 = absl::FromUnixSeconds(1'800'000'000);

struct Workload {
  Budgets budgets;
  State state;
};

Workload Generate(uint32_t seed) {
  std::mt19937 rng(seed);
  auto uniform = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  Workload w;
  w.budgets.pool_max_workers["database"] = 0;
  const int num_nodes = static_cast<int>(uniform(1, 6));
  for (int i = 0; i < num_nodes; ++i) {
    Node n;
    n.id = "node-" + std::to_string(uniform(0, 99));  // duplicates possible
    n.memory_bytes = uniform(8, 64) * kGiB;
    n.cpu_millis = uniform(2, 16) * 1000;
    n.max_workers = static_cast<int32_t>(uniform(0, 4));
    if (uniform(0, 3) == 0) n.labels[kPoolLabel] = "database";
    w.budgets.nodes.push_back(n);
  }
  // Running jobs that fit their nodes (the first of a duplicated id).
  std::map<std::string, std::array<int64_t, 3>> free;  // mem, cpu, slots
  for (const Node& n : w.budgets.nodes)
    free.emplace(n.id, std::array<int64_t, 3>{n.memory_bytes, n.cpu_millis,
                                              n.max_workers > 0 ? n.max_workers : 99});
  const int num_running = static_cast<int>(uniform(0, 8));
  for (int i = 0; i < num_running; ++i) {
    const Node& n = w.budgets.nodes[uniform(0, num_nodes - 1)];
    auto& [mem, cpu, slots] = free[n.id];
    if (mem < kGiB || cpu < 500 || slots < 1) continue;
    --slots;
    RunningJob r;
    r.id = "r" + std::to_string(i);
    r.workspace = "ws" + std::to_string(uniform(0, 2));
    r.node = n.id;
    r.resources = {uniform(500, cpu), uniform(1, mem / kGiB) * kGiB};
    mem -= r.resources.memory_bytes;
    cpu -= r.resources.cpu_millis;
    r.started_at = kT0 - absl::Minutes(uniform(0, 120));
    r.expected_duration = absl::Minutes(uniform(1, 240));
    w.state.running.push_back(r);
  }
  const int num_queued = static_cast<int>(uniform(0, 40));
  for (int i = 0; i < num_queued; ++i) {
    QueuedJob q;
    q.id = "q" + std::to_string(i);
    q.workspace = "ws" + std::to_string(uniform(0, 2));
    if (uniform(0, 4) == 0) q.pool = "database";
    q.priority = static_cast<int32_t>(uniform(0, 2));
    q.resources = {uniform(1, 16) * 500, uniform(1, 70) * kGiB};
    q.created_at = kT0 - absl::Minutes(uniform(0, 300));
    q.expected_duration = absl::Minutes(uniform(1, 300));
    w.state.queued.push_back(q);
  }
  return w;
}

// Node index of a node id in the inventory that Plan() kept (the first
// node with each id).
const Node* FindNode(const Budgets& b, const std::string& id) {
  for (const Node& n : b.nodes) {
    if (n.id == id) return &n;
  }
  return nullptr;
}

TEST(NodesPropertyTest, NoNodeIsOvercommitted) {
  for (uint32_t seed = 0; seed < 2000; ++seed) {
    const Workload w = Generate(seed);
    const PlanResult r = Plan(w.state, w.budgets, Policy(), kT0);
    ASSERT_EQ(r.placements.size(), r.decisions.size()) << "seed " << seed;
    std::map<std::string, std::array<int64_t, 3>> used;  // mem, cpu, jobs
    for (const RunningJob& j : w.state.running) {
      auto& u = used[j.node];
      u[0] += j.resources.memory_bytes;
      u[1] += j.resources.cpu_millis;
      u[2] += 1;
    }
    for (size_t k = 0; k < r.decisions.size(); ++k) {
      const Decision& d = r.decisions[k];
      if (d.verdict != Verdict::kAdmit) continue;
      const QueuedJob& q = w.state.queued[d.job];
      ASSERT_GE(r.placements[k].node, 0) << "seed " << seed << " job " << q.id;
      const std::string& id = r.nodes[r.placements[k].node];
      const Node* n = FindNode(w.budgets, id);
      ASSERT_NE(n, nullptr);
      auto label = n->labels.find(kPoolLabel);
      const bool dedicated = label != n->labels.end();
      if (dedicated) {
        EXPECT_EQ(label->second, q.pool) << "seed " << seed;
      }
      auto& u = used[id];
      u[0] += q.resources.memory_bytes;
      u[1] += q.resources.cpu_millis;
      u[2] += 1;
    }
    for (const auto& [id, u] : used) {
      const Node* n = FindNode(w.budgets, id);
      ASSERT_NE(n, nullptr);
      EXPECT_LE(u[0], n->memory_bytes) << "seed " << seed << " node " << id;
      EXPECT_LE(u[1], n->cpu_millis) << "seed " << seed << " node " << id;
      if (n->max_workers > 0) {
        EXPECT_LE(u[2], n->max_workers) << "seed " << seed << " node " << id;
      }
    }
  }
}

// Decision per job id: verdict, reason, chosen node, named node.
std::map<std::string, std::string> Summary(const State& s, const PlanResult& r) {
  std::map<std::string, std::string> out;
  for (size_t k = 0; k < r.decisions.size(); ++k) {
    const Decision& d = r.decisions[k];
    const NodePlacement& p = r.placements[k];
    out[s.queued[d.job].id] =
        std::to_string(static_cast<int>(d.verdict)) + "/" +
        std::to_string(static_cast<int>(d.reason)) + "/" +
        (p.node >= 0 ? r.nodes[p.node] : "-") + "/" +
        (p.short_node >= 0 ? r.nodes[p.short_node] : "-") + "/" +
        std::to_string(d.free) + "/" + std::to_string(k);
  }
  return out;
}

TEST(NodesPropertyTest, PlacementDoesNotDependOnInputOrder) {
  for (uint32_t seed = 0; seed < 500; ++seed) {
    Workload w = Generate(seed);
    // Distinct node ids: with duplicates the first in input order is kept.
    std::map<std::string, int> seen;
    std::vector<Node> distinct;
    for (const Node& n : w.budgets.nodes) {
      if (seen[n.id]++ == 0) distinct.push_back(n);
    }
    w.budgets.nodes = distinct;
    const PlanResult a = Plan(w.state, w.budgets, Policy(), kT0);
    std::mt19937 rng(seed);
    std::shuffle(w.state.queued.begin(), w.state.queued.end(), rng);
    std::shuffle(w.state.running.begin(), w.state.running.end(), rng);
    std::shuffle(w.budgets.nodes.begin(), w.budgets.nodes.end(), rng);
    const PlanResult b = Plan(w.state, w.budgets, Policy(), kT0);
    const Workload orig = Generate(seed);
    EXPECT_EQ(Summary(orig.state, a), Summary(w.state, b)) << "seed " << seed;
  }
}

// Exact durations, one workspace, fifo, no arrivals: the job holding the
// reservation starts by the start first promised to it, on any inventory.
TEST(NodesPropertyTest, ReservationOnANodeIsNotDelayedByBackfill) {
  Policy policy;
  policy.ranking = *FindRankingPolicy("fifo");
  int promises = 0;
  for (uint32_t seed = 0; seed < 300; ++seed) {
    Workload w = Generate(seed);
    for (QueuedJob& q : w.state.queued) {
      q.workspace = "ws";
      q.priority = 0;
      q.pool = kDefaultPool;
    }
    for (Node& n : w.budgets.nodes) n.labels.clear();
    w.state.running.clear();
    State s = w.state;
    absl::Time now = kT0;
    std::map<std::string, absl::Time> promised;  // job -> first promise
    for (int step = 0; step < 400 && !s.queued.empty(); ++step) {
      const PlanResult r = Plan(s, w.budgets, policy, now);
      State next = s;
      CarryReservation(s, r, next);
      if (r.reserved_decision >= 0) {
        const std::string& id = s.queued[r.decisions[r.reserved_decision].job].id;
        promised.emplace(id, r.reservation_start);
      }
      std::vector<QueuedJob> still;
      std::vector<bool> admitted(s.queued.size(), false);
      for (size_t k = 0; k < r.decisions.size(); ++k) {
        const Decision& d = r.decisions[k];
        if (d.verdict != Verdict::kAdmit) continue;
        admitted[d.job] = true;
        const QueuedJob& q = s.queued[d.job];
        if (auto it = promised.find(q.id); it != promised.end()) {
          ++promises;
          EXPECT_LE(now, it->second) << "seed " << seed << " job " << q.id;
        }
        RunningJob run;
        run.id = q.id;
        run.workspace = q.workspace;
        run.resources = q.resources;
        run.started_at = now;
        run.expected_duration = q.expected_duration;
        run.node = r.nodes[r.placements[k].node];
        next.running.push_back(run);
      }
      for (size_t i = 0; i < s.queued.size(); ++i) {
        const bool rejected = std::any_of(
            r.decisions.begin(), r.decisions.end(), [&](const Decision& d) {
              return d.job == i && d.verdict == Verdict::kReject;
            });
        if (!admitted[i] && !rejected) still.push_back(s.queued[i]);
      }
      next.queued = still;
      // Advance to the next end.
      absl::Time next_end = absl::InfiniteFuture();
      for (const RunningJob& j : next.running)
        next_end = std::min(next_end, j.started_at + j.expected_duration);
      if (next_end == absl::InfiniteFuture()) break;
      now = next_end;
      std::vector<RunningJob> left;
      for (const RunningJob& j : next.running) {
        if (j.started_at + j.expected_duration > now) left.push_back(j);
      }
      next.running = left;
      s = next;
    }
  }
  EXPECT_GT(promises, 50);  // the property was exercised
}

}  // namespace
}  // namespace berth::planner
