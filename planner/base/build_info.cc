#include "planner/base/build_info.h"

#include "absl/strings/str_cat.h"

namespace berth {
namespace build_info_internal {
// Defined by the generated source (tools/bazel/build_info.bzl).
extern const char kVersion[];
extern const char kCommit[];
extern const char kMode[];
}  // namespace build_info_internal

const BuildInfo& GetBuildInfo() {
  static const BuildInfo* info = [] {
    auto* i = new BuildInfo;
    i->version = build_info_internal::kVersion;
    i->commit = build_info_internal::kCommit;
    i->mode = build_info_internal::kMode;
#ifdef NDEBUG
    if (i->mode != "opt") absl::StrAppend(&i->mode, ", NDEBUG");
#endif
    return i;
  }();
  return *info;
}

std::string VersionLine(const std::string& program) {
  const BuildInfo& i = GetBuildInfo();
  return absl::StrCat(program, " ", i.version, " (commit ", i.commit, ", ", i.mode, " build)");
}

}  // namespace berth
