// What this binary is: Berth's semantic version (//:VERSION), the git commit
// it was built from (Bazel's workspace status; "unknown" outside a git
// checkout, "-dirty" when tracked files had changes) and the build mode.
// berthd, berthctl and berth-plan print it for --version; berthd logs it at
// start and exports it as the berth_build_info gauge. Thread-safe constants.
#ifndef BERTH_PLANNER_BASE_BUILD_INFO_H_
#define BERTH_PLANNER_BASE_BUILD_INFO_H_

#include <string>

namespace berth {

struct BuildInfo {
  std::string version;  // "0.10.0"
  std::string commit;   // "a71799c3f1e2" or "a71799c3f1e2-dirty" or "unknown"
  // Bazel's compilation mode and whether assertions are compiled out:
  // "opt" (NDEBUG), "fastbuild", "dbg".
  std::string mode;
};

const BuildInfo& GetBuildInfo();

// "<program> <version> (commit <commit>, <mode> build)".
std::string VersionLine(const std::string& program);

}  // namespace berth

#endif  // BERTH_PLANNER_BASE_BUILD_INFO_H_
