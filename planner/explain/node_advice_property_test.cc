// Node advice over generated node inventories: "fits now on <node> if
// memory estimate <= X" (SuggestionOf with Budgets::nodes), applied to the
// job and planned again with nothing else changed, admits it — also when a
// reservation holds part of a node — and is tight: a byte more in the
// advised dimension does not.
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "planner/explain/explain.h"
#include "planner/model/model.h"
#include "planner/plan/plan.h"

namespace berth::planner {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;
const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

struct Case {
  State state;
  Budgets budgets;
  Policy policy;
};

// A few nodes (some of a dedicated pool, some with worker caps), running
// jobs packed onto them, and a queue larger than what is free, so that
// reservations and backfill decide many waits.
Case RandomCase(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&rng](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  Case c;
  c.policy.backfill = pick(0, 5) != 0;
  const int nodes = static_cast<int>(pick(2, 5));
  for (int n = 0; n < nodes; ++n) {
    Node node;
    node.id = absl::StrCat("node-", n);
    node.memory_bytes = pick(8, 64) * kGiB;
    node.cpu_millis = pick(4, 32) * 1000;
    node.max_workers = static_cast<int32_t>(pick(0, 2) == 0 ? pick(1, 6) : 0);
    if (n > 0 && pick(0, 4) == 0) node.labels[kPoolLabel] = "database";
    c.budgets.nodes.push_back(node);
  }
  c.budgets.pool_max_workers["database"] = 0;
  std::vector<int64_t> mem_free, cpu_free;
  std::vector<int32_t> slots;
  for (const Node& n : c.budgets.nodes) {
    mem_free.push_back(n.memory_bytes);
    cpu_free.push_back(n.cpu_millis);
    slots.push_back(n.max_workers > 0 ? n.max_workers : 1 << 20);
  }
  const int running = static_cast<int>(pick(0, 3 * nodes));
  for (int i = 0; i < running; ++i) {
    const size_t n = static_cast<size_t>(pick(0, nodes - 1));
    RunningJob r;
    r.id = absl::StrCat("r", i);
    r.workspace = absl::StrCat("ws", pick(0, 3));
    r.pool = c.budgets.nodes[n].labels.count(kPoolLabel) ? "database" : kDefaultPool;
    r.resources = {pick(1, 8) * 500, pick(1, 32) * kGiB / 2};
    if (r.resources.memory_bytes > mem_free[n] || r.resources.cpu_millis > cpu_free[n] ||
        slots[n] == 0) {
      continue;
    }
    mem_free[n] -= r.resources.memory_bytes;
    cpu_free[n] -= r.resources.cpu_millis;
    --slots[n];
    r.node = c.budgets.nodes[n].id;
    r.started_at = kNow - absl::Minutes(pick(0, 60));
    r.expected_duration = absl::Minutes(pick(61, 300));
    c.state.running.push_back(r);
  }
  const int queued = static_cast<int>(pick(1, 30));
  for (int i = 0; i < queued; ++i) {
    QueuedJob q;
    q.id = absl::StrCat("q", i);
    q.workspace = absl::StrCat("ws", pick(0, 3));
    q.pool = pick(0, 5) == 0 ? "database" : kDefaultPool;
    q.priority = static_cast<int32_t>(pick(0, 2));
    q.resources = {pick(1, 16) * 500, pick(1, 96) * kGiB / 2};
    q.created_at = kNow - absl::Minutes(pick(0, 120));
    q.expected_duration = absl::Minutes(pick(5, 600));
    c.state.queued.push_back(q);
  }
  return c;
}

bool Admitted(const PlanResult& r, size_t job) {
  for (const Decision& d : r.decisions) {
    if (d.job == job) return d.verdict == Verdict::kAdmit;
  }
  return false;
}

TEST(NodeAdvicePropertyTest, AppliedAdviceAdmitsTheJobAndIsTight) {
  int advised = 0, admitted = 0, on_reserved_node = 0, tight = 0;
  std::vector<std::string> failures;
  for (uint64_t seed = 0; seed < 2000; ++seed) {
    const Case c = RandomCase(seed);
    const PlanResult r = Plan(c.state, c.budgets, c.policy, kNow);
    for (size_t k = 0; k < r.decisions.size(); ++k) {
      const Decision& d = r.decisions[k];
      if (d.verdict != Verdict::kWait) continue;
      const std::optional<Suggestion> s = SuggestionOf(c.state, r, k);
      if (!s.has_value() || !absl::StartsWith(s->text, "fits now on ")) continue;
      ++advised;
      const int32_t reserved_node =
          r.reserved_decision >= 0 ? r.placements[r.reserved_decision].node : -1;
      if (!d.reserved && reserved_node >= 0 && r.placements[k].fits_node == reserved_node) {
        ++on_reserved_node;
      }
      // Applied: every estimate the advice names lowered to its bound.
      State changed = c.state;
      Resources& res = changed.queued[d.job].resources;
      res.memory_bytes = std::min(res.memory_bytes, d.fits_memory_bytes);
      res.cpu_millis = std::min(res.cpu_millis, d.fits_cpu_millis);
      if (Admitted(Plan(changed, c.budgets, c.policy, kNow), d.job)) {
        ++admitted;
      } else if (failures.size() < 10) {
        failures.push_back(absl::StrCat("seed ", seed, " job ", c.state.queued[d.job].id,
                                        ": \"", s->text, "\" applied, still waits"));
      }
      // Tight: a byte more in the advised dimension does not fit now.
      State more = changed;
      Resources& m = more.queued[d.job].resources;
      if (s->dimension == Dimension::kMemory) {
        m.memory_bytes = d.fits_memory_bytes + 1;
      } else {
        m.cpu_millis = d.fits_cpu_millis + 1;
      }
      if (!Admitted(Plan(more, c.budgets, c.policy, kNow), d.job)) ++tight;
    }
  }
  std::string examples;
  for (const std::string& f : failures) absl::StrAppend(&examples, "\n  ", f);
  // The property was exercised, also next to a reservation's node.
  ASSERT_GT(advised, 300);
  EXPECT_GT(on_reserved_node, 20);
  EXPECT_EQ(admitted, advised) << "admitted " << admitted << " of " << advised << examples;
  EXPECT_GE(tight, advised * 95 / 100) << "tight " << tight << " of " << advised;
  std::cout << "node advice: " << advised << " suggestions, " << admitted << " admit, " << tight
            << " tight, " << on_reserved_node << " on the reservation's node\n";
}

}  // namespace
}  // namespace berth::planner
