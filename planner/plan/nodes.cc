// Node inventory and placement: see nodes.h.
#include "planner/plan/nodes.h"

#include <algorithm>

#include "planner/model/saturating.h"

namespace berth::planner::internal {
namespace {

int64_t SlotsOf(int32_t max_workers) {
  return max_workers > 0 ? max_workers : kNodeUnlimited;
}

int64_t SubSlots(int64_t slots, int64_t n) {
  return slots == kNodeUnlimited ? slots : SatSub(slots, n);
}

int64_t AddSlots(int64_t slots, int64_t n) {
  return slots == kNodeUnlimited ? slots : SatAdd(slots, n);
}

bool Covers(const NodeAmounts& free, int64_t memory, int64_t cpu) {
  return free.slots >= 1 && free.memory_bytes >= memory && free.cpu_millis >= cpu;
}

}  // namespace

void NodeInventory::Build(const std::vector<Node>& nodes) {
  nodes_.clear();
  capacity_.clear();
  index_.clear();
  groups_.assign(1, Group());
  group_of_pool_.clear();
  std::vector<const Node*> sorted;
  sorted.reserve(nodes.size());
  for (const Node& n : nodes) {
    if (n.memory_bytes > 0 && n.cpu_millis > 0) sorted.push_back(&n);
  }
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Node* a, const Node* b) { return a->id < b->id; });
  for (const Node* n : sorted) {
    if (!nodes_.empty() && nodes_.back()->id == n->id) continue;
    const uint32_t i = static_cast<uint32_t>(nodes_.size());
    nodes_.push_back(n);
    capacity_.push_back({n->memory_bytes, n->cpu_millis, SlotsOf(n->max_workers)});
    index_.emplace(n->id, i);
    uint32_t g = 0;
    if (auto it = n->labels.find(kPoolLabel); it != n->labels.end()) {
      auto [pos, inserted] = group_of_pool_.emplace(
          it->second, static_cast<uint32_t>(groups_.size()));
      if (inserted) groups_.emplace_back();
      g = pos->second;
    }
    groups_[g].by_memory.push_back(i);
  }
  for (Group& g : groups_) {
    std::stable_sort(g.by_memory.begin(), g.by_memory.end(),
                     [this](uint32_t a, uint32_t b) {
                       return capacity_[a].memory_bytes < capacity_[b].memory_bytes;
                     });
    g.suffix_max_cpu.assign(g.by_memory.size(), 0);
    int64_t best = 0;
    for (size_t k = g.by_memory.size(); k-- > 0;) {
      best = std::max(best, capacity_[g.by_memory[k]].cpu_millis);
      g.suffix_max_cpu[k] = best;
    }
  }
  ClearUsage();
}

uint32_t NodeInventory::GroupOf(absl::string_view pool) const {
  auto it = group_of_pool_.find(pool);
  return it == group_of_pool_.end() ? 0 : it->second;
}

int32_t NodeInventory::Find(absl::string_view id) const {
  auto it = index_.find(id);
  return it == index_.end() ? -1 : static_cast<int32_t>(it->second);
}

bool NodeInventory::FitsSomeNode(uint32_t group, int64_t memory,
                                 int64_t cpu) const {
  const Group& g = groups_[group];
  auto it = std::lower_bound(
      g.by_memory.begin(), g.by_memory.end(), memory,
      [this](uint32_t n, int64_t m) { return capacity_[n].memory_bytes < m; });
  if (it == g.by_memory.end()) return false;
  return g.suffix_max_cpu[it - g.by_memory.begin()] >= cpu;
}

