// berth-load measures a fresh berthd (--berthd) only once its reconcile
// pass reaches dockerd: without a runtime berthd serves, but its pass never
// plans, so its CPU and memory would leave out the planner state the pass
// keeps (a quarter of a 1M berthd's peak), and nothing would say so.
#include <cstdlib>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tools/base/subprocess.h"

namespace berth {
namespace {

constexpr char kFlags[] = "--allowed_images=berth-test/* --memory=64Gi --cpus=16 --max_workers=8";

ProcessResult RunLoad(const std::string& berthd_flags) {
  absl::StatusOr<std::unique_ptr<Subprocess>> p = Subprocess::Start({
      "tools/berth-load",
      "--berthd=server/berthd",
      absl::StrCat("--berthd_flags=", berthd_flags),
      absl::StrCat("--work_dir=", std::getenv("TEST_TMPDIR")),
      "--jobs=1000",
      "--batch=500",
      "--readers=0",
      "--duration=1s",
      "--runtime_timeout=5s",
  });
  if (!p.ok()) return ProcessResult{-1, "", p.status().ToString()};
  return (*p)->Wait(absl::Minutes(3));
}

TEST(BerthLoadTest, MeasuresABerthdWhosePassReachesDockerd) {
  const ProcessResult r = RunLoad(kFlags);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "first sync (1000 new jobs)")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "VmHWM")) << r.out;
}

TEST(BerthLoadTest, RefusesToMeasureABerthdWithoutItsRuntime) {
  const ProcessResult r =
      RunLoad(absl::StrCat(kFlags, " --docker=unix://", std::getenv("TEST_TMPDIR"), "/no.sock"));
  EXPECT_NE(r.exit_code, 0) << r.out << r.err;
  const std::string all = r.out + r.err;
  EXPECT_TRUE(absl::StrContains(all, "berthd's runtime is not up")) << all;
  EXPECT_TRUE(absl::StrContains(all, "berth_runtime_up 0")) << all;
  // No figure is printed for it.
  EXPECT_FALSE(absl::StrContains(all, "first sync (")) << all;
}

}  // namespace
}  // namespace berth
