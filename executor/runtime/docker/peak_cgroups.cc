#include "executor/runtime/docker/peak_cgroups.h"

#include <dirent.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "executor/runtime/docker/cgroup_usage.h"
#include "planner/base/proto_json.h"

namespace berth {
namespace {

// The directories directly under `dir` ("." and ".." left out).
std::vector<std::string> SubDirs(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return out;
  while (struct dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    if (e->d_type == DT_DIR || e->d_type == DT_LNK || e->d_type == DT_UNKNOWN) out.push_back(n);
  }
  closedir(d);
  return out;
}

}  // namespace

PeakCgroups::PeakCgroups(std::string root, std::string group)
    : root_(std::move(root)), group_(std::move(group)) {}

std::string PeakCgroups::RelativeOf(absl::string_view name) const {
  return absl::StrCat(group_, "/", name);
}

std::string PeakCgroups::ParentOf(absl::string_view name) const {
  return absl::StrCat("/", RelativeOf(name));
}

absl::StatusOr<int64_t> PeakCgroups::Peak(absl::string_view name) const {
  const std::string rel = RelativeOf(name);
  absl::StatusOr<int64_t> v1 =
      ReadCgroupCount(absl::StrCat(root_, "/memory/", rel, "/memory.max_usage_in_bytes"));
  if (v1.status().code() != absl::StatusCode::kNotFound) return v1;
  absl::StatusOr<int64_t> v2 = ReadCgroupCount(absl::StrCat(root_, "/", rel, "/memory.peak"));
  if (v2.status().code() != absl::StatusCode::kNotFound) return v2;
  return absl::NotFoundError(absl::StrCat("no peak cgroup ", rel, " under ", root_));
}

absl::Status PeakCgroups::Remove(absl::string_view name) const {
  const std::string rel = RelativeOf(name);
  // v2: one hierarchy at the root; v1: one per controller directory.
  std::vector<std::string> dirs = {absl::StrCat(root_, "/", rel)};
  for (const std::string& h : SubDirs(root_)) dirs.push_back(absl::StrCat(root_, "/", h, "/", rel));
  for (const std::string& dir : dirs) {
    if (rmdir(dir.c_str()) != 0 && errno != ENOENT && errno != ENOTDIR) {
      return absl::InternalError(absl::StrCat(dir, ": cannot remove: ", std::strerror(errno)));
    }
  }
  return absl::OkStatus();
}

}  // namespace berth
