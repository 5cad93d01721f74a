// libFuzzer target for Plan(): decodes arbitrary bytes into a State, Budgets
// and Policy, plans, and checks what must hold for any input: every queued job
// decided exactly once, admitted jobs valid and within every budget (when
// running jobs are), the same plan for reversed input, explanations render.
// With a node inventory (Budgets::nodes): every admitted job is placed on a
// node of its pool that it fits, no node's memory, cpu or slots are
// overcommitted (when its running jobs are within it), and a start estimate
// is "now" exactly for admitted jobs, on their node.
//
// Built with clang by tools/fuzz/run_plan_fuzzer.sh; //planner/testing:plan_fuzzer_replay
// (gcc, Bazel) replays corpus files through the same entry point.
#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/container/flat_hash_map.h"
#include "planner/testing/canonical.h"
#include "planner/forecast/eta.h"
#include "planner/explain/explain.h"
#include "planner/plan/plan.h"

namespace berth::planner {
namespace {

// Reads bytes front to back; zeros once exhausted.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t Byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  int64_t Int64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | Byte();
    return static_cast<int64_t>(v);
  }
  // Mostly small, sometimes extreme values.
  int64_t Amount() {
    const uint8_t kind = Byte();
    switch (kind % 8) {
      case 0: return Int64();
      case 1: return -static_cast<int64_t>(Byte());
      case 2: return INT64_MAX - Byte();
      default: return static_cast<int64_t>(Byte()) * 16 + (kind >> 3);
    }
  }
  std::string Name(const char* prefix, int choices) {
    return absl::StrCat(prefix, Byte() % choices);
  }
  absl::Time Time(absl::Time now) {
    switch (Byte() % 8) {
      case 0: return absl::InfinitePast();
      case 1: return absl::InfiniteFuture();
      case 2: return absl::FromUnixNanos(Int64());
      default: return now - absl::Seconds(static_cast<int8_t>(Byte()) * 60);
    }
  }
  absl::Duration Duration() {
    switch (Byte() % 8) {
      case 0: return absl::InfiniteDuration();
      case 1: return -absl::InfiniteDuration();
      case 2: return absl::Nanoseconds(Int64());
      case 3: return absl::ZeroDuration();
      default: return absl::Minutes(Byte());
    }
  }
  bool Done() const { return pos_ >= size_; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "plan_fuzzer: violated: %s\n", what);
    std::abort();
  }
}

// The node invariants: placements name valid nodes of the job's pool that
// the job fits; per node, running + admitted jobs stay within its memory,
// cpu and slots whenever its running jobs alone do.
void CheckNodes(const State& s, const Budgets& b, const PlanResult& r) {
  if (r.nodes.empty()) {
    Check(r.placements.empty(), "no placements without nodes");
    return;
  }
  Check(r.placements.size() == r.decisions.size(), "one placement per decision");
  // The planner's nodes: the first of each id with memory and cpu > 0.
  absl::flat_hash_map<std::string, const Node*> by_id;
  for (const Node& n : b.nodes) {
    if (n.memory_bytes > 0 && n.cpu_millis > 0) by_id.emplace(n.id, &n);
  }
  Check(by_id.size() == r.nodes.size(), "PlanResult::nodes are the valid nodes");
  auto pool_of = [](const Node& n) {
    auto it = n.labels.find(kPoolLabel);
    return it == n.labels.end() ? std::string() : it->second;
  };
  struct Use {
    int64_t memory = 0, cpu = 0, workers = 0;
    bool sane = true;
  };
  std::vector<Use> use(r.nodes.size());
  for (const RunningJob& j : s.running) {
    auto it = std::find(r.nodes.begin(), r.nodes.end(), j.node);
    if (it == r.nodes.end()) continue;
    Use& u = use[it - r.nodes.begin()];
    u.sane &= j.resources.memory_bytes >= 0 && j.resources.cpu_millis >= 0 &&
              j.resources.memory_bytes < (int64_t{1} << 56) &&
              j.resources.cpu_millis < (int64_t{1} << 56);
    u.memory += std::max<int64_t>(0, std::min<int64_t>(j.resources.memory_bytes, 1ll << 56));
    u.cpu += std::max<int64_t>(0, std::min<int64_t>(j.resources.cpu_millis, 1ll << 56));
    ++u.workers;
  }
  std::vector<bool> within(r.nodes.size());
  for (size_t i = 0; i < r.nodes.size(); ++i) {
    const Node& n = *by_id.at(r.nodes[i]);
    within[i] = use[i].sane && use[i].memory <= n.memory_bytes && use[i].cpu <= n.cpu_millis &&
                (n.max_workers <= 0 || use[i].workers <= n.max_workers);
  }
  for (size_t k = 0; k < r.decisions.size(); ++k) {
    const Decision& d = r.decisions[k];
    if (d.verdict != Verdict::kAdmit) continue;
    const int32_t node = r.placements[k].node;
    Check(node >= 0 && static_cast<size_t>(node) < r.nodes.size(), "admitted: placed on a node");
    const Node& n = *by_id.at(r.nodes[node]);
    const QueuedJob& job = s.queued[d.job];
    Check(job.resources.memory_bytes <= n.memory_bytes && job.resources.cpu_millis <= n.cpu_millis,
          "admitted: fits its node");
    bool dedicated = false;
    for (const auto& [id, other] : by_id) dedicated |= pool_of(*other) == job.pool;
    Check(pool_of(n) == (dedicated ? job.pool : std::string()), "admitted: a node of its pool");
    use[node].memory += job.resources.memory_bytes;
    use[node].cpu += job.resources.cpu_millis;
    ++use[node].workers;
  }
  for (size_t i = 0; i < r.nodes.size(); ++i) {
    if (!within[i]) continue;
    const Node& n = *by_id.at(r.nodes[i]);
    Check(use[i].memory <= n.memory_bytes, "node memory never overcommitted");
    Check(use[i].cpu <= n.cpu_millis, "node cpu never overcommitted");
    Check(n.max_workers <= 0 || use[i].workers <= n.max_workers, "node slots never overcommitted");
  }
}

