#include "planner/base/build_info.h"

#include <regex>

#include "gtest/gtest.h"

namespace berth {
namespace {

TEST(BuildInfoTest, VersionCommitAndModeAreFilledIn) {
  const BuildInfo& i = GetBuildInfo();
  EXPECT_TRUE(std::regex_match(i.version, std::regex(R"(\d+\.\d+\.\d+)"))) << i.version;
  // A commit hash (optionally -dirty) from a git checkout, else "unknown".
  EXPECT_TRUE(std::regex_match(i.commit, std::regex(R"(([0-9a-f]{7,40}(-dirty)?)|unknown)")))
      << i.commit;
  EXPECT_TRUE(i.mode.rfind("fastbuild", 0) == 0 || i.mode.rfind("opt", 0) == 0 ||
              i.mode.rfind("dbg", 0) == 0)
      << i.mode;
  EXPECT_EQ(VersionLine("berthd"),
            "berthd " + i.version + " (commit " + i.commit + ", " + i.mode + " build)");
}

}  // namespace
}  // namespace berth
