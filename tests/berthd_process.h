// BerthdProcess: runs the real berthd binary for integration tests — its own
// data dir (RocksDB), token file, free loopback ports and a unique Docker
// instance label — and talks to it over real gRPC.
//
//   auto berthd = BerthdProcess::Start({.memory = "512Mi"});
//   auto client = (*berthd)->Client(Role::kPusher);
//
// Not thread-safe (one test thread drives it).
#ifndef BERTH_TESTS_BERTHD_PROCESS_H_
#define BERTH_TESTS_BERTHD_PROCESS_H_

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/api/auth.h"
#include "tools/client/client.h"

namespace berth {

struct BerthdProcessOptions {
  // Budgets (berthd flags).
  std::string memory = "1Gi";
  std::string cpus = "2";
  int max_workers = 8;
  std::string pool_max = "database=2";
  std::string tick = "500ms";
  std::string stop_grace = "2s";
  // More flags, "--name=value".
  std::vector<std::string> extra_flags;
  // Environment for the child (e.g. BERTH_CRASH_POINT).
  std::map<std::string, std::string> env;
  // Reuse this data dir (a restart); empty = a fresh one under TEST_TMPDIR.
  std::string data_dir;
  // Reuse this instance label; empty = a unique one.
  std::string instance;
};

// The tokens every BerthdProcess accepts.
std::string TokenFor(Role role);

class BerthdProcess {
 public:
  // Starts berthd and waits (up to 30 s) until its health service answers
  // SERVING. FAILED_PRECONDITION with the tail of its log if it exits.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<BerthdProcess>> Start(
      BerthdProcessOptions options);

  // SIGTERM and wait; removes this instance's containers.
  ~BerthdProcess();

  // A client with the token of `role` ("" for none, e.g. wrong tokens).
  std::unique_ptr<BerthClient> Client(Role role) const;
  std::unique_ptr<BerthClient> ClientWithToken(const std::string& token) const;

  // kill -9 and reap. Returns the raw wait status.
  int Kill9();
  // SIGTERM (a graceful stop) and wait up to `timeout`. Returns the raw wait
  // status, or -1 on timeout (the process is left running).
  int Terminate(absl::Duration timeout);
  // Waits for the process to exit on its own (e.g. a crash point), up to
  // `timeout`. Returns the raw wait status, or -1 on timeout.
  int WaitExit(absl::Duration timeout);
  bool Running();
  // Starts berthd again on the same data dir, instance and port.
  [[nodiscard]] absl::Status Restart(std::map<std::string, std::string> env = {});

  int port() const { return port_; }
  // The running berthd's process id (-1 when not running).
  pid_t pid() const { return pid_; }
  int metrics_port() const { return metrics_port_; }
  const std::string& instance() const { return options_.instance; }
  const std::string& data_dir() const { return options_.data_dir; }
  // The --token_file (mode 0600, TokenFor's three tokens until rewritten).
  const std::string& token_file() const { return token_file_; }
  std::string target() const;
  // The whole stderr log of every run so far.
  std::string Log() const;
  // GET /metrics.
  absl::StatusOr<std::string> Metrics() const;

 private:
  explicit BerthdProcess(BerthdProcessOptions options) : options_(std::move(options)) {}
  absl::Status Spawn(const std::map<std::string, std::string>& env);
  absl::Status AwaitServing(absl::Duration timeout);

  BerthdProcessOptions options_;
  std::string token_file_;
  std::string log_file_;
  int port_ = 0;
  int metrics_port_ = 0;
  pid_t pid_ = -1;
};

// A free TCP port on 127.0.0.1 (bound and released; racy but fine for tests).
int PickFreePort();

// Removes every container labelled berth.instance=`instance` (test cleanup).
void RemoveInstanceContainers(const std::string& instance);

// A prefix that makes job ids unique across concurrent test runs on one
// Docker host ("r1234abcd-"): container names ("berth-<job id>") are
// host-wide, whatever the instance label, and pids repeat across sandboxes.
std::string UniqueJobPrefix();

// Polls ExplainJob until a plan has decided the job (a verdict: a job
// queued after the plan the server read is "not planned yet", by contract);
// DEADLINE_EXCEEDED otherwise.
absl::StatusOr<v1::Explanation> WaitPlanned(BerthClient& c, const std::string& id,
                                            absl::Duration timeout);

// A busybox job for the real Docker engine.
v1::JobSpec BusyboxJob(const std::string& id, const std::string& workspace,
                       int64_t memory_bytes, const std::string& shell);

}  // namespace berth

#endif  // BERTH_TESTS_BERTHD_PROCESS_H_
