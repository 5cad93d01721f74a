// Which build is running: berthd, berthctl and berth-plan
// (and berth-load) print the same "<program> <version> (commit <commit>, <mode> build)" line
// for --version, and a live berthd exports it as berth_build_info.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "planner/base/build_info.h"
#include "tests/berthd_process.h"
#include "tools/base/subprocess.h"

namespace berth {
namespace {

std::string VersionOf(const std::string& binary) {
  absl::StatusOr<std::unique_ptr<Subprocess>> p = Subprocess::Start({binary, "--version"});
  if (!p.ok()) return p.status().ToString();
  ProcessResult r = (*p)->Wait(absl::Seconds(30));
  return absl::StrCat("exit ", r.exit_code, ": ", r.out);
}

TEST(BerthdVersionTest, EveryBinaryPrintsTheBuild) {
  EXPECT_EQ(VersionOf("server/berthd"), absl::StrCat("exit 0: ", VersionLine("berthd"), "\n"));
  EXPECT_EQ(VersionOf("tools/berthctl"), absl::StrCat("exit 0: ", VersionLine("berthctl"), "\n"));
  EXPECT_EQ(VersionOf("tools/berth-plan"),
            absl::StrCat("exit 0: ", VersionLine("berth-plan"), "\n"));
  // It said absl's "Debug build (NDEBUG not #defined)" whatever the build.
  EXPECT_EQ(VersionOf("tools/berth-load"),
            absl::StrCat("exit 0: ", VersionLine("berth-load"), "\n"));
  EXPECT_FALSE(absl::StrContains(VersionLine("x"), "unknown"))
      << "built outside a git checkout? " << VersionLine("x");
}

TEST(BerthdVersionTest, ALiveBerthdExportsItsBuild) {
  absl::StatusOr<std::unique_ptr<BerthdProcess>> started = BerthdProcess::Start({});
  ASSERT_TRUE(started.ok()) << started.status();
  absl::StatusOr<std::string> page = (*started)->Metrics();
  ASSERT_TRUE(page.ok()) << page.status();
  const BuildInfo& b = GetBuildInfo();
  const std::string line = absl::StrCat("berth_build_info{version=\"", b.version, "\",commit=\"",
                                        b.commit, "\",mode=\"", b.mode, "\"} 1\n");
  EXPECT_TRUE(absl::StrContains(*page, line)) << line << " not in:\n" << *page;
}

}  // namespace
}  // namespace berth
