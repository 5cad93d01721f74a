// ChildBerthd: a fresh berthd started by berth-load itself (--berthd), so
// that every measured case runs against a new process and data directory
// (docs/BENCHMARKS.md "berthd sync"), and so that
// the time to reopen its store after a restart can be measured.
//
// The child gets a free loopback port, its own data directory and token file
// under a new temporary directory (removed by the destructor), no metrics
// port, and `flags` (budgets, allowed images, ...). Its output goes to
// <dir>/berthd.log.
//
// Not thread-safe (one driver thread).
#ifndef BERTH_TOOLS_LOAD_CHILD_BERTHD_H_
#define BERTH_TOOLS_LOAD_CHILD_BERTHD_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
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
};

class ChildBerthd {
 public:
  // Starts berthd and waits until GetBudgets answers OK (store loaded,
  // runtime connected). FAILED_PRECONDITION with the log's tail if the child
  // exits first; DEADLINE_EXCEEDED after ready_timeout.
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
  pid_t pid() const { return pid_; }
  std::string data_dir() const { return dir_ + "/data"; }

 private:
  explicit ChildBerthd(ChildBerthdOptions options) : options_(std::move(options)) {}
  absl::Status Spawn();
  absl::Status WaitReady();
  void Stop();

  const ChildBerthdOptions options_;
  std::string dir_;
  std::string target_;
  pid_t pid_ = 0;
};

}  // namespace berth

#endif  // BERTH_TOOLS_LOAD_CHILD_BERTHD_H_
