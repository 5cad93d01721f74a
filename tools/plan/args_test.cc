#include "tools/plan/args.h"

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "planner/base/proto_json.h"

namespace berth::plan {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

constexpr int64_t kGi = int64_t{1} << 30;

std::string Write(const std::string& name, const std::string& contents) {
  std::string path = absl::StrCat(std::getenv("TEST_TMPDIR"), "/", name);
  EXPECT_TRUE(WriteFileAtomically(path, contents).ok());
  return path;
}

std::vector<FlagSpec> Specs() {
  std::vector<FlagSpec> s = BudgetFlagSpecs();
  s.push_back({"json", false});
  return s;
}

TEST(ParseArgs, ValuesBooleansPositionalsAndErrors) {
  auto a = ParseArgs({"file.json", "--memory", "256Gi", "--cpus=32", "--json",
                      "--pool-max", "database=4", "--pool-max", "gpu=1"},
                     Specs(), "simulate");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(a->positional, ElementsAre("file.json"));
  EXPECT_EQ(a->Get("memory"), "256Gi");
  EXPECT_EQ(a->Get("cpus"), "32");
  EXPECT_TRUE(a->Has("json"));
  EXPECT_THAT(a->values.at("pool-max"), ElementsAre("database=4", "gpu=1"));

  EXPECT_EQ(ParseArgs({"--colour", "red"}, Specs(), "simulate").status().message(),
            "unknown flag --colour for 'simulate' (see berth-plan help simulate)");
  EXPECT_EQ(ParseArgs({"--memory"}, Specs(), "sweep").status().message(),
            "--memory needs a value");
  EXPECT_EQ(ParseArgs({"--json=yes"}, Specs(), "sweep").status().message(),
            "--json takes no value");
  EXPECT_EQ(ParseArgs({"--cpus", "1", "--cpus", "2"}, Specs(), "sweep").status().message(),
            "--cpus given more than once");
  EXPECT_EQ(ParseArgs({"-m", "1"}, Specs(), "now").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(ReadBudgetsFile, HumanUnitsAndJson) {
  auto text = ReadBudgetsFile(Write("b.txt",
                                    "# comment\nmemory = 256Gi\ncpus = 1.5\n"
                                    "max-workers = 24   # trailing comment\n"
                                    "pool-max = database=4\nworkspace-max = 8\n"));
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(text->memory_bytes, 256 * kGi);
  EXPECT_EQ(text->cpu_millis, 1500);
  EXPECT_EQ(text->max_workers, 24);
  EXPECT_EQ(text->pool_max_workers.at("database"), 4);
  EXPECT_EQ(text->workspace_max_workers, 8);
  auto json = ReadBudgetsFile(Write(
      "b.json", R"({"memoryBytes":"1073741824","cpuMillis":"2000","maxWorkers":3})"));
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ(json->memory_bytes, kGi);
  EXPECT_EQ(json->max_workers, 3);
}

TEST(ReadBudgetsFile, ErrorsNameFileLineAndKey) {
  std::string p = Write("bad.txt", "memory = 1Gi\n\ncpus = 4 cores\n");
  EXPECT_EQ(ReadBudgetsFile(p).status().message(),
            p + ":3: cpus: \"4 cores\": unknown unit \"cores\" (use cores like 32 or 1.5, "
                "or millicores like 500m)");
  std::string q = Write("bad2.txt", "gpus = 2\n");
  EXPECT_THAT(ReadBudgetsFile(q).status().message(),
              HasSubstr(q + ":1: unknown key \"gpus\""));
  std::string r = Write("bad3.txt", "memory 2Gi\n");
  EXPECT_THAT(ReadBudgetsFile(r).status().message(),
              HasSubstr(r + ":1: expected \"key = value\""));
}

PlanInput InputWithBudgets() {
  PlanInput in;
  in.path = "w.json";
  in.has_file_budgets = true;
  in.file_budgets.memory_bytes = 256 * kGi;
  in.file_budgets.cpu_millis = 32000;
  in.file_budgets.max_workers = 24;
  in.file_budgets.pool_max_workers["database"] = 4;
  return in;
}

TEST(ResolveBudgets, FlagsOverrideTheFileAndListsAreForSweeps) {
  auto args = ParseArgs({"--max-workers", "8,16", "--memory", "128Gi,256Gi",
                         "--pool-max", "database=2,4,gpu=1"},
                        Specs(), "sweep");
  ASSERT_TRUE(args.ok());
  auto c = ResolveBudgets(*args, InputWithBudgets(), true);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_THAT(c->memory, ElementsAre(128 * kGi, 256 * kGi));
  EXPECT_THAT(c->cpu, ElementsAre(32000));
  EXPECT_THAT(c->workers, ElementsAre(8, 16));
  EXPECT_THAT(c->pools, ElementsAre(Pair("database", ElementsAre(2, 4)),
                                    Pair("gpu", ElementsAre(1))));
  EXPECT_EQ(c->combinations(), 8u);
  std::vector<planner::Budgets> all = Combinations(*c);
  ASSERT_EQ(all.size(), 8u);
  EXPECT_EQ(all[0].memory_bytes, 128 * kGi);
  EXPECT_EQ(all[0].max_workers, 8);
  EXPECT_EQ(all[0].pool_max_workers.at("database"), 2);
  EXPECT_EQ(all[1].pool_max_workers.at("database"), 4);
  EXPECT_EQ(all[7].memory_bytes, 256 * kGi);
  EXPECT_EQ(all[7].max_workers, 16);

  EXPECT_THAT(ResolveBudgets(*args, InputWithBudgets(), false).status().message(),
              HasSubstr("comma lists are for 'sweep'"));
}

TEST(ResolveBudgets, MissingAndInvalidBudgets) {
  PlanInput none;
  none.path = "snap.json";
  auto args = ParseArgs({"--memory", "1Gi"}, Specs(), "now");
  EXPECT_EQ(ResolveBudgets(*args, none, false).status().message(),
            "snap.json has no budgets; pass --cpus, --max-workers or --budgets FILE");
  auto zero = ParseArgs({"--cpus", "0"}, Specs(), "now");
  EXPECT_EQ(ResolveBudgets(*zero, InputWithBudgets(), false).status().message(),
            "flags: budgets: cpu must be > 0, got 0m");
  auto twice = ParseArgs({"--max-workers", "8,8"}, Specs(), "sweep");
  EXPECT_THAT(ResolveBudgets(*twice, InputWithBudgets(), true).status().message(),
              HasSubstr("\"8\" is listed twice"));
  auto pool = ParseArgs({"--pool-max", "4"}, Specs(), "now");
  EXPECT_THAT(ResolveBudgets(*pool, InputWithBudgets(), false).status().message(),
              HasSubstr("expected POOL=N"));
}

TEST(ParseNodes, CountTimesSizeAndNodesFile) {
  auto four = ParseNodes("4x64Gi/16");
  ASSERT_TRUE(four.ok()) << four.status();
  ASSERT_EQ(four->size(), 4u);
  EXPECT_EQ((*four)[0].id, "node-1");
  EXPECT_EQ((*four)[3].memory_bytes, 64 * kGi);
  EXPECT_EQ((*four)[3].cpu_millis, 16000);
  EXPECT_EQ(ParseNodes("32Gi/8")->size(), 1u);
  auto file = ParseNodes(Write("nodes.txt",
                               "# id memory cpus\nnode-a 64Gi 16 workers=4\n"
                               "db-1 128Gi 32 pool=database\n"));
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_EQ(file->size(), 2u);
  EXPECT_EQ((*file)[0].max_workers, 4);
  EXPECT_EQ((*file)[1].labels.at("pool"), "database");
  EXPECT_THAT(ParseNodes(Write("bad_nodes.txt", "node-a 64Gi\n")).status().message(),
              HasSubstr("bad_nodes.txt:1"));
  EXPECT_FALSE(ParseNodes("0x64Gi/16").ok());
}

TEST(ResolveBudgets, NodesSweepKeepsTheFilesCapsUnlessFlagsAskForTheSums) {
  auto args = ParseArgs({"--nodes", "2x64Gi/16,3x64Gi/16"}, Specs(), "sweep");
  ASSERT_TRUE(args.ok());
  auto c = ResolveBudgets(*args, InputWithBudgets(), true);
  ASSERT_TRUE(c.ok()) << c.status();
  std::vector<planner::Budgets> combos = Combinations(*c);
  ASSERT_EQ(combos.size(), 2u);
  EXPECT_EQ(combos[0].nodes.size(), 2u);
  EXPECT_EQ(combos[0].memory_bytes, 128 * kGi);  // the file's 256 GiB is above the sum
  EXPECT_EQ(combos[1].cpu_millis, 32000);        // the file's 32 cores cap 48
  EXPECT_EQ(combos[1].max_workers, 24);          // the file's 24 workers
  EXPECT_EQ(NodesLabel(*c, 1), "3x64Gi/16");

  auto sums = ParseArgs({"--nodes", "2x64Gi/16,3x64Gi/16", "--cpus", "0", "--max-workers", "0"},
                        Specs(), "sweep");
  ASSERT_TRUE(sums.ok());
  c = ResolveBudgets(*sums, InputWithBudgets(), true);
  ASSERT_TRUE(c.ok()) << c.status();
  combos = Combinations(*c);
  EXPECT_EQ(combos[1].cpu_millis, 48000);
  EXPECT_EQ(combos[1].max_workers, 48);  // one per core without a slot limit
}

TEST(ResolveBudgets, EachFieldFromTheHighestSourceThatSetsIt) {
  // The --budgets file sets memory and nodes; the input file the rest.
  const std::string budgets = Write(
      "nodes_budgets.json",
      R"({"memoryBytes":"68719476736","nodes":[{"id":"a","memoryBytes":"42949672960","cpuMillis":"8000"},)"
      R"({"id":"b","memoryBytes":"42949672960","cpuMillis":"8000","maxWorkers":2}]})");
  auto args = ParseArgs({"--budgets", budgets, "--max-workers", "5"}, Specs(), "now");
  ASSERT_TRUE(args.ok());
  PlanInput in = InputWithBudgets();
  planner::Node other;
  other.id = "ignored";
  other.memory_bytes = kGi;
  other.cpu_millis = 1000;
  in.file_budgets.nodes.push_back(other);
  auto c = ResolveBudgets(*args, in, false);
  ASSERT_TRUE(c.ok()) << c.status();
  const planner::Budgets b = Combinations(*c).front();
  ASSERT_EQ(b.nodes.size(), 2u);  // the --budgets file's list, whole
  EXPECT_EQ(b.nodes[0].id, "a");
  EXPECT_EQ(b.memory_bytes, 64 * kGi);   // --budgets file
  EXPECT_EQ(b.cpu_millis, 16000);        // the input's 32 cores capped by the nodes' 16
  EXPECT_EQ(b.max_workers, 5);           // flag
  EXPECT_EQ(b.pool_max_workers.at("database"), 4);  // input file
}

}  // namespace
}  // namespace berth::plan
