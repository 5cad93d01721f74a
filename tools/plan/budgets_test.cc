// Budgets from files plan as the same budgets from flags: a node list in a
// workload, in a --budgets file or in a saved GetBudgets answer gives the
// verdicts --nodes gives, and a file's cluster-wide caps hold with --nodes.
// End to end through `berth-plan now --json` (RunNow).
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "planner/base/proto_json.h"
#include "tools/plan/commands.h"

namespace berth::plan {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kGi = int64_t{1} << 30;

std::string Write(const std::string& name, const std::string& contents) {
  std::string path = absl::StrCat(std::getenv("TEST_TMPDIR"), "/", name);
  EXPECT_TRUE(WriteFileAtomically(path, contents).ok());
  return path;
}

absl::StatusOr<std::string> Now(const std::vector<std::string>& args) {
  auto out = RunNow(args, CommandEnv());
  if (!out.ok()) return out.status();
  std::ostringstream os;
  if (out->write) {
    out->write(&os);
  } else {
    os << out->text;
  }
  return os.str();
}

// The decisions table of a `now --json` report (its text from "decisions"
// to the end of that array), so that reports with different summaries
// (the budgets' source) compare on their verdicts alone.
std::string Decisions(const std::string& json) {
  const size_t at = json.find("\"decisions\"");
  if (at == std::string::npos) return "no decisions in: " + json.substr(0, 300);
  return json.substr(at, json.find(']', at) - at);
}

struct Node {
  std::string id;
  int64_t memory;
  int64_t cpu;
  int32_t workers;
};

std::string NodesJson(const std::vector<Node>& nodes, bool as_answer) {
  std::string out = "[";
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    absl::StrAppend(&out, i ? "," : "", R"({"id":")", n.id, R"(","memoryBytes":")", n.memory,
                    R"(","cpuMillis":")", n.cpu, R"(","maxWorkers":)", n.workers);
    if (as_answer) {
      // What a GetBudgets answer adds: berthd's own report on the node.
      absl::StrAppend(&out, R"(,"hostname":")", n.id,
                      R"(","reserveMemoryBytes":"1073741824","reserveCpuMillis":"500")");
    }
    absl::StrAppend(&out, "}");
  }
  return out + "]";
}

std::string NodesFile(const std::vector<Node>& nodes) {
  std::string out = "# id memory cpus\n";
  for (const Node& n : nodes) {
    absl::StrAppend(&out, n.id, " ", n.memory, " ", n.cpu, "m workers=", n.workers, "\n");
  }
  return out;
}

std::string Jobs(std::mt19937_64& rng, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) {
    const int64_t mem = std::uniform_int_distribution<int64_t>(1, 48)(rng) * kGi;
    const int64_t cpu = std::uniform_int_distribution<int64_t>(1, 12)(rng) * 500;
    const int prio = std::uniform_int_distribution<int>(0, 2)(rng);
    const int ws = std::uniform_int_distribution<int>(0, 3)(rng);
    absl::StrAppend(&out, i ? "," : "", R"({"spec":{"id":"j)", i, R"(","workspace":"ws)", ws,
                    R"(","priority":)", prio, R"(,"resources":{"cpuMillis":")", cpu,
                    R"(","memoryBytes":")", mem, R"("},"expectedDuration":")",
                    std::uniform_int_distribution<int>(1, 90)(rng) * 60, R"(s"}})");
  }
  return out;
}

std::string Workload(const std::string& budgets, const std::string& jobs) {
  return absl::StrCat(R"({"startTime":"2026-11-23T09:00:00Z",)",
                      budgets.empty() ? "" : absl::StrCat(R"("budgets":)", budgets, ","),
                      R"("jobs":[)", jobs, "]}");
}