NodeShort NodeInventory::Largest(uint32_t group, int64_t memory,
                                 int64_t cpu) const {
  NodeShort s;
  const Group& g = groups_[group];
  s.dimension = Dimension::kMemory;
  if (g.by_memory.empty()) return s;
  // The node with the most memory: the last by memory; among equals the
  // first by id.
  auto most_memory = [&](auto pred) {
    int32_t best = -1;
    for (uint32_t n : g.by_memory) {
      if (!pred(n)) continue;
      if (best < 0 || capacity_[n].memory_bytes > capacity_[best].memory_bytes)
        best = static_cast<int32_t>(n);
    }
    return best;
  };
  const int32_t top = most_memory([](uint32_t) { return true; });
  if (capacity_[top].memory_bytes < memory) {
    s.node = top;
    s.capacity = capacity_[top].memory_bytes;
    s.free = s.capacity;
    return s;
  }
  int32_t top_cpu = -1;
  for (uint32_t n : g.by_memory) {
    if (top_cpu < 0 || capacity_[n].cpu_millis > capacity_[top_cpu].cpu_millis ||
        (capacity_[n].cpu_millis == capacity_[top_cpu].cpu_millis &&
         n < static_cast<uint32_t>(top_cpu)))
      top_cpu = static_cast<int32_t>(n);
  }
  if (capacity_[top_cpu].cpu_millis < cpu) {
    s.dimension = Dimension::kCpu;
    s.node = top_cpu;
    s.capacity = capacity_[top_cpu].cpu_millis;
    s.free = s.capacity;
    return s;
  }
  // Enough memory on some nodes and enough cpu on others, never both.
  const int32_t n = most_memory(
      [&](uint32_t k) { return capacity_[k].cpu_millis >= cpu; });
  s.node = n;
  s.capacity = capacity_[n].memory_bytes;
  s.free = s.capacity;
  return s;
}

NodeAmounts NodeInventory::Total() const {
  NodeAmounts t;
  for (const NodeAmounts& c : capacity_) {
    t.memory_bytes = SatAdd(t.memory_bytes, c.memory_bytes);
    t.cpu_millis = SatAdd(t.cpu_millis, c.cpu_millis);
    t.slots = c.slots == kNodeUnlimited || t.slots == kNodeUnlimited
                  ? kNodeUnlimited
                  : SatAdd(t.slots, c.slots);
  }
  return t;
}

void NodeInventory::ClearUsage() {
  used_.assign(nodes_.size(), NodeAmounts());
  releases_.assign(nodes_.size(), {});
}

void NodeInventory::AddRunning(uint32_t node, int64_t memory, int64_t cpu,
                               absl::Time end) {
  NodeAmounts& u = used_[node];
  u.memory_bytes = SatAdd(u.memory_bytes, memory);
  u.cpu_millis = SatAdd(u.cpu_millis, cpu);
  u.slots = SatAdd(u.slots, 1);
  releases_[node].push_back({end, memory, cpu});
}

NodePlacer::NodePlacer(const NodeInventory& inv)
    : inv_(inv),
      free_(inv.size()),
      group_of_node_(inv.size(), 0),
      open_(inv.num_groups()),
      releases_(inv.size()),
      no_fit_(inv.num_groups()) {
  for (uint32_t g = 0; g < inv.num_groups(); ++g) {
    for (uint32_t n : inv.members(g)) group_of_node_[n] = g;
  }
  for (uint32_t n = 0; n < inv.size(); ++n) {
    const NodeAmounts& cap = inv.capacity(n);
    const NodeAmounts& used = inv.used(n);
    free_[n] = {SatSub(cap.memory_bytes, used.memory_bytes),
                SatSub(cap.cpu_millis, used.cpu_millis),
                SubSlots(cap.slots, used.slots)};
    releases_[n] = inv.releases(n);
    Index(n);
  }
}

void NodePlacer::Index(uint32_t node) {
  const NodeAmounts& f = free_[node];
  if (f.slots >= 1) open_[group_of_node_[node]].emplace(f.memory_bytes, f.cpu_millis, node);
}

void NodePlacer::Unindex(uint32_t node) {
  const NodeAmounts& f = free_[node];
  open_[group_of_node_[node]].erase(Key(f.memory_bytes, f.cpu_millis, node));
}

int32_t NodePlacer::BestFit(uint32_t group, int64_t memory, int64_t cpu,
                            const Guard& guard) const {
  const std::set<Key>& open = open_[group];
  for (auto it = open.lower_bound(Key(memory, INT64_MIN, 0)); it != open.end(); ++it) {
    const auto [mem, c, node] = *it;
    if (c < cpu) continue;
    if (static_cast<int32_t>(node) == guard.node &&
        !Covers(guard.spare, memory, cpu))
      continue;
    return static_cast<int32_t>(node);
  }
  return -1;
}

int32_t NodePlacer::BestFitUnguarded(uint32_t group, int64_t memory, int64_t cpu) {
  std::vector<std::pair<int64_t, int64_t>>& known = no_fit_[group];
  for (const auto& [m, c] : known) {
    if (memory >= m && cpu >= c) return -1;
  }
  const int32_t node = BestFit(group, memory, cpu, Guard());
  if (node < 0) {
    // Keep the smallest failures: drop those the new one dominates.
    known.erase(std::remove_if(known.begin(), known.end(),
                               [&](const std::pair<int64_t, int64_t>& k) {
                                 return k.first >= memory && k.second >= cpu;
                               }),
                known.end());
    if (known.size() == kMaxNoFits) known.erase(known.begin());
    known.emplace_back(memory, cpu);
  }
  return node;
}

