#include "executor/reconcile/node_budgets.h"

#include <algorithm>
#include <utility>

#include "google/protobuf/util/message_differencer.h"

namespace berth {

void NodeBudgets::Update(const std::vector<NodeInfo>& nodes) {
  std::vector<v1::Node> next;
  for (const NodeInfo& n : nodes) {
    if (!AcceptsJobs(n)) continue;
    v1::Node node;
    node.set_id(n.id);
    // Stray tasks (a leaked or orphaned task of this instance) hold their
    // reservations on the node whatever their service's state.
    node.set_memory_bytes(n.memory_bytes - options_.reserve_memory_bytes -
                          n.stray_memory_bytes);
    node.set_cpu_millis(n.nano_cpus / 1'000'000 - options_.reserve_cpu_millis -
                        n.stray_cpu_millis);
    node.set_max_workers(options_.max_workers_per_node);
    node.set_hostname(n.hostname);
    node.set_reserve_memory_bytes(options_.reserve_memory_bytes);
    node.set_reserve_cpu_millis(options_.reserve_cpu_millis);
    node.set_stray_tasks(n.stray_tasks);
    node.set_stray_memory_bytes(n.stray_memory_bytes);
    node.set_stray_cpu_millis(n.stray_cpu_millis);
    for (const auto& [key, value] : n.labels) (*node.mutable_labels())[key] = value;
    if (node.memory_bytes() <= 0 || node.cpu_millis() <= 0) continue;
    next.push_back(std::move(node));
  }
  std::sort(next.begin(), next.end(),
            [](const v1::Node& a, const v1::Node& b) { return a.id() < b.id(); });
  absl::MutexLock lock(&mu_);
  bool same = version_ > 0 && next.size() == nodes_.size();
  for (size_t i = 0; same && i < next.size(); ++i) {
    same = google::protobuf::util::MessageDifferencer::Equals(next[i], nodes_[i]);
  }
  if (same) return;
  nodes_ = std::move(next);
  ++version_;
}

void NodeBudgets::ApplyTo(v1::Budgets& budgets, bool operator_set) const {
  absl::MutexLock lock(&mu_);
  if (version_ == 0 || budgets.nodes_size() > 0) return;
  int64_t memory = 0, cpu = 0;
  for (const v1::Node& n : nodes_) {
    *budgets.add_nodes() = n;
    memory += n.memory_bytes();
    cpu += n.cpu_millis();
  }
  // An operator's value caps the sum; the start-up defaults (the sum when
  // berthd started) never do: a node that joins adds capacity.
  const auto total = [operator_set](int64_t sum, int64_t set) {
    return operator_set && set > 0 ? std::min(sum, set) : sum;
  };
  if (options_.auto_memory) budgets.set_memory_bytes(total(memory, budgets.memory_bytes()));
  if (options_.auto_cpu) budgets.set_cpu_millis(total(cpu, budgets.cpu_millis()));
}

void NodeBudgets::ObserveTasks(const ContainerList& containers) {
  LiveJobs live;
  for (const auto& [job_id, c] : containers) {
    if (c.node_id.empty() || IsFinished(c.state)) continue;
    live[c.node_id].push_back(job_id);  // job ids in order: the list is a map
  }
  absl::MutexLock lock(&mu_);
  live_ = std::move(live);
}

std::optional<NodeBudgets::LiveJobs> NodeBudgets::live_jobs() const {
  absl::MutexLock lock(&mu_);
  return live_;
}

uint64_t NodeBudgets::version() const {
  absl::MutexLock lock(&mu_);
  return version_;
}

}  // namespace berth