// The cluster-wide budget admission enforces (planner/model/model.h, Budgets::nodes):
// with nodes, fields <= 0 are the nodes' sums (max_workers: unlimited if a
// node has no limit). Derived here from the contract, not from plan.cc.
Budgets ClusterCaps(const Budgets& b) {
  Budgets out = b;
  if (b.nodes.empty()) return out;
  int64_t memory = 0, cpu = 0, workers = 0;
  bool unlimited = false;
  for (const Node& n : b.nodes) {
    if (n.memory_bytes <= 0 || n.cpu_millis <= 0) continue;
    // Saturating sums (both terms are > 0 here).
    memory = memory > INT64_MAX - n.memory_bytes ? INT64_MAX : memory + n.memory_bytes;
    cpu = cpu > INT64_MAX - n.cpu_millis ? INT64_MAX : cpu + n.cpu_millis;
    if (n.max_workers > 0) workers += n.max_workers; else unlimited = true;
  }
  if (out.memory_bytes <= 0) out.memory_bytes = memory;
  if (out.cpu_millis <= 0) out.cpu_millis = cpu;
  if (out.max_workers <= 0) out.max_workers = unlimited ? INT32_MAX : static_cast<int32_t>(workers);
  return out;
}

void FuzzOne(const uint8_t* data, size_t size) {
  Reader in(data, size);
  const absl::Time now = absl::FromUnixSeconds(1'800'000'000);
  Budgets b;
  b.memory_bytes = in.Amount();
  b.cpu_millis = in.Amount();
  b.max_workers = static_cast<int8_t>(in.Byte());
  b.workspace_max_workers = static_cast<int8_t>(in.Byte()) % 8;
  b.pool_max_workers["p1"] = static_cast<int8_t>(in.Byte()) % 4;
  State s;
  const uint8_t flags = in.Byte();
  s.paused = flags & 1;
  if (flags & 2) s.pools_in_maintenance.insert("p1");
  Policy policy;
  policy.backfill = !(flags & 4);
  policy.ranking = (flags & 8) ? &FifoRanking() : &DrfRanking();
  if (flags & 16) policy.default_duration = in.Duration();
  const int ids = 2 + in.Byte() % 30;
  // Nodes: a few, some dedicated to pool p1, sizes from tiny to extreme
  // (invalid ones, <= 0, are ignored by the planner; ids may repeat).
  const int num_nodes = (flags & 32) ? 1 + in.Byte() % 4 : 0;
  for (int i = 0; i < num_nodes; ++i) {
    Node n;
    n.id = in.Name("n", 5);
    n.memory_bytes = in.Amount();
    n.cpu_millis = in.Amount();
    n.max_workers = static_cast<int8_t>(in.Byte()) % 4;
    if (in.Byte() % 4 == 0) n.labels[kPoolLabel] = "p1";
    b.nodes.push_back(n);
  }

  const int running = in.Byte() % 8;
  for (int i = 0; i < running; ++i) {
    RunningJob r;
    r.id = in.Name("j", ids);
    r.workspace = in.Name("w", 4);
    r.pool = in.Name("p", 3);
    if (r.pool == "p0") r.pool = kDefaultPool;
    r.resources = {in.Amount(), in.Amount()};
    r.started_at = in.Time(now);
    r.expected_duration = in.Duration();
    if (num_nodes > 0) r.node = in.Name("n", 6);  // n5: not in the inventory
    s.running.push_back(r);
  }
  const int finished = in.Byte() % 8;
  for (int i = 0; i < finished; ++i) {
    s.finished[in.Name("j", ids)] =
        in.Byte() & 1 ? DependencyOutcome::kSucceeded : DependencyOutcome::kFailed;
  }
  while (!in.Done() && s.queued.size() < 200) {
    QueuedJob q;
    q.id = in.Name("j", ids);
    q.workspace = in.Name("w", 4);
    q.pool = in.Name("p", 3);
    if (q.pool == "p0") q.pool = kDefaultPool;
    const uint8_t prio = in.Byte();
    q.priority = prio < 250 ? prio % 4 : static_cast<int32_t>(in.Int64());
    q.resources = {in.Amount(), in.Amount()};
    q.created_at = in.Time(now);
    q.expected_duration = in.Duration();
    for (int d = in.Byte() % 4; d > 0; --d) q.depends_on.push_back(in.Name("j", ids));
    s.queued.push_back(q);
  }

  const PlanResult r = Plan(s, b, policy, now);
  Check(r.decisions.size() == s.queued.size(), "one decision per job");
  std::string seen(s.queued.size(), 0);
  int64_t mem = 0, cpu = 0, workers = 0;
  bool running_sane = true;
  for (const RunningJob& j : s.running) {
    running_sane &= j.resources.memory_bytes >= 0 && j.resources.cpu_millis >= 0 &&
                    j.resources.memory_bytes < (int64_t{1} << 56) &&
                    j.resources.cpu_millis < (int64_t{1} << 56);
    mem += std::max<int64_t>(0, std::min<int64_t>(j.resources.memory_bytes, 1ll << 56));
    cpu += std::max<int64_t>(0, std::min<int64_t>(j.resources.cpu_millis, 1ll << 56));
    ++workers;
  }
  const Budgets caps = ClusterCaps(b);
  const bool within = running_sane && mem <= caps.memory_bytes &&
                      cpu <= caps.cpu_millis && workers <= caps.max_workers;
  const StartEstimateTable table(s, b, policy, r);
  for (size_t k = 0; k < r.decisions.size(); ++k) {
    const Decision& d = r.decisions[k];
    Check(d.job < s.queued.size(), "job index in range");
    Check(!seen[d.job], "each job decided once");
    seen[d.job] = 1;
    Check((d.verdict == Verdict::kReject) == (d.problem != Problem::kNone),
          "REJECT iff problem");
    if (d.verdict == Verdict::kAdmit) {
      const Resources& res = s.queued[d.job].resources;
      Check(res.memory_bytes > 0 && res.cpu_millis > 0, "admitted jobs are valid");
      mem += res.memory_bytes;
      cpu += res.cpu_millis;
      ++workers;
    }
    (void)Explain(s, b, r, k, table);
    (void)DecisionSummary(s, r, k);
  }
  CheckNodes(s, b, r);
  for (size_t k = 0; k < r.decisions.size(); ++k) {
    const StartEstimate eta = table[k];
    const bool admitted = r.decisions[k].verdict == Verdict::kAdmit;
    Check((eta.kind == EtaKind::kNow) == admitted, "\"now\" exactly for admitted jobs");
    if (admitted && !r.nodes.empty()) Check(eta.node >= 0, "admitted: now on a node");
  }
  if (within) {
    Check(mem <= caps.memory_bytes, "memory within budget");
    Check(cpu <= caps.cpu_millis, "cpu within budget");
    Check(workers <= caps.max_workers, "workers within budget");
  }
  State reversed = s;
  std::reverse(reversed.queued.begin(), reversed.queued.end());
  std::reverse(reversed.running.begin(), reversed.running.end());
  Budgets reversed_budgets = b;
  // Node order does not matter either, unless ids repeat (the first wins).
  absl::flat_hash_map<std::string, int> id_count;
  bool unique_ids = true;
  for (const Node& n : b.nodes) unique_ids &= ++id_count[n.id] == 1;
  if (unique_ids) std::reverse(reversed_budgets.nodes.begin(), reversed_budgets.nodes.end());
  Check(CanonicalString(reversed, Plan(reversed, reversed_budgets, policy, now)) ==
            CanonicalString(s, r),
        "same plan for reversed input");
}

}  // namespace
}  // namespace berth::planner

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  berth::planner::FuzzOne(data, size);
  return 0;
}
