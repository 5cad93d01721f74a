// Seeded generators of the example workloads in examples/ (see
// examples/README.md). The same seed always gives the same workload, byte
// for byte, on any machine this project builds on: the generators use their
// own PRNG (SplitMix64), not <random>'s implementation-defined
// distributions, and round every duration to whole seconds.
//
// Thread-compatible; no global state.
#ifndef BERTH_TOOLS_PLAN_EXAMPLES_GEN_H_
#define BERTH_TOOLS_PLAN_EXAMPLES_GEN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "berth/v1/files.pb.h"

namespace berth {
namespace plan {

// (a) A highly parallel burst: 3 projects x 40 jobs x 4 GiB arriving within
// minutes, plus background jobs of mixed sizes (some 16-48 GiB) over two hours
// and two jobs already running at the start.
v1::Workload BurstWorkload(uint64_t seed);

// (b) A mixed week: at least `min_jobs` jobs from `workspaces` workspaces
// arriving over `days` days (busier in working hours, quieter at weekends),
// log-normal durations (estimates and actual durations differ), 10% in the
// "database" pool, dependency chains of 2-5 jobs, 3% failures.
v1::Workload MixedWeekWorkload(uint64_t seed, int min_jobs, int workspaces,
                               int days = 7);

// (c) Big-job starvation: one job needing 200 of 256 GiB arriving behind
// hundreds of small jobs that keep arriving for hours.
v1::Workload StarvationWorkload(uint64_t seed);

// The committed example files: name (e.g. "burst.json") and contents.
struct ExampleFile {
  std::string name;
  std::string contents;
};
absl::StatusOr<std::vector<ExampleFile>> ExampleFiles();

// A workload as JSON in the proto3 mapping, one job per line (compact yet
// diffable). ParseJsonMessage reads it back.
absl::StatusOr<std::string> WorkloadToJsonLines(const v1::Workload& workload);

}  // namespace plan
}  // namespace berth

#endif  // BERTH_TOOLS_PLAN_EXAMPLES_GEN_H_
