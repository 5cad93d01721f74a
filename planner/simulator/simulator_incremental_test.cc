// The simulator planning incrementally (planner/plan/incremental.h) against
// the same simulator planning the whole queue with Plan() at every event
// (SimOptions::whole_queue_plans): on generated workloads under every
// ranking, aging, backfill and executor model, every job's result, the
// usage timeline and the counters must be identical.
#include <cstdint>
#include <iostream>
#include <map>
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
  if (want.peak_memory_bytes != got.peak_memory_bytes || want.peak_cpu_millis != got.peak_cpu_millis)
    return "peaks";
  return "";
}

// One generated case: the incremental simulation against the whole-queue
// reference. `overloaded`: hundreds of jobs within hours on budgets with
// worker slots to spare while memory or cpu binds, so most plans stop
// before the queue's end and the tail's reasons vary (memory, cpu,
// priority, pool and workspace slots). `deep`: with `overloaded`, a longer
// queue of mixed sizes where a few small, short jobs stand far down the
// ranking, so that walks backfill deep and often stop before the queue's
// end with jobs behind them that could fit but not end before the
// reservation (the walk's early stop, incremental_stop.h). Adds each job's
// main wait reason to `reasons`.
std::string RunCase(uint64_t seed, bool overloaded, std::map<Reason, int>& reasons,
                    bool deep = false) {
  std::mt19937_64 rng(seed);
  auto pick = [&rng](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  SimInput in = testing::RandomWorkload(
      seed, static_cast<int>(deep ? pick(300, 600) : overloaded ? pick(100, 300) : pick(20, 120)));
  in.budgets.max_workers = static_cast<int32_t>(overloaded ? pick(4, 40) : pick(2, 8));
  if (overloaded) {
    in.budgets.memory_bytes = pick(48, 160) * testing::kGi;
    in.budgets.cpu_millis = 250 * pick(24, 120);
    in.budgets.workspace_max_workers = static_cast<int32_t>(pick(0, 6));
    if (pick(0, 2) == 0) in.budgets.pool_max_workers.clear();
    const int64_t span = pick(30, 600);
    for (SimJob& j : in.jobs) {
      j.arrival_offset = absl::Minutes(pick(0, span));
      j.job.created_at = testing::kStart + j.arrival_offset;
      if (pick(0, 3) == 0) j.job.resources.memory_bytes = pick(1, 8) * testing::kGi / 4;
    }
  }
  if (deep) {
    for (SimJob& j : in.jobs) {
      j.arrival_offset = absl::Minutes(pick(0, 90));
      j.job.created_at = testing::kStart + j.arrival_offset;
      if (pick(0, 6) == 0) {  // small and short: a backfill far down the ranking
        j.job.resources = {250 * pick(1, 2), pick(1, 4) * testing::kGi / 4};
        j.job.expected_duration = absl::Minutes(pick(1, 8));
      } else if (pick(0, 2) == 0) {  // long: fits, but not before the reservation
        j.job.expected_duration = absl::Minutes(pick(120, 600));
      }
    }
  }
  if (pick(0, 3) == 0) {
    const absl::Time started = testing::kStart - absl::Minutes(pick(0, 60));
    in.running.push_back(
        testing::Running("initial", 4 * testing::kGi, started, absl::Minutes(pick(1, 90)), "ws1"));
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
  for (const SimJobResult& r : want.jobs) ++reasons[r.main_wait_reason];
  return Compare(want, got);
}

TEST(SimulatorIncrementalTest, EqualsTheWholeQueueSimulation) {
  const uint64_t base = std::random_device{}();
  std::map<Reason, int> reasons;
  for (uint64_t s = 0; s < 300; ++s) {
    ASSERT_EQ(RunCase(base + s, /*overloaded=*/false, reasons), "") << "seed " << base + s;
  }
}

TEST(SimulatorIncrementalTest, EqualsTheWholeQueueSimulationOverloaded) {
  const uint64_t base = std::random_device{}();
  std::map<Reason, int> reasons;
  for (uint64_t s = 0; s < 200; ++s) {
    ASSERT_EQ(RunCase(base + s, /*overloaded=*/true, reasons), "")
        << "seed " << base + s << " (overloaded)";
  }
  // The comparison covers the tail's reasons only if jobs waited longest
  // under each of them.
  for (Reason r : {Reason::kWaitingForMemory, Reason::kWaitingForCpu,
                   Reason::kWaitingForWorkerSlot, Reason::kWaitingForPriority,
                   Reason::kWaitingForWorkspaceCap, Reason::kWaitingForPoolSlot}) {
    EXPECT_GT(reasons[r], 20) << ReasonName(r);
  }
  for (const auto& [r, count] : reasons) std::cout << ReasonName(r) << " " << count << "\n";
}

TEST(SimulatorIncrementalTest, EqualsTheWholeQueueSimulationDeepBackfill) {
  const uint64_t base = std::random_device{}();
  std::map<Reason, int> reasons;
  for (uint64_t s = 0; s < 60; ++s) {
    ASSERT_EQ(RunCase(base + s, /*overloaded=*/true, reasons, /*deep=*/true), "")
        << "seed " << base + s << " (deep backfill)";
  }
  for (Reason r : {Reason::kWaitingForMemory, Reason::kWaitingForCpu,
                   Reason::kWaitingForPriority}) {
    EXPECT_GT(reasons[r], 100) << ReasonName(r);
  }
  for (const auto& [r, count] : reasons) std::cout << ReasonName(r) << " " << count << "\n";
}

}  // namespace
}  // namespace berth::planner