// The issue's case and generated ones: the same nodes from a workload's
// budgets, a --budgets file (a saved GetBudgets answer) and --nodes give
// the same decisions, and a job larger than every node never fits.
TEST(BudgetsFromFiles, NodeListsPlanAsNodesFlag) {
  const uint64_t seed0 = std::random_device()();
  for (uint64_t seed = seed0; seed < seed0 + 30; ++seed) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    std::mt19937_64 rng(seed);
    std::vector<Node> nodes;
    const int count = std::uniform_int_distribution<int>(1, 4)(rng);
    for (int i = 0; i < count; ++i) {
      nodes.push_back({absl::StrCat("n", i), std::uniform_int_distribution<int64_t>(16, 40)(rng) * kGi,
                       std::uniform_int_distribution<int64_t>(4, 16)(rng) * 1000,
                       std::uniform_int_distribution<int32_t>(0, 4)(rng)});
    }
    const std::string jobs = Jobs(rng, 25);
    const std::string tag = absl::StrCat(seed);
    const std::string in_file = Write(absl::StrCat("nodes_in_file_", tag, ".json"),
                                      Workload(absl::StrCat(R"({"nodes":)", NodesJson(nodes, false),
                                                            "}"),
                                               jobs));
    const std::string bare = Write(absl::StrCat("bare_", tag, ".json"), Workload("", jobs));
    const std::string nodes_file = Write(absl::StrCat("nodes_", tag, ".txt"), NodesFile(nodes));
    const std::string answer = Write(
        absl::StrCat("answer_", tag, ".json"),
        absl::StrCat(R"({"nodes":)", NodesJson(nodes, true),
                     R"(,"nodeUse":[{"node":{"id":"n0"},"jobs":2,"reservedMemoryBytes":"1"}]})"));
    auto from_flag = Now({bare, "--nodes", nodes_file, "--json"});
    auto from_workload = Now({in_file, "--json"});
    auto from_answer = Now({bare, "--budgets", answer, "--json"});
    ASSERT_TRUE(from_flag.ok()) << from_flag.status();
    ASSERT_TRUE(from_workload.ok()) << from_workload.status();
    ASSERT_TRUE(from_answer.ok()) << from_answer.status();
    EXPECT_EQ(Decisions(*from_workload), Decisions(*from_flag));
    EXPECT_EQ(Decisions(*from_answer), Decisions(*from_flag));
    // The answer's nodeUse is not modelled, and the report says so.
    EXPECT_THAT(*from_answer, HasSubstr("nodeUse (2 jobs holding capacity"));
  }
}

TEST(BudgetsFromFiles, TwoNodesOf32GiBNeverFitA40GiBJob) {
  const std::string job =
      R"({"spec":{"id":"big","workspace":"ws","resources":{"cpuMillis":"1000","memoryBytes":")" +
      std::to_string(40 * kGi) + R"("},"expectedDuration":"600s"}})";
  const std::string file = Write(
      "two_nodes.json",
      Workload(absl::StrCat(R"({"nodes":)",
                            NodesJson({{"a", 32 * kGi, 8000, 0}, {"b", 32 * kGi, 8000, 0}}, false),
                            "}"),
               job));
  auto out = Now({file, "--json"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(Decisions(*out), HasSubstr("\"NEVER_FITS\""));
  EXPECT_THAT(*out, HasSubstr("on 2 nodes"));
}

// A file's maxWorkers 8 holds with --nodes 2x32Gi/8 (16 slots by the nodes'
// cores); its memory cap too.
TEST(BudgetsFromFiles, FileCapsHoldWithNodesFlag) {
  std::string jobs;
  for (int i = 0; i < 20; ++i) {
    absl::StrAppend(&jobs, i ? "," : "", R"({"spec":{"id":"s)", i,
                    R"(","workspace":"ws","resources":{"cpuMillis":"500","memoryBytes":")", kGi,
                    R"("},"expectedDuration":"600s"}})");
  }
  const std::string capped =
      Write("capped.json", Workload(R"({"memoryBytes":"274877906944","cpuMillis":"64000","maxWorkers":8})", jobs));
  auto out = Now({capped, "--nodes", "2x32Gi/8", "--json"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(*out, HasSubstr("\"admitted\": 8"));
  EXPECT_THAT(*out, HasSubstr("64 GiB, 16 cores, 8 workers, on 2 nodes"));
  // A flag of 0 asks for the nodes' sum instead (one slot per core: 16).
  auto sum = Now({capped, "--nodes", "2x32Gi/8", "--max-workers", "0", "--json"});
  ASSERT_TRUE(sum.ok()) << sum.status();
  EXPECT_THAT(*sum, HasSubstr("\"admitted\": 16"));
  // The memory cap: 6 GiB for jobs of 1 GiB admits 6.
  const std::string mem =
      Write("mem_capped.json", Workload(R"({"memoryBytes":"6442450944"})", jobs));
  auto six = Now({mem, "--nodes", "2x32Gi/8", "--json"});
  ASSERT_TRUE(six.ok()) << six.status();
  EXPECT_THAT(*six, HasSubstr("\"admitted\": 6"));
}

TEST(BudgetsFromFiles, NodesThatCannotBeHonouredAreErrors) {
  const std::string job =
      R"({"spec":{"id":"a","workspace":"ws","resources":{"cpuMillis":"1000","memoryBytes":"1073741824"}}})";
  const std::string zero = Write(
      "zero_node.json",
      Workload(R"({"nodes":[{"id":"a","memoryBytes":"0","cpuMillis":"1000"},{"id":"a","memoryBytes":"1073741824","cpuMillis":"1000"}]})",
               job));
  auto out = Now({zero, "--json"});
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(out.status().message(), HasSubstr("node 'a': memory must be > 0, got 0"));
  EXPECT_THAT(out.status().message(), HasSubstr("node 'a': id listed twice"));
  // Without nodes, a cap of 0 is no budget at all.
  const std::string bare = Write("bare.json", Workload("", job));
  EXPECT_THAT(Now({bare, "--memory", "0", "--cpus", "1", "--max-workers", "1"}).status().message(),
              HasSubstr("memory must be > 0, got 0"));
}

}  // namespace
}  // namespace berth::plan
