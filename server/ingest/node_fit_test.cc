#include "server/ingest/node_fit.h"

#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

v1::Node N(const std::string& id, int64_t memory, int64_t cpu, const std::string& pool = "") {
  v1::Node n;
  n.set_id(id);
  n.set_memory_bytes(memory);
  n.set_cpu_millis(cpu);
  if (!pool.empty()) (*n.mutable_labels())["pool"] = pool;
  return n;
}

v1::JobSpec J(int64_t memory, int64_t cpu, const std::string& pool = "") {
  v1::JobSpec j;
  j.set_id("j");
  j.set_pool(pool);
  j.mutable_resources()->set_memory_bytes(memory);
  j.mutable_resources()->set_cpu_millis(cpu);
  return j;
}

TEST(NodeFitTest, FitsOneNodeInBothDimensionsNotTheSumOfTwo) {
  // The node with the most memory has little cpu: a job needs both on one.
  const NodeFit fit({N("big-mem", 64 * kGiB, 2000), N("big-cpu", 8 * kGiB, 32000)});
  EXPECT_FALSE(fit.Check(J(60 * kGiB, 2000)).has_value());
  EXPECT_FALSE(fit.Check(J(8 * kGiB, 30000)).has_value());
  EXPECT_EQ(fit.Check(J(32 * kGiB, 16000)),
            "needs 32 GiB memory and 16 cores, more than any node has: the largest is big-mem "
            "(64 GiB memory, 2 cores), 72 GiB memory and 34 cores in the cluster. Fits on "
            "big-mem if cpu estimate <= 2 cores");
  EXPECT_EQ(fit.Check(J(65 * kGiB, 40000)),
            "needs 65 GiB memory and 40 cores, more than any node has: the largest is big-mem "
            "(64 GiB memory, 2 cores), 72 GiB memory and 34 cores in the cluster. Fits on "
            "big-mem if memory estimate <= 64 GiB and cpu estimate <= 2 cores");
}

TEST(NodeFitTest, NamesTheLargestNodeByHostname) {
  v1::Node big = N("k3x9q0w1e2r3", 64 * kGiB, 2000);
  big.set_hostname("w1");
  const NodeFit fit({big, N("small", 8 * kGiB, 2000)});
  EXPECT_EQ(fit.Check(J(65 * kGiB, 1000)),
            "needs 65 GiB memory and 1 core, more than any node has: the largest is w1 "
            "(64 GiB memory, 2 cores), 72 GiB memory and 4 cores in the cluster. Fits on "
            "w1 if memory estimate <= 64 GiB");
}

TEST(NodeFitTest, DedicatedPoolsAndUnusableNodes) {
  const NodeFit fit({N("a", 16 * kGiB, 8000), N("db", 128 * kGiB, 8000, "database"),
                     N("broken", 0, 8000, "gpu")});
  EXPECT_FALSE(fit.Check(J(100 * kGiB, 1000, "database")).has_value());
  EXPECT_TRUE(fit.Check(J(100 * kGiB, 1000)).has_value());  // not on db
  EXPECT_EQ(fit.Check(J(kGiB, 1000, "gpu")), "no node may run pool 'gpu'");
  EXPECT_FALSE(fit.Check(J(kGiB, 1000, "other")).has_value());  // the unlabelled nodes
  const NodeFit only_db({N("db", 128 * kGiB, 8000, "database")});
  EXPECT_EQ(only_db.Check(J(kGiB, 1000)), "no node may run pool 'default'");
}

// The reference: a scan of every node, as ingest did before the index.
bool FitsByScan(const std::vector<v1::Node>& nodes, const v1::JobSpec& job) {
  const std::string pool = job.pool().empty() ? "default" : job.pool();
  auto pool_of = [](const v1::Node& n) {
    auto it = n.labels().find("pool");
    return it == n.labels().end() ? std::string() : it->second;
  };
  bool dedicated = false;
  for (const v1::Node& n : nodes) dedicated = dedicated || pool_of(n) == pool;
  for (const v1::Node& n : nodes) {
    if (pool_of(n) != (dedicated ? pool : std::string())) continue;
    if (n.memory_bytes() <= 0 || n.cpu_millis() <= 0) continue;
    if (job.resources().memory_bytes() <= n.memory_bytes() &&
        job.resources().cpu_millis() <= n.cpu_millis())
      return true;
  }
  return false;
}

TEST(NodeFitTest, SameAnswerAsAScanOnRandomInventories) {
  std::mt19937_64 rng(14);
  auto pick = [&](int64_t n) { return static_cast<int64_t>(rng() % static_cast<uint64_t>(n)); };
  for (int round = 0; round < 300; ++round) {
    std::vector<v1::Node> nodes;
    for (int i = 0, n = 1 + static_cast<int>(pick(12)); i < n; ++i) {
      nodes.push_back(N(absl::StrCat("n", pick(20)), pick(9) * kGiB, pick(9) * 1000,
                        pick(4) == 0 ? "database" : ""));
    }
    const NodeFit fit(nodes);
    for (int k = 0; k < 40; ++k) {
      const v1::JobSpec job =
          J(1 + pick(9) * kGiB, 1 + pick(9) * 1000, pick(3) == 0 ? "database" : "");
      EXPECT_EQ(!fit.Check(job).has_value(), FitsByScan(nodes, job))
          << "round " << round << " job " << job.ShortDebugString();
    }
  }
}

}  // namespace
}  // namespace berth
