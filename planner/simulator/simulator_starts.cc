// The simulator's start jitter (SimOptions::start_jitter): each start's
// fixed delay moved by a seeded draw per job. The start model itself
// (latency, contention, parallelism) is planner/starts/start_model.h,
// which the forecast plays too.
#include <algorithm>
#include <cstdint>
#include <random>

#include "planner/simulator/simulation.h"

namespace berth::planner::internal {

absl::Duration Simulation::Jittered(size_t i, absl::Duration delay) const {
  if (opt_.start_jitter <= absl::ZeroDuration()) return delay;
  // One draw per job and seed, whatever order the starts come in; the
  // engine's output is fixed by the standard, so runs repeat everywhere.
  const uint64_t seed = opt_.start_jitter_seed, job = i;
  std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                    static_cast<uint32_t>(job), static_cast<uint32_t>(job >> 32)};
  std::mt19937_64 engine(seq);
  const double u = static_cast<double>(engine() >> 11) * 0x1.0p-52 - 1.0;  // [-1, 1)
  return std::max(absl::ZeroDuration(), delay + opt_.start_jitter * u);
}

}  // namespace berth::planner::internal
