// Running other binaries (berthctl, python3, berth-plan) from tests and
// tools: argv, extra environment, stdout and stderr captured in files (no
// pipe deadlocks; under $TEST_TMPDIR, else /tmp, removed with the
// Subprocess), waited for with a deadline.
//
// Not thread-safe (one thread drives each Subprocess).
#ifndef BERTH_TOOLS_BASE_SUBPROCESS_H_
#define BERTH_TOOLS_BASE_SUBPROCESS_H_

#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace berth {

// A temporary directory: $TEST_TMPDIR (Bazel's, in a test), else /tmp.
std::string TmpDir();

struct ProcessResult {
  // The exit code; 128+N if killed by signal N; -1 if it timed out (then killed).
  int exit_code = -1;
  std::string out;
  std::string err;
};

// A child process. The destructor kills (SIGKILL) and reaps it if still
// running, and removes its output files.
class Subprocess {
 public:
  // Starts argv[0] (a path) with the current environment plus `env`
  // (a value of "\x01unset" removes the variable). INTERNAL if fork/exec fails.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<Subprocess>> Start(
      const std::vector<std::string>& argv, const std::map<std::string, std::string>& env = {});
  ~Subprocess();

  // Waits until it exits or `timeout` passes (then SIGKILL); the result
  // carries everything it wrote.
  ProcessResult Wait(absl::Duration timeout);
  // What it has written to stdout so far.
  std::string Stdout() const;
  // What it has written to stderr so far.
  std::string Stderr() const;
  // True until the child exits (then reaps it: a later Wait returns at once
  // with its exit code).
  bool Running();
  void Signal(int sig);
  pid_t pid() const { return pid_; }

 private:
  Subprocess() = default;
  pid_t pid_ = -1;
  int exit_code_ = -1;  // once reaped by Running()
  std::string out_path_;
  std::string err_path_;
};

// Start + Wait.
ProcessResult RunProcess(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env = {},
                         absl::Duration timeout = absl::Seconds(60));

// Waits until `condition()` is true, checking every 50 ms; false at the deadline.
bool WaitFor(const std::function<bool()>& condition, absl::Duration timeout);

}  // namespace berth

#endif  // BERTH_TOOLS_BASE_SUBPROCESS_H_
