// A whole queue entered at once (IncrementalPlanner::EnqueueAll): what it
// must know of the jobs' dependencies once they have all joined.
#include "planner/plan/incremental.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace berth::planner {
namespace {

constexpr int64_t kGi = int64_t{1} << 30;

// A queue entered at once (a forecast's, berthd's first read) whose jobs
// depend on jobs entered after them: each dependant waits for a queued
// dependency, not for one that is unknown, so the plans stay incremental.
// Both ways of entering it, with few ids depended on (looked up once each)
// and with many (checked job by job).
TEST(IncrementalEnqueueAll, KnowsWhichDependenciesAreQueued) {
  for (const bool many : {false, true})
  for (const bool taken : {false, true}) {
    IncrementalPlanner ip;
    const absl::Time now = absl::FromUnixSeconds(1'800'001'000);
    if (many) {  // 50 queued jobs, each depending on a job that succeeded
      for (int i = 0; i < 50; ++i) {
        ip.SetFinished(absl::StrCat("done", i), DependencyOutcome::kSucceeded);
        QueuedJob q;
        q.id = absl::StrCat("old", i);
        q.workspace = "ws0";
        q.resources = {1000, kGi};
        q.created_at = absl::FromUnixSeconds(1'799'000'000 + i);
        q.depends_on = {absl::StrCat("done", i)};
        ip.Enqueue(q);
      }
    }
    std::vector<QueuedJob> batch;
    for (int i = 0; i < 40; ++i) {
      QueuedJob q;
      q.id = absl::StrCat("j", i);
      q.workspace = absl::StrCat("ws", i % 3);
      q.resources = {1000, kGi};
      q.created_at = absl::FromUnixSeconds(1'800'000'000 + i);
      if (i % 10 == 0) q.depends_on = {absl::StrCat("j", i + 5)};  // created later
      batch.push_back(q);
    }
    if (taken) {
      ip.EnqueueAll(std::move(batch));
    } else {
      std::vector<const QueuedJob*> jobs;
      for (const QueuedJob& q : batch) jobs.push_back(&q);
      ip.EnqueueAll(jobs);
    }
    Budgets b;
    b.memory_bytes = 64 * kGi;
    b.cpu_millis = 16000;
    b.max_workers = 4;
    PlanResult plan;
    ip.Plan(b, Policy(), now, IncrementalPlanner::Detail::kAdmissions, plan);
    EXPECT_EQ(ip.whole_plans(), 0) << "many " << many << " taken " << taken;
    for (int i = 0; i < 40; i += 10) {
      const int64_t index = ip.QueuedIndexOf(absl::StrCat("j", i));
      ASSERT_GE(index, 0);
      EXPECT_TRUE(ip.dependency_pending(static_cast<size_t>(index))) << "j" << i;
    }
  }
}

}  // namespace
}  // namespace berth::planner
