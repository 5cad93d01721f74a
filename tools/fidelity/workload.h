// The fidelity workload: `jobs` sleep jobs from three projects
// of priority 1 (proj-a, proj-b, proj-c) plus background work of priority
// 0, durations uniform in 1-10 simulated minutes (background 10-20) scaled
// to `scale` seconds per minute, all created at one instant.
//
// Deterministic: the same seed gives the same jobs (ids up to the run's tag,
// durations, resources) as the Python tool it replaces did, number for
// number (PyRandom is CPython's generator, called in the same order).
//
// Thread-compatible: free functions over their arguments.
#ifndef BERTH_TOOLS_FIDELITY_WORKLOAD_H_
#define BERTH_TOOLS_FIDELITY_WORKLOAD_H_

#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "berth/v1/files.pb.h"

namespace berth::fidelity {

struct WorkloadOptions {
  // Number of jobs (ids <workspace>.<index, 3 digits>.<tag>).
  int jobs = 60;
  // Seconds of real time per simulated minute (durations are rounded to ms).
  double scale = 0.5;
  // Seed of the generator (as Python's random.Random(seed)).
  uint64_t seed = 1;
  // Suffix of every job id, unique per run: container names are
  // berth-<job id>, so concurrent runs never meet.
  std::string tag;
  // Every job's created_at (aging is off in the comparison, so one instant
  // makes berthd and the simulation rank alike).
  absl::Time created = absl::UnixEpoch();
  // The image the sleep jobs run (tools/setup.sh builds it).
  std::string image = "berth-test/busybox:1";
};

// Generation 1, the jobs in index order. Each job: action "run", argv
// {"sleep", <seconds as Python prints them, e.g. "5.1", "3.0">},
// expected_duration those seconds, max_duration round(10 x + 60) s,
// cpu_millis one of 250/500/1000, memory one of 64/96/128/192/256 MiB.
v1::Snapshot GenerateWorkload(const WorkloadOptions& options);

// `value` as Python's repr(float) prints it for values in [1e-4, 1e16):
// the shortest decimal that reads back as the same double, with at least
// one digit after the point ("5.0", "0.25", "12.345").
std::string PythonFloatRepr(double value);

}  // namespace berth::fidelity

#endif  // BERTH_TOOLS_FIDELITY_WORKLOAD_H_
