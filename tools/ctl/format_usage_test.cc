#include "tools/ctl/format_usage.h"

#include <sstream>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tools/ctl/format.h"

// What berthctl prints about a job's record: its peaks against its ask, a
// memory raised after an OOM kill, each ended attempt and right-sizing.
namespace berth {
namespace ctl {
namespace {

TEST(FormatTest, UsageSaysPeakAgainstTheAskAndWhenNothingWasObserved) {
  v1::ResourceUsage u;
  u.set_peak_memory_bytes(int64_t{96} << 20);
  u.set_cpu_seconds(1.25);
  u.set_run_seconds(12);
  u.set_samples(3);
  u.set_peak_exact(true);
  EXPECT_EQ(FormatUsage(u, int64_t{256} << 20), "peak 96 MiB of 256 MiB asked (38%), cpu 1.2 s, ran 12s");
  u.set_peak_exact(false);
  EXPECT_EQ(FormatUsage(u, 0), "peak >= 96 MiB, cpu 1.2 s, ran 12s");
  u.set_samples(0);
  // OOM-killed before its first sample: the peak is its limit.
  u.set_peak_exact(true);
  EXPECT_EQ(FormatUsage(u, int64_t{96} << 20),
            "peak 96 MiB of 96 MiB asked (100%), cpu not observed, ran 12s");
  v1::Job j;
  EXPECT_EQ(FormatPeak(j), "-");
  *j.mutable_observed() = u;
  EXPECT_EQ(FormatPeak(j), "96 MiB");
  u.set_peak_memory_bytes(0);
  EXPECT_EQ(FormatUsage(u, 1), "ran 12s (memory and CPU not observed)");
  *j.mutable_observed() = u;
  EXPECT_EQ(FormatPeak(j), "-");
}

TEST(FormatTest, RightSizeShowsFailedPeaksAndAShortRunsWaste) {
  EXPECT_EQ(FormatGibHours(0), "0.000");
  EXPECT_EQ(FormatGibHours(0.0123), "0.012");
  EXPECT_EQ(FormatGibHours(4.2e-5), "4.2e-05");
  EXPECT_EQ(FormatGibHours(123.45), "123.5");
  v1::RightSizeResponse r;
  v1::ActionUsage* a = r.add_actions();
  a->set_workspace("ws");
  a->set_action("oom");
  a->set_runs(1);
  a->set_oom_killed(1);
  a->set_asked_memory_bytes(int64_t{32} << 20);
  a->set_p50_peak_memory_bytes(int64_t{32} << 20);
  a->set_p95_peak_memory_bytes(int64_t{32} << 20);
  a->set_max_peak_memory_bytes(int64_t{32} << 20);
  a->set_wasted_gib_hours(4.2e-5);
  r.set_total_wasted_gib_hours(4.2e-5);
  std::ostringstream out;
  PrintRightSize(r, out);
  EXPECT_FALSE(absl::StrContains(out.str(), "0 B")) << out.str();
  EXPECT_FALSE(absl::StrContains(out.str(), "0.0\n")) << out.str();
  EXPECT_TRUE(absl::StrContains(out.str(), "total wasted: 4.2e-05 GiB-hours")) << out.str();
}

TEST(FormatTest, JobShowsAMemoryRaisedAfterAnOomKill) {
  v1::Job j;
  j.mutable_spec()->set_id("a");
  j.mutable_spec()->mutable_resources()->set_memory_bytes(int64_t{32} << 20);
  std::ostringstream plain;
  PrintJob(j, absl::UnixEpoch(), plain);
  EXPECT_TRUE(absl::StrContains(plain.str(), "32 MiB\n")) << plain.str();
  EXPECT_FALSE(absl::StrContains(plain.str(), "raised")) << plain.str();
  j.set_raised_memory_bytes(int64_t{256} << 20);
  std::ostringstream raised;
  PrintJob(j, absl::UnixEpoch(), raised);
  EXPECT_TRUE(absl::StrContains(raised.str(), "256 MiB (raised after an OOM kill; asks 32 MiB)"))
      << raised.str();
  // `berthctl list` shows what it reserves, marked as raised.
  std::ostringstream list;
  PrintJobs({j}, absl::UnixEpoch(), list);
  EXPECT_TRUE(absl::StrContains(list.str(), "256 MiB^")) << list.str();
  j.set_raised_memory_bytes(0);
  std::ostringstream unraised;
  PrintJobs({j}, absl::UnixEpoch(), unraised);
  EXPECT_TRUE(absl::StrContains(unraised.str(), "32 MiB ")) << unraised.str();
  EXPECT_FALSE(absl::StrContains(unraised.str(), "^")) << unraised.str();
}

TEST(FormatTest, JobShowsItsAttemptAndEachEndedAttempt) {
  v1::Job j;
  j.mutable_spec()->set_id("a");
  j.set_attempt(2);
  v1::Attempt* a = j.add_attempts();
  a->set_number(1);
  a->set_outcome(v1::JOB_STATE_QUEUED);
  a->set_requeue_cause(v1::REQUEUE_CAUSE_DRAIN);
  a->set_exit_code(143);
  a->set_has_exit_code(true);
  a->mutable_started_at()->set_seconds(1000);
  a->mutable_finished_at()->set_seconds(1012);
  a->set_node("w1");
  a->set_log_kept(true);
  a->set_stdout_log_bytes(2048);
  a->set_message("requeued: drain: reboot");
  std::ostringstream out;
  PrintJob(j, absl::UnixEpoch(), out);
  EXPECT_TRUE(absl::StrContains(out.str(), "attempt:         2\n")) << out.str();
  EXPECT_TRUE(absl::StrContains(
      out.str(), "attempt 1:       requeued (drain), exit 143, started 1970-01-01 00:16:40 UTC, "
                 "ran 12s, node w1, log 2 KiB stdout / 0 B stderr: requeued: drain: reboot\n"))
      << out.str();
  // A never-admitted job shows neither.
  v1::Job q;
  q.mutable_spec()->set_id("q");
  std::ostringstream none;
  PrintJob(q, absl::UnixEpoch(), none);
  EXPECT_FALSE(absl::StrContains(none.str(), "attempt")) << none.str();
}

}  // namespace
}  // namespace ctl
}  // namespace berth
