#include "tools/plan/examples_gen.h"

#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/files/snapshot_files.h"

namespace berth::plan {
namespace {

constexpr int64_t kGi = int64_t{1} << 30;

// The committed files are exactly what the seeded generator writes. If this
// fails after a deliberate change to the generator, regenerate with
//   bazel run //tools/plan:gen_examples -- $PWD/examples
TEST(ExamplesGen, CommittedFilesAreByteIdenticalToTheGenerator) {
  auto files = ExampleFiles();
  ASSERT_TRUE(files.ok()) << files.status();
  ASSERT_EQ(files->size(), 3u);
  for (const ExampleFile& f : *files) {
    auto committed = ReadFileToString("examples/" + f.name);
    ASSERT_TRUE(committed.ok()) << committed.status();
    EXPECT_TRUE(*committed == f.contents)
        << "examples/" << f.name << " differs from the generator's output";
  }
}

TEST(ExamplesGen, SameSeedSameBytesOtherSeedOtherBytes) {
  auto a = WorkloadToJsonLines(MixedWeekWorkload(7, 300, 20));
  auto b = WorkloadToJsonLines(MixedWeekWorkload(7, 300, 20));
  auto c = WorkloadToJsonLines(MixedWeekWorkload(8, 300, 20));
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_NE(*a, *c);
}

TEST(ExamplesGen, BurstHasThreeProjectsOfFortyFourGibJobsPlusBackground) {
  auto w = ReadWorkloadFile("examples/burst.json");
  ASSERT_TRUE(w.ok()) << w.status();
  int burst = 0, background = 0;
  for (const auto& j : w->jobs()) {
    const std::string& ws = j.spec().workspace();
    if (ws == "proj-a" || ws == "proj-b" || ws == "proj-c") {
      ++burst;
      EXPECT_EQ(j.spec().resources().memory_bytes(), 4 * kGi);
    } else {
      ++background;
    }
  }
  EXPECT_EQ(burst, 120);
  EXPECT_GE(background, 20);
  EXPECT_EQ(w->budgets().memory_bytes(), 256 * kGi);
  EXPECT_EQ(w->budgets().max_workers(), 24);
  EXPECT_EQ(w->running_size(), 2);
}

TEST(ExamplesGen, WeekIsLargeMixedWithDatabasePoolAndChains) {
  auto w = ReadWorkloadFile("examples/week.json");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_GE(w->jobs_size(), 2000);
  std::set<std::string> workspaces;
  int database = 0, with_deps = 0, differing = 0, fails = 0;
  for (const auto& j : w->jobs()) {
    workspaces.insert(j.spec().workspace());
    if (j.spec().pool() == "database") ++database;
    if (j.spec().depends_on_size() > 0) ++with_deps;
    if (j.has_actual_duration()) ++differing;
    if (j.fails()) ++fails;
  }
  EXPECT_GE(workspaces.size(), 50u);
  double db_share = static_cast<double>(database) / w->jobs_size();
  EXPECT_GT(db_share, 0.07);
  EXPECT_LT(db_share, 0.13);
  EXPECT_GT(with_deps, 200);
  EXPECT_GT(differing, 1000);
  EXPECT_GT(fails, 10);
  EXPECT_EQ(w->budgets().pools().at("database").max_workers(), 4);
}

TEST(ExamplesGen, StarvationHasOneBigJobBehindHundredsOfSmallOnes) {
  auto w = ReadWorkloadFile("examples/starvation.json");
  ASSERT_TRUE(w.ok()) << w.status();
  int big = 0, small_before_big = 0;
  bool seen_big = false;
  for (const auto& j : w->jobs()) {
    if (j.spec().resources().memory_bytes() * 4 > w->budgets().memory_bytes() * 3) {
      ++big;
      seen_big = true;
    } else if (!seen_big) {
      ++small_before_big;
    }
  }
  EXPECT_EQ(big, 1);
  EXPECT_GE(small_before_big, 10);
  EXPECT_GE(w->jobs_size(), 300);
}

}  // namespace
}  // namespace berth::plan
