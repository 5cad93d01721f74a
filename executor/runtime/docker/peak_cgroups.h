// PeakCgroups: a parent cgroup per job container (Docker's
// HostConfig.CgroupParent, cgroupfs driver), so that the kernel's memory
// high-water mark of the container's whole life can be read after it exits.
//
// Docker removes a container's own cgroup when its process ends, before any
// exit event, so the mark of a short job is gone before anything can read
// it. A parent that Berth owns survives: the kernel charges the container's
// memory hierarchically, so the parent's mark (cgroup v1
// memory.max_usage_in_bytes, v2 memory.peak) is at least the container's,
// and with one container per parent it is that container's. The parent of
// container NAME is "<group>/<NAME>" in every hierarchy (Docker's runc
// creates it at the start); Berth reads its mark when the job's run is
// recorded and removes it with the container.
//
// Only for a local engine with the cgroupfs driver (the systemd driver
// wants slices: not used, marks then come from sampling).
//
// Thread-safe (no mutable state; each call touches one container's group).
#ifndef BERTH_EXECUTOR_RUNTIME_DOCKER_PEAK_CGROUPS_H_
#define BERTH_EXECUTOR_RUNTIME_DOCKER_PEAK_CGROUPS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace berth {

class PeakCgroups {
 public:
  // `root`: where the hierarchies are mounted ("/sys/fs/cgroup"); `group`:
  // one path component ("berth-peak").
  PeakCgroups(std::string root, std::string group);

  // The group of container `name` relative to a hierarchy: "<group>/<name>".
  std::string RelativeOf(absl::string_view name) const;
  // Its HostConfig.CgroupParent: "/<group>/<name>".
  std::string ParentOf(absl::string_view name) const;

  // The kernel's high-water mark of the group of `name`, in bytes: v1
  // memory/<rel>/memory.max_usage_in_bytes, else v2 <rel>/memory.peak.
  // NOT_FOUND if neither exists (no such group, or v2 before Linux 5.19);
  // DATA_LOSS if the file does not hold a count.
  [[nodiscard]] absl::StatusOr<int64_t> Peak(absl::string_view name) const;

  // Removes the group of `name` from every hierarchy (rmdir: only an empty
  // group goes; one whose container still runs stays). OK if there was
  // none; INTERNAL naming the first directory that could not be removed.
  // Called before a container of that name is created (a group left by an
  // earlier run would carry its mark) and after it is removed.
  [[nodiscard]] absl::Status Remove(absl::string_view name) const;

 private:
  const std::string root_;
  const std::string group_;
};

}  // namespace berth

#endif  // BERTH_EXECUTOR_RUNTIME_DOCKER_PEAK_CGROUPS_H_
