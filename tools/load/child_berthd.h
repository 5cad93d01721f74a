// ChildBerthd: a fresh berthd started by berth-load itself (--berthd), so
// that every measured case runs against a new process and data directory
// (docs/BENCHMARKS.md "berthd sync"), and so that
// the time to reopen its store after a restart can be measured.
//
// The child gets a free loopback port, its own data directory and token file
// under a new temporary directory (removed by the destructor), a metrics
// port of its own (unless `flags` set --metrics_listen), and `flags`
// (budgets, allowed images, ...). Its output goes to <dir>/berthd.log.
//
// Not thread-safe (one driver thread).
#ifndef BERTH_TOOLS_LOAD_CHILD_BERTHD_H_
#define BERTH_TOOLS_LOAD_CHILD_BERTHD_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace berth {

struct ChildBerthdOptions {
  // Path of the berthd binary. Required.
  std::string binary;
  // Extra flags, each "--name=value".
  std::vector<std::string> flags;
  // The tokens written to the child's token file (roles pusher, operator).
  std::string pusher_token;
  std::string operator_token;
  // Parent directory of the temporary directory.
  std::string work_dir = "/tmp";
  // How long Start/Restart wait for the Executor service to answer.
  absl::Duration ready_timeout = absl::Minutes(5);
  // Start also waits until a reconcile pass has reached the runtime
  // (berth_runtime_up 1 on its /metrics): without one berthd serves, but
  // its pass never plans, and what is measured is not berthd as it runs
  // (at 1M jobs the planner state the pass keeps is a quarter of its
  // memory).
  bool require_runtime = true;
  absl::Duration runtime_timeout = absl::Seconds(15);
};

class ChildBerthd {
 public:
  // Starts berthd and waits until GetBudgets answers OK (the store's meta
  // read) and, with require_runtime, until berth_runtime_up is 1.
  // FAILED_PRECONDITION with the log's tail if the child exits first or its
  // runtime is not up within runtime_timeout; DEADLINE_EXCEEDED after
  // ready_timeout.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<ChildBerthd>> Start(
      ChildBerthdOptions options);
  // SIGTERM, wait, and remove the temporary directory.
  ~ChildBerthd();

  // The times from a restarted process's start until it serves.
  struct Reopen {
    // Its first OK GetBudgets: the Executor serves (the meta is read; the
    // jobs may still be loading, GetJob answers from RocksDB meanwhile).
    absl::Duration serving;
    // Its first OK ListJobs, which waits for the jobs to be in memory:
    // every read and write is served.
    absl::Duration loaded;
  };
  // Stops the child (SIGTERM, waits for its exit: a clean shutdown) and
  // starts a new one on the same data directory.
  [[nodiscard]] absl::StatusOr<Reopen> Restart();

  std::string target() const { return target_; }
  // Its /metrics address (host:port), or "" if --metrics_listen turned
  // them off.
  std::string metrics() const { return metrics_; }
  pid_t pid() const { return pid_; }
  std::string data_dir() const { return dir_ + "/data"; }

 private:
  explicit ChildBerthd(ChildBerthdOptions options) : options_(std::move(options)) {}
  absl::Status Spawn();
  absl::Status WaitReady();
  absl::Status WaitRuntimeUp();
  // FAILED_PRECONDITION with its log's tail if the child has exited (reaped
  // here), else OK.
  absl::Status CheckRunning(absl::string_view before);
  void Stop();

  const ChildBerthdOptions options_;
  std::string dir_;
  std::string target_;
  std::string metrics_;
  pid_t pid_ = 0;
};

}  // namespace berth

#endif  // BERTH_TOOLS_LOAD_CHILD_BERTHD_H_
