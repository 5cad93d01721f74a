// A berthd that stops answering (SIGSTOP: alive, its port open, nothing
// read) is noticed by its followers: gRPC keepalive pings go unanswered, so
// `berthctl watch --follow` and the Python EventFollower see their stream
// fail UNAVAILABLE within 20 s (a ping every 10 s, 5 s to answer) and
// reconnect, while a quiet stream of a berthd that answers stays up; once
// berthd runs again (SIGCONT) they carry on from where they
// were, with no gap and no repeat. Real berthd, gRPC, berthctl and python3.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "planner/base/proto_json.h"
#include "tests/berthctl_util.h"
#include "tests/berthd_process.h"
#include "tools/base/subprocess.h"

namespace berth {
namespace {

using ::berth::testing::Describe;
using ::berth::testing::ExpectContiguousFromOne;
using ::berth::testing::Revisions;
using ::berth::testing::kBerthctl;

// The bound the docs state for noticing a berthd that stopped answering.
constexpr absl::Duration kNoticeWithin = absl::Seconds(20);
// Long enough for four keepalive pings of a follower on a quiet stream (the
// time under test: nothing to await).
constexpr absl::Duration kQuietFor = absl::Seconds(42);

// Stops a process for as long as it lives (SIGSTOP, then SIGCONT however the
// test ends).
class Stopped {
 public:
  explicit Stopped(pid_t pid) : pid_(pid) { EXPECT_EQ(kill(pid_, SIGSTOP), 0); }
  ~Stopped() { EXPECT_EQ(kill(pid_, SIGCONT), 0); }
  Stopped(const Stopped&) = delete;
  Stopped& operator=(const Stopped&) = delete;

 private:
  pid_t pid_;
};

TEST(BerthdHangTest, FollowersNoticeAStoppedBerthdAndResumeAfterIt) {
  absl::StatusOr<std::unique_ptr<BerthdProcess>> started = BerthdProcess::Start({});
  ASSERT_TRUE(started.ok()) << started.status();
  BerthdProcess& b = **started;
  ASSERT_TRUE(b.Client(Role::kOperator)->Pause("hang test: an event").ok());

  absl::StatusOr<std::unique_ptr<Subprocess>> ctl = Subprocess::Start(
      {kBerthctl, "--server", b.target(), "watch", "--follow", "--json"},
      {{"BERTH_TOKEN", TokenFor(Role::kReader)}});
  ASSERT_TRUE(ctl.ok()) << ctl.status();
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
  const std::string log = TmpDir() + "/hang-events.jsonl";
  absl::StatusOr<std::unique_ptr<Subprocess>> py = Subprocess::Start(
      {"/usr/bin/python3", "examples/job_server_client.py", "--server", b.target(),
       "--state-dir", TmpDir() + "/hang-state", "follow", "--log", log},
      {{"PYTHONPATH", absl::StrCat(cwd, "/clients/python")},
       {"PYTHONDONTWRITEBYTECODE", "1"},
       {"BERTH_TOKEN", TokenFor(Role::kPusher)}});
  ASSERT_TRUE(py.ok()) << py.status();
  auto py_revisions = [&] {
    absl::StatusOr<std::string> text = ReadFileToString(log);
    return text.ok() ? Revisions(*text) : std::vector<uint64_t>{};
  };
  absl::StatusOr<v1::Plan> plan = b.Client(Role::kReader)->GetPlan(1);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const uint64_t before = plan->revision();
  ASSERT_GT(before, 0u);
  ASSERT_TRUE(WaitFor(
      [&] {
        std::vector<uint64_t> c = Revisions((*ctl)->Stdout());
        std::vector<uint64_t> p = py_revisions();
        return !c.empty() && c.back() == before && !p.empty() && p.back() == before;
      },
      absl::Seconds(60)))
      << "ctl:\n" << (*ctl)->Stdout() << (*ctl)->Stderr() << "\npy:\n" << (*py)->Stderr();

  // A quiet stream stays up: berthd permits the followers' pings (a default
  // gRPC server ends a connection with GOAWAY "too_many_pings" at the third
  // ping without data, 30 s in).
  absl::SleepFor(kQuietFor);
  EXPECT_FALSE(absl::StrContains((*ctl)->Stderr(), "event stream ended")) << (*ctl)->Stderr();
  EXPECT_FALSE(absl::StrContains((*py)->Stderr(), "event stream ended")) << (*py)->Stderr();

  {
    // Only what the followers write from now on counts.
    const size_t ctl_from = (*ctl)->Stderr().size();
    const size_t py_from = (*py)->Stderr().size();
    Stopped stopped(b.pid());
    const absl::Time t0 = absl::Now();
    absl::Duration ctl_noticed = absl::InfiniteDuration();
    absl::Duration py_noticed = absl::InfiniteDuration();
    ASSERT_TRUE(WaitFor(
        [&] {
          if (ctl_noticed == absl::InfiniteDuration() &&
              absl::StrContains((*ctl)->Stderr().substr(ctl_from),
                                "event stream ended (UNAVAILABLE")) {
            ctl_noticed = absl::Now() - t0;
          }
          if (py_noticed == absl::InfiniteDuration() &&
              absl::StrContains((*py)->Stderr().substr(py_from),
                                "event stream ended (UNAVAILABLE")) {
            py_noticed = absl::Now() - t0;
          }
          return ctl_noticed != absl::InfiniteDuration() &&
                 py_noticed != absl::InfiniteDuration();
        },
        kNoticeWithin + absl::Seconds(10)))
        << "ctl:\n" << (*ctl)->Stderr() << "\npy:\n" << (*py)->Stderr();
    std::printf("noticed a stopped berthd after: berthctl %.1f s, python %.1f s\n",
                absl::ToDoubleSeconds(ctl_noticed), absl::ToDoubleSeconds(py_noticed));
    EXPECT_LE(ctl_noticed, kNoticeWithin);
    EXPECT_LE(py_noticed, kNoticeWithin);
    EXPECT_TRUE((*ctl)->Running()) << (*ctl)->Stderr();
    EXPECT_TRUE((*py)->Running()) << (*py)->Stderr();
  }

  // berthd runs again: a new event reaches both, right after the old ones.
  ASSERT_TRUE(b.Client(Role::kOperator)->Resume().ok());
  ASSERT_TRUE(WaitFor(
      [&] {
        std::vector<uint64_t> c = Revisions((*ctl)->Stdout());
        std::vector<uint64_t> p = py_revisions();
        return !c.empty() && c.back() > before && !p.empty() && p.back() > before;
      },
      absl::Seconds(60)))
      << "ctl:\n" << (*ctl)->Stderr() << "\npy:\n" << (*py)->Stderr() << b.Log();
  (*ctl)->Signal(SIGTERM);
  ProcessResult r = (*ctl)->Wait(absl::Seconds(20));
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  ExpectContiguousFromOne(Revisions(r.out));
  (*py)->Signal(SIGTERM);
  r = (*py)->Wait(absl::Seconds(20));
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  ExpectContiguousFromOne(py_revisions());
  EXPECT_EQ(b.Terminate(absl::Seconds(30)), 0) << b.Log();
}

}  // namespace
}  // namespace berth
