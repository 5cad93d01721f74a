#include "server/core/budget_checks.h"

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kGiB = int64_t{1} << 30;

TEST(BudgetChecksTest, BudgetsBelowTheSmallestJobAreRefusedNamingTheField) {
  EXPECT_TRUE(CheckBudgetsCanRunAJob(6 * kMiB, 10, "memory", "cpus").ok());
  absl::Status s = CheckBudgetsCanRunAJob(1, 1000, "memory", "cpus");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(s.message(), "memory: 1 B is below")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "6 MiB")) << s;
  s = CheckBudgetsCanRunAJob(kGiB, 1, "budgets.memory_bytes", "budgets.cpu_millis");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StartsWith(s.message(), "budgets.cpu_millis: 0.001 cores is below")) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "0.01 cores")) << s;
}

TEST(BudgetChecksTest, BudgetsAboveTheEngineAreWarnedAbout) {
  v1::Budgets b;
  b.set_memory_bytes(256 * kGiB);
  b.set_cpu_millis(32000);
  EXPECT_TRUE(BudgetsAboveEngine(b, EngineSize()).empty()) << "unknown engine: no warning";
  std::vector<std::string> w = BudgetsAboveEngine(b, {23 * kGiB, 2000});
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0],
            "memory_bytes 256 GiB is more than the engine's 23 GiB (docker info MemTotal): "
            "jobs admitted on it may not fit");
  EXPECT_TRUE(absl::StartsWith(w[1], "cpu_millis 32 cores is more than the engine's 2 cores"))
      << w[1];
  b.set_memory_bytes(23 * kGiB);
  b.set_cpu_millis(2000);
  EXPECT_TRUE(BudgetsAboveEngine(b, {23 * kGiB, 2000}).empty());
}

}  // namespace
}  // namespace berth
