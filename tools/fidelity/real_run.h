// The real half of berth-fidelity: runs the workload on a fresh berthd
// against the host's dockerd and keeps the run in a directory
// (tools/fidelity/kept_run.h lists the files).
//
// berthd gets 127.0.0.1 on a random even port (metrics on the next one), its
// own data dir and token file in the run's directory, a container label
// (--instance) unique to the run, budgets 1 GiB / 2 cores / 24 workers, a
// 500 ms tick and aging off. The snapshot is pushed and the jobs listed with
// berthctl (the operator's path); container exits are read from Docker's
// events (the Engine API, filtered by the run's label), subscribed before
// berthd starts.
//
// Not thread-safe (one call at a time drives a run).
#ifndef BERTH_TOOLS_FIDELITY_REAL_RUN_H_
#define BERTH_TOOLS_FIDELITY_REAL_RUN_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tools/fidelity/kept_run.h"
#include "tools/fidelity/workload.h"

namespace berth::fidelity {

struct RealRunOptions {
  // Paths of the berthd and berthctl binaries. Required.
  std::string berthd;
  std::string berthctl;
  // The run's directory, created (with parents); it must not exist. Empty: a
  // new temporary directory berth-fidelity.XXXXXX under $TMPDIR (else /tmp).
  std::string dir;
  // jobs, scale and seed of the workload (tag and created are set per run).
  WorkloadOptions workload;
  // The Docker Engine berthd uses (its default).
  std::string docker_url = "unix:///var/run/docker.sock";
  // How long berthd may take to answer after it starts.
  absl::Duration ready_timeout = absl::Seconds(60);
};

// Runs the workload and returns the kept run; *dir_out gets the directory
// (also on failure, once it exists). Errors: ALREADY_EXISTS if options.dir
// exists; UNAVAILABLE "berthd did not come up: <its log's tail>";
// UNAVAILABLE "push failed: ..."; DEADLINE_EXCEEDED "jobs did not finish in
// time" (60 s + 40 s x scale x jobs after the push); INTERNAL for file
// errors. berthd is stopped (SIGTERM, then waited for) on every path.
[[nodiscard]] absl::StatusOr<KeptRun> RunReal(const RealRunOptions& options,
                                             std::string* dir_out);

}  // namespace berth::fidelity

#endif  // BERTH_TOOLS_FIDELITY_REAL_RUN_H_
