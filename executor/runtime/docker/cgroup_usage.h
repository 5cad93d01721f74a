// CgroupUsage: reads what the local Docker engine's containers use from their
// cgroup files, in one sweep and without an engine call (the memory and CPU
// behind Job.observed, docs/api-cookbook.md "Observed usage").
//
// A container's cgroup is found from its id alone (the bulk list has it):
// the first of these layouts that exists, under `root`, is used, and
// remembered for the next containers:
//   cgroup v1, cgroupfs driver   memory/docker/<id>, cpuacct/docker/<id>
//   cgroup v1, systemd driver    memory/system.slice/docker-<id>.scope, ...
//   cgroup v2, cgroupfs driver   docker/<id>
//   cgroup v2, systemd driver    system.slice/docker-<id>.scope
// Files: v1 memory.usage_in_bytes, memory.max_usage_in_bytes (the kernel's
// high-water mark), cpuacct.usage (ns); v2 memory.current, memory.peak (Linux
// >= 5.19; absent before: the peak is then the largest sampled value),
// cpu.stat usage_usec. A cgroup exists only while its container runs: an
// exited container has none, so the last sample before the exit is what is
// known of it.
//
// Thread-safe.
#ifndef BERTH_EXECUTOR_RUNTIME_DOCKER_CGROUP_USAGE_H_
#define BERTH_EXECUTOR_RUNTIME_DOCKER_CGROUP_USAGE_H_

#include <atomic>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "executor/runtime/runtime.h"

namespace berth {

struct CgroupUsageOptions {
  // Where the cgroup hierarchies are mounted. Default "/sys/fs/cgroup"; tests
  // point it at a directory tree of their own.
  std::string root = "/sys/fs/cgroup";
};

class CgroupUsage {
 public:
  explicit CgroupUsage(CgroupUsageOptions options);

  // The use of container `container_id` (Docker's full 64-hex id). A
  // non-empty `parent` (a cgroup path relative to each hierarchy, the
  // container's HostConfig.CgroupParent: peak_cgroups.h) is tried first:
  // <parent>/<id> in v1's memory hierarchy, then in v2's.
  // Errors: NOT_FOUND when no layout has a cgroup of it (it exited, or the
  // engine is not local); INVALID_ARGUMENT for an id that is not 1-128
  // characters of [0-9a-f]; DATA_LOSS when a file does not parse.
  [[nodiscard]] absl::StatusOr<UsageSample> Read(absl::string_view container_id,
                                                 absl::string_view parent = "") const;

  // Read() of every running container of `containers` (keyed by job id),
  // with parent_of(job id) as its parent when parent_of is set; containers
  // that cannot be read are left out.
  UsageSamples Sweep(const ContainerList& containers,
                     const std::function<std::string(const std::string& job_id)>& parent_of =
                         nullptr) const;

 private:
  const CgroupUsageOptions options_;
  // Index of the layout that last matched (a hint: tried first).
  mutable std::atomic<int> layout_{0};
};

// A cgroup file holding one count (bytes, nanoseconds): DATA_LOSS naming the
// file when it holds anything else.
absl::StatusOr<int64_t> ReadCgroupCount(const std::string& path);

}  // namespace berth

#endif  // BERTH_EXECUTOR_RUNTIME_DOCKER_CGROUP_USAGE_H_