NodeShort NodePlacer::ShortNow(uint32_t group, int64_t memory,
                               int64_t /*cpu*/) const {
  NodeShort s;
  const std::set<Key>& open = open_[group];
  if (open.empty()) {
    s.dimension = Dimension::kWorkerSlots;
    return s;
  }
  const int64_t top_mem = std::get<0>(*open.rbegin());
  if (top_mem < memory) {
    // The node with the most memory free; among equals the first by id.
    uint32_t top = UINT32_MAX;
    for (auto it = open.lower_bound(Key(top_mem, INT64_MIN, 0)); it != open.end(); ++it)
      top = std::min(top, std::get<2>(*it));
    s.dimension = Dimension::kMemory;
    s.node = static_cast<int32_t>(top);
    s.free = top_mem;
    s.capacity = inv_.capacity(top).memory_bytes;
    return s;
  }
  // Memory fits somewhere: name the node with the most cpu among those.
  s.dimension = Dimension::kCpu;
  for (auto it = open.lower_bound(Key(memory, INT64_MIN, 0)); it != open.end(); ++it) {
    const auto [mem, c, node] = *it;
    if (s.node < 0 || c > s.free) {
      s.node = static_cast<int32_t>(node);
      s.free = c;
    }
  }
  s.capacity = inv_.capacity(s.node).cpu_millis;
  return s;
}

void NodePlacer::Take(uint32_t node, int64_t memory, int64_t cpu,
                      absl::Time end) {
  Unindex(node);
  NodeAmounts& f = free_[node];
  f.memory_bytes -= memory;  // fits: no overflow
  f.cpu_millis -= cpu;
  f.slots = SubSlots(f.slots, 1);
  releases_[node].push_back({end, memory, cpu});
  Index(node);
}

void NodePlacer::Give(uint32_t node, int64_t memory, int64_t cpu) {
  Unindex(node);
  NodeAmounts& f = free_[node];
  f.memory_bytes = SatAdd(f.memory_bytes, memory);
  f.cpu_millis = SatAdd(f.cpu_millis, cpu);
  f.slots = AddSlots(f.slots, 1);
  Index(node);
}

NodePlacer::Slot NodePlacer::Reserve(uint32_t group, int64_t memory,
                                     int64_t cpu, absl::Time not_before) const {
  Slot best;
  std::vector<NodeRelease> rel;
  for (uint32_t n : inv_.members(group)) {  // by memory; ties broken by id below
    rel = releases_[n];
    std::sort(rel.begin(), rel.end(), [](const NodeRelease& a, const NodeRelease& b) {
      return a.end < b.end;
    });
    NodeAmounts f = free_[n];
    absl::Time t = absl::InfiniteFuture();
    bool fits = Covers(f, memory, cpu);
    size_t k = 0;
    if (fits) t = not_before;
    while (!fits && k < rel.size()) {
      const absl::Time end = rel[k].end;
      for (; k < rel.size() && rel[k].end == end; ++k) {
        f.memory_bytes = SatAdd(f.memory_bytes, rel[k].memory_bytes);
        f.cpu_millis = SatAdd(f.cpu_millis, rel[k].cpu_millis);
        f.slots = AddSlots(f.slots, 1);
      }
      if (Covers(f, memory, cpu)) {
        fits = true;
        t = std::max(end, not_before);
      }
    }
    if (!fits) continue;
    // What the node has at t (releases up to t, not just up to its fit).
    for (; k < rel.size() && rel[k].end <= t; ++k) {
      f.memory_bytes = SatAdd(f.memory_bytes, rel[k].memory_bytes);
      f.cpu_millis = SatAdd(f.cpu_millis, rel[k].cpu_millis);
      f.slots = AddSlots(f.slots, 1);
    }
    if (best.node < 0 || t < best.start ||
        (t == best.start && n < static_cast<uint32_t>(best.node))) {
      best.node = static_cast<int32_t>(n);
      best.start = t;
      best.spare = {f.memory_bytes - memory, f.cpu_millis - cpu,
                    SubSlots(f.slots, 1)};
    }
  }
  return best;
}

}  // namespace berth::planner::internal
