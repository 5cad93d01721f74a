// The requeue-OOM policy end to end: the real berthd, real Docker,
// real RocksDB, real gRPC. A job asking 32 MiB writes 48 MiB to its tmpfs
// /tmp (charged to its memory cgroup), is OOM-killed, and — with the policy
// on for its pool (--requeue_oom) or its snapshot (requeue_oom_once) — is
// requeued once with a raised limit and then succeeds; with it off, fails.
#include <functional>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/berthd_process.h"
#include "tools/base/subprocess.h"

namespace berth {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

// Asks 32 MiB, uses ~49 MiB: killed at 32 MiB, fits the raise (256 MiB).
v1::JobSpec Overrunning(const std::string& id) {
  v1::JobSpec j = BusyboxJob(id, "oom", 32 * kMiB,
                             absl::StrCat("head -c ", 48 * kMiB, " /dev/zero > /tmp/f && echo done"));
  j.set_action("overrun");
  return j;
}

// GetJob until `done` (up to 90 s); the last view of the job.
v1::Job Await(BerthClient& c, const std::string& id,
              const std::function<bool(const v1::Job&)>& done) {
  v1::Job last;
  const bool reached = WaitFor(
      [&] {
        absl::StatusOr<v1::Job> j = c.GetJob(id);
        if (j.ok()) last = *std::move(j);
        return j.ok() && done(last);
      },
      absl::Seconds(90));
  EXPECT_TRUE(reached) << id << " never reached the awaited state; last: " << last.DebugString();
  return last;
}

bool Ended(const v1::Job& j) {
  return j.state() == v1::JOB_STATE_SUCCEEDED || j.state() == v1::JOB_STATE_FAILED ||
         j.state() == v1::JOB_STATE_CANCELLED;
}

// The job was requeued once at 256 MiB after its kill and then succeeded;
// GetJob, ExplainJob and the event stream say so.
void ExpectRequeuedAndSucceeded(BerthClient& c, const std::string& id) {
  const v1::Job j = Await(c, id, Ended);
  EXPECT_EQ(j.state(), v1::JOB_STATE_SUCCEEDED) << j.DebugString();
  EXPECT_EQ(j.requeue_count(), 1);
  EXPECT_EQ(j.raised_memory_bytes(), 256 * kMiB);
  EXPECT_EQ(j.spec().resources().memory_bytes(), 32 * kMiB);
  absl::StatusOr<v1::Explanation> e = c.ExplainJob(id);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_TRUE(absl::StrContains(e->summary(), "raised to 256 MiB after an OOM kill"))
      << e->summary();
  std::string requeued;
  ASSERT_TRUE(c.Watch(0,
                      [&](const v1::Event& ev) {
                        if (ev.job_id() == id && ev.state() == v1::JOB_STATE_QUEUED &&
                            absl::StartsWith(ev.message(), "requeued")) {
                          requeued = ev.message();
                          return false;
                        }
                        return true;
                      },
                      absl::Now() + absl::Seconds(30))
                  .ok());
  EXPECT_TRUE(absl::StrContains(requeued, "OOM-killed at its 32 MiB limit")) << requeued;
  EXPECT_TRUE(absl::StrContains(requeued, "requeued once with 256 MiB")) << requeued;
}

TEST(BerthdOomRequeue, PoolFlagRequeuesAnOomKilledJobOnceWithMoreMemory) {
  BerthdProcessOptions options;
  options.extra_flags = {"--requeue_oom=default"};
  absl::StatusOr<std::unique_ptr<BerthdProcess>> berthd = BerthdProcess::Start(options);
  ASSERT_TRUE(berthd.ok()) << berthd.status();
  std::unique_ptr<BerthClient> c = (*berthd)->Client(Role::kPusher);
  const std::string id = UniqueJobPrefix() + "overrun";
  v1::Snapshot s;
  s.set_generation(1);
  *s.add_jobs() = Overrunning(id);
  ASSERT_TRUE(c->Sync(s).ok());
  ExpectRequeuedAndSucceeded(*c, id);
}

TEST(BerthdOomRequeue, SnapshotSwitchRequeuesAndWithoutItTheJobFails) {
  absl::StatusOr<std::unique_ptr<BerthdProcess>> berthd =
      BerthdProcess::Start(BerthdProcessOptions());  // no --requeue_oom
  ASSERT_TRUE(berthd.ok()) << berthd.status();
  std::unique_ptr<BerthClient> c = (*berthd)->Client(Role::kPusher);
  const std::string prefix = UniqueJobPrefix();
  v1::Snapshot s1;
  s1.set_generation(1);
  s1.set_requeue_oom_once(true);
  *s1.add_jobs() = Overrunning(prefix + "asked");
  ASSERT_TRUE(c->Sync(s1).ok());
  ExpectRequeuedAndSucceeded(*c, prefix + "asked");

  // The next snapshot does not ask: the policy is off, the job fails.
  v1::Snapshot s2;
  s2.set_generation(2);
  *s2.add_jobs() = s1.jobs(0);
  *s2.add_jobs() = Overrunning(prefix + "off");
  ASSERT_TRUE(c->Sync(s2).ok());
  const v1::Job off = Await(*c, prefix + "off", Ended);
  EXPECT_EQ(off.state(), v1::JOB_STATE_FAILED) << off.DebugString();
  EXPECT_EQ(off.failure_cause(), v1::FAILURE_CAUSE_OOM_KILLED);
  EXPECT_EQ(off.raised_memory_bytes(), 0);
  EXPECT_EQ(off.requeue_count(), 0);
  // The kernel killed it at its 32 MiB limit: it used at least that much,
  // whatever the last sample (if any) saw.
  EXPECT_GE(off.observed().peak_memory_bytes(), 32 * kMiB) << off.DebugString();
  EXPECT_TRUE(off.observed().peak_exact()) << off.DebugString();
}

}  // namespace
}  // namespace berth
