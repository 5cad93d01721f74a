// Learned resource estimates end to end: the real berthd, real
// Docker, real RocksDB, real gRPC. Jobs fill their tmpfs /tmp with a known
// number of bytes; their observed peak (GetJob, the final event, the usage
// history) must be within 10% of it, the RightSize report and ExplainJob's
// advice must follow from it, and no running job's reservation changes.
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/berthd_process.h"

namespace berth {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kFill = 60 * kMiB;  // /tmp is a 64 MiB tmpfs

// Polls `get` until `done(job)` or `timeout`; returns the last job seen.
v1::Job AwaitJob(BerthClient& c, const std::string& id,
                 const std::function<bool(const v1::Job&)>& done,
                 absl::Duration timeout = absl::Seconds(90)) {
  const absl::Time deadline = absl::Now() + timeout;
  v1::Job last;
  while (absl::Now() < deadline) {
    absl::StatusOr<v1::Job> j = c.GetJob(id);
    if (j.ok()) {
      last = *j;
      if (done(last)) return last;
    }
    absl::SleepFor(absl::Milliseconds(200));
  }
  ADD_FAILURE() << id << " never reached the awaited condition; last: " << last.DebugString();
  return last;
}

bool Terminal(const v1::Job& j) {
  return j.state() == v1::JOB_STATE_SUCCEEDED || j.state() == v1::JOB_STATE_FAILED ||
         j.state() == v1::JOB_STATE_CANCELLED;
}

TEST(BerthdUsage, ObservedPeaksMatchKnownFillsAndTeachRightSizing) {
  BerthdProcessOptions options;
  options.memory = "1Gi";
  absl::StatusOr<std::unique_ptr<BerthdProcess>> berthd = BerthdProcess::Start(options);
  ASSERT_TRUE(berthd.ok()) << berthd.status();
  std::unique_ptr<BerthClient> c = (*berthd)->Client(Role::kPusher);
  const std::string prefix = UniqueJobPrefix();
  const std::string ws = "usage";

  // A long job holding 512 MiB, and five runs of action "fill" asking
  // 512 MiB each but using ~60 MiB: they run one at a time beside it.
  v1::Snapshot s1;
  s1.set_generation(1);
  v1::JobSpec hold = BusyboxJob(prefix + "hold", ws, 512 * kMiB, "sleep 300");
  hold.set_action("hold");
  hold.set_priority(2);
  *s1.add_jobs() = hold;
  std::vector<std::string> fills;
  for (int i = 0; i < 5; ++i) {
    v1::JobSpec f = BusyboxJob(absl::StrCat(prefix, "fill-", i), ws, 512 * kMiB,
                               absl::StrCat("head -c ", kFill, " /dev/zero > /tmp/f && sleep 3"));
    f.set_action("fill");
    f.set_priority(1);
    fills.push_back(f.id());
    *s1.add_jobs() = f;
  }
  ASSERT_TRUE(c->Sync(s1).ok());

  // While it runs, GetJob shows the hold job's usage so far.
  v1::Job held = AwaitJob(*c, hold.id(), [](const v1::Job& j) {
    return j.state() == v1::JOB_STATE_RUNNING && j.observed().samples() > 0;
  });
  EXPECT_GT(held.observed().peak_memory_bytes(), 0);

  for (const std::string& id : fills) {
    v1::Job f = AwaitJob(*c, id, Terminal);
    ASSERT_EQ(f.state(), v1::JOB_STATE_SUCCEEDED) << f.DebugString();
    ASSERT_GT(f.observed().samples(), 0) << id;
    const double peak = static_cast<double>(f.observed().peak_memory_bytes());
    EXPECT_GE(peak, static_cast<double>(kFill)) << id;
    EXPECT_LE(peak, 1.1 * static_cast<double>(kFill)) << id << ": " << peak;
    EXPECT_GE(f.observed().run_seconds(), 3.0) << id;
  }

  // The final event of a run carries its usage.
  bool seen = false;
  ASSERT_TRUE(c->Watch(0,
                       [&](const v1::Event& e) {
                         if (e.job_id() == fills[0] && e.state() == v1::JOB_STATE_SUCCEEDED) {
                           seen = e.observed().peak_memory_bytes() >= kFill;
                           return false;
                         }
                         return true;
                       },
                       absl::Now() + absl::Seconds(30))
                  .ok());
  EXPECT_TRUE(seen);

  // The report: "fill" wastes ~450 MiB per run and is advised ~256 MiB.
  v1::RightSizeRequest rq;
  rq.set_workspace(ws);
  absl::StatusOr<v1::RightSizeResponse> report = c->RightSize(rq);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_GE(report->actions_size(), 1);
  const v1::ActionUsage& fill = report->actions(0);
  EXPECT_EQ(fill.action(), "fill");
  EXPECT_EQ(fill.succeeded(), 5);
  EXPECT_LE(static_cast<double>(fill.max_peak_memory_bytes()), 1.1 * static_cast<double>(kFill));
  EXPECT_EQ(fill.suggested_memory_bytes(), 256 * kMiB);
  EXPECT_GT(fill.wasted_gib_hours(), 0);

  // A new run of "fill" asking 768 MiB waits (512 MiB free beside hold);
  // ExplainJob says what its history supports, and that it would start now.
  v1::Snapshot s2;
  s2.set_generation(2);
  *s2.add_jobs() = hold;
  v1::JobSpec big = BusyboxJob(prefix + "fill-big", ws, 768 * kMiB, "true");
  big.set_action("fill");
  *s2.add_jobs() = big;
  ASSERT_TRUE(c->Sync(s2).ok());
  absl::StatusOr<v1::Explanation> e = c->ExplainJob(big.id());
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_EQ(e->reason(), v1::WAITING_FOR_MEMORY) << e->summary();
  ASSERT_TRUE(e->has_right_sizing()) << e->summary();
  EXPECT_TRUE(e->right_sizing().would_start_now());
  EXPECT_TRUE(absl::StrContains(e->right_sizing().text(), "asks 768 MiB")) << e->right_sizing().text();
  EXPECT_TRUE(absl::StrContains(e->right_sizing().text(), "at 256 MiB it would start now"))
      << e->right_sizing().text();

  // Learning changed no promise: both keep what they asked.
  absl::StatusOr<v1::Job> h = c->GetJob(hold.id());
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->state(), v1::JOB_STATE_RUNNING);
  EXPECT_EQ(h->spec().resources().memory_bytes(), 512 * kMiB);
  absl::StatusOr<v1::Job> b = c->GetJob(big.id());
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->state(), v1::JOB_STATE_QUEUED);
  EXPECT_EQ(b->spec().resources().memory_bytes(), 768 * kMiB);
}

}  // namespace
}  // namespace berth
