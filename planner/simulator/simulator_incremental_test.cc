// The simulator planning incrementally (planner/plan/incremental.h) against
// the same simulator planning the whole queue with Plan() at every event
// (SimOptions::whole_queue_plans): on generated workloads under every
// ranking, aging, backfill and executor model, every job's result, the
// usage timeline and the counters must be identical.
#include <cstdint>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "planner/ranking/ranking.h"
#include "planner/simulator/simulator.h"
#include "planner/simulator/simulator_test_inputs.h"

namespace berth::planner {
namespace {

std::string Describe(const SimJobResult& r) {
  return absl::StrCat(SimOutcomeName(r.outcome), " arrival=", absl::FormatTime(r.arrival),
                      " ready=", absl::FormatTime(r.ready), " start=", absl::FormatTime(r.start),
                      " end=", absl::FormatTime(r.end), " run=", absl::FormatTime(r.run_start),
                      "..", absl::FormatTime(r.run_end), " reason=",
                      static_cast<int>(r.main_wait_reason), " for ",
                      absl::FormatDuration(r.main_wait_time), " problem=",
                      static_cast<int>(r.problem), " timed_out=", r.timed_out, " promised ",
                      absl::FormatTime(r.first_promise), " at ",
                      absl::FormatTime(r.first_promised_at));
}

// "" if equal, else the first difference.
std::string Compare(const SimResult& want, const SimResult& got) {
  if (want.jobs.size() != got.jobs.size()) return "job count";
  for (size_t i = 0; i < want.jobs.size(); ++i) {
    if (Describe(want.jobs[i]) != Describe(got.jobs[i]))
      return absl::StrCat("job ", i, ": want ", Describe(want.jobs[i]), " got ",
                          Describe(got.jobs[i]));
  }
  if (want.timeline.size() != got.timeline.size()) return "timeline size";
  for (size_t k = 0; k < want.timeline.size(); ++k) {
    const SimUsagePoint& a = want.timeline[k];
    const SimUsagePoint& b = got.timeline[k];
    if (a.time != b.time || a.memory_bytes != b.memory_bytes || a.cpu_millis != b.cpu_millis ||
        a.workers != b.workers || a.queued != b.queued)
      return absl::StrCat("timeline point ", k);
  }
  if (want.end != got.end) return "end";
  if (want.never_fits != got.never_fits) return "never_fits";
  if (want.plan_calls != got.plan_calls) return "plan_calls";
  if (want.plan_calls_skipped != got.plan_calls_skipped) return "plan_calls_skipped";
  if (want.peak_memory_bytes != got.peak_memory_bytes || want.peak_cpu_millis != got.peak_cpu_millis)
    return "peaks";
  return "";
}

TEST(SimulatorIncrementalTest, EqualsTheWholeQueueSimulation) {
  const uint64_t base = std::random_device{}();
  for (uint64_t s = 0; s < 300; ++s) {
    const uint64_t seed = base + s;
    std::mt19937_64 rng(seed);
    auto pick = [&rng](int64_t lo, int64_t hi) {
      return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
    };
    SimInput in = testing::RandomWorkload(seed, static_cast<int>(pick(20, 120)));
    in.budgets.max_workers = static_cast<int32_t>(pick(2, 8));
    if (pick(0, 3) == 0) {
      RunningJob r;
      r.id = "initial";
      r.workspace = "ws1";
      r.resources = {1000, 4 * testing::kGi};
      r.started_at = testing::kStart - absl::Minutes(pick(0, 60));
      r.expected_duration = absl::Minutes(pick(1, 90));
      in.running.push_back(r);
    }
    SimOptions opt;
    opt.policy.ranking = pick(0, 4) == 0 ? &FifoRanking() : &DrfRanking();
    opt.policy.backfill = pick(0, 5) != 0;
    opt.policy.aging_interval = pick(0, 2) == 0 ? absl::ZeroDuration() : absl::Minutes(pick(5, 120));
    if (pick(0, 2) == 0) {
      opt.start_latency = absl::Milliseconds(pick(0, 500));
      opt.finish_latency = absl::Milliseconds(pick(0, 100));
      opt.start_parallelism = static_cast<int32_t>(pick(0, 4));
      opt.plan_at_starts = pick(0, 1) == 1;
    }
    SimOptions reference = opt;
    reference.whole_queue_plans = true;
    const SimResult want = Simulate(in, reference);
    const SimResult got = Simulate(in, opt);
    ASSERT_EQ(Compare(want, got), "") << "seed " << seed;
  }
}

}  // namespace
}  // namespace berth::planner
