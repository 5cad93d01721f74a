#include "server/ingest/node_fit.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "planner/base/units.h"

namespace berth {
namespace {

std::string PoolOf(const v1::Node& n) {
  auto it = n.labels().find("pool");
  return it == n.labels().end() ? std::string() : it->second;
}

}  // namespace

NodeFit::NodeFit(const std::vector<v1::Node>& nodes) {
  for (const v1::Node& n : nodes) {
    Group& g = groups_[PoolOf(n)];  // a dedicated group exists even if unusable
    if (n.memory_bytes() <= 0 || n.cpu_millis() <= 0) continue;
    g.by_memory.push_back(n);
    g.total_memory += n.memory_bytes();
    g.total_cpu += n.cpu_millis();
  }
  for (auto& [label, g] : groups_) {
    std::sort(g.by_memory.begin(), g.by_memory.end(), [](const v1::Node& a, const v1::Node& b) {
      return a.memory_bytes() != b.memory_bytes() ? a.memory_bytes() > b.memory_bytes()
                                                  : a.id() < b.id();
    });
    g.prefix_max_cpu.reserve(g.by_memory.size());
    int64_t most = 0;
    for (const v1::Node& n : g.by_memory) {
      most = std::max(most, n.cpu_millis());
      g.prefix_max_cpu.push_back(most);
    }
  }
}

std::optional<std::string> NodeFit::Check(const v1::JobSpec& job) const {
  const std::string pool = job.pool().empty() ? "default" : job.pool();
  auto it = groups_.find(pool);
  if (it == groups_.end()) it = groups_.find(std::string());
  if (it == groups_.end() || it->second.by_memory.empty()) {
    return absl::StrCat("no node may run pool '", pool, "'");
  }
  const Group& g = it->second;
  const int64_t memory = job.resources().memory_bytes();
  const int64_t cpu = job.resources().cpu_millis();
  const v1::Node& largest = g.by_memory.front();
  if (memory <= largest.memory_bytes() && cpu <= largest.cpu_millis()) return std::nullopt;
  if (memory <= largest.memory_bytes() && cpu <= g.prefix_max_cpu.back()) {
    // The nodes with at least `memory`: a prefix of by_memory.
    const auto end = std::partition_point(
        g.by_memory.begin(), g.by_memory.end(),
        [memory](const v1::Node& n) { return n.memory_bytes() >= memory; });
    if (g.prefix_max_cpu[end - g.by_memory.begin() - 1] >= cpu) return std::nullopt;
  }
  std::vector<std::string> fits;
  if (memory > largest.memory_bytes()) {
    fits.push_back(absl::StrCat("memory estimate <= ",
                                FormatBytes(largest.memory_bytes(), Rounding::kDown)));
  }
  if (cpu > largest.cpu_millis()) {
    fits.push_back(
        absl::StrCat("cpu estimate <= ", FormatCpu(largest.cpu_millis(), Rounding::kDown)));
  }
  // Named as people know it (its hostname), the id where it has none.
  const std::string& name = largest.hostname().empty() ? largest.id() : largest.hostname();
  return absl::StrCat(
      "needs ", FormatBytes(memory), " memory and ", FormatCpu(cpu),
      ", more than any node has: the largest is ", name, " (",
      FormatBytes(largest.memory_bytes(), Rounding::kDown), " memory, ",
      FormatCpu(largest.cpu_millis(), Rounding::kDown), "), ",
      FormatBytes(g.total_memory, Rounding::kDown), " memory and ",
      FormatCpu(g.total_cpu, Rounding::kDown), " in the cluster",
      fits.empty() ? std::string()
                   : absl::StrCat(". Fits on ", name, " if ", absl::StrJoin(fits, " and ")));
}

}  // namespace berth
