// The kept record of a fast job with the real berthd (default log flags),
// dockerd and gRPC: every line of a job printing 1,000,000 numbered lines as
// fast as it can, in order, after its container is gone; over the cap, the
// exact head, the marker and the exact end, and GetJob/ReadJobLog saying
// what was cut; both across a kill -9 of berthd while the job prints. The
// whole read at the end runs off the pass: a job submitted meanwhile is
// admitted before the ended job's outcome is recorded.
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "executor/runtime/docker/testing/docker_test_util.h"
#include "gtest/gtest.h"
#include "tests/berthd_process.h"
#include "tests/read_job_log.h"

namespace berth {
namespace {

using ::berth::testing::WaitFor;

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr char kNumbered[] = " | sed 's/.*/line & of the numbered output xxxxx/'";

// Lines first..last as the job prints them.
std::string Numbered(int first, int last) {
  std::string out;
  out.reserve(static_cast<size_t>(last - first + 1) * 40);
  for (int i = first; i <= last; ++i) {
    absl::StrAppend(&out, "line ", i, " of the numbered output xxxxx\n");
  }
  return out;
}

class BerthdRecordTest : public ::testing::Test {
 protected:
  void SetUp() override {
    BerthdProcessOptions o;
    o.memory = "1Gi";
    o.tick = "200ms";
    o.stop_grace = "1s";
    absl::StatusOr<std::unique_ptr<BerthdProcess>> b = BerthdProcess::Start(o);
    ASSERT_TRUE(b.ok()) << b.status();
    b_ = *std::move(b);
    prefix_ = UniqueJobPrefix();
  }
  void Sync(std::vector<v1::JobSpec> jobs, uint64_t generation = 1) {
    v1::Snapshot s;
    s.set_generation(generation);
    for (v1::JobSpec& j : jobs) *s.add_jobs() = std::move(j);
    absl::StatusOr<v1::SyncSnapshotResponse> r = b_->Client(Role::kPusher)->Sync(s);
    ASSERT_TRUE(r.ok()) << r.status();
  }
  bool WaitState(const std::string& id, v1::JobState state, absl::Duration timeout) {
    std::unique_ptr<BerthClient> c = b_->Client(Role::kReader);
    return WaitFor(
        [&] {
          absl::StatusOr<v1::Job> j = c->GetJob(id);
          return j.ok() && j->state() == state;
        },
        timeout);
  }
  // The last line Docker holds of the job's container contains `text`.
  bool DockerLastLineHas(const std::string& id, const std::string& text) {
    const std::string cmd = absl::StrCat(
        "c=$(docker ps -aq --filter label=berth.instance=", b_->instance(),
        " --filter label=berth.job=", id, "); [ -n \"$c\" ] && docker logs --tail 1 $c 2>&1 | grep -q '",
        text, "'");
    return std::system(cmd.c_str()) == 0;
  }
  // Runs `sh -c script` inside the job's container.
  bool DockerExec(const std::string& id, const std::string& script) {
    const std::string cmd = absl::StrCat(
        "c=$(docker ps -q --filter label=berth.instance=", b_->instance(),
        " --filter label=berth.job=", id, "); [ -n \"$c\" ] && docker exec $c sh -c '", script,
        "'");
    return std::system(cmd.c_str()) == 0;
  }
  bool DockerExited(const std::string& id) {
    const std::string cmd = absl::StrCat("docker ps -a --filter label=berth.instance=",
                                         b_->instance(), " --filter label=berth.job=", id,
                                         " --filter status=exited -q | grep -q .");
    return std::system(cmd.c_str()) == 0;
  }
  bool DockerHasJob(const std::string& id) {
    const std::string cmd = absl::StrCat("docker ps -a --filter label=berth.instance=",
                                         b_->instance(), " --filter label=berth.job=", id,
                                         " -q | grep -q .");
    return std::system(cmd.c_str()) == 0;
  }

  std::unique_ptr<BerthdProcess> b_;
  std::string prefix_;
};

TEST_F(BerthdRecordTest, AFastLogIsKeptWholeAndOverTheCapKeepsItsEndAcrossAKill9) {
  const std::string lines = prefix_ + "lines";
  const std::string over = prefix_ + "over";
  // Each prints half as fast as it can, waits until the test has killed
  // berthd (its follows mid-log) and started it again, and prints the other
  // half as fast as it can.
  const std::string wait = "; while [ ! -e /tmp/go ]; do usleep 50000; done; ";
  std::vector<v1::JobSpec> jobs = {
      BusyboxJob(lines, "ws", 64 * kMiB,
                 absl::StrCat("seq 1 500000", kNumbered, wait, "seq 500001 1000000",
                              kNumbered)),
      BusyboxJob(over, "ws", 64 * kMiB,
                 absl::StrCat("seq 1 1500000", kNumbered, wait, "seq 1500001 3000000",
                              kNumbered))};
  Sync(jobs);
  ASSERT_TRUE(WaitFor([&] { return DockerLastLineHas(lines, "line 500000 of") &&
                                   DockerLastLineHas(over, "line 1500000 of"); },
                      absl::Seconds(90)))
      << b_->Log();
  b_->Kill9();
  ASSERT_TRUE(b_->Restart().ok());
  ASSERT_TRUE(DockerExec(lines, "touch /tmp/go") && DockerExec(over, "touch /tmp/go"));
  // Its whole log is read at its end, off the pass: a job submitted then is
  // admitted while the log is being kept (the outcome waits for the log).
  ASSERT_TRUE(WaitFor([&] { return DockerExited(lines); }, absl::Minutes(2))) << b_->Log();
  const std::string small = prefix_ + "small";
  jobs.push_back(BusyboxJob(small, "ws", 16 * kMiB, "true"));
  Sync(jobs, 2);
  std::unique_ptr<BerthClient> reader = b_->Client(Role::kReader);
  v1::JobState lines_when_small_admitted = v1::JOB_STATE_UNSPECIFIED;
  ASSERT_TRUE(WaitFor(
      [&] {
        absl::StatusOr<v1::Job> j = reader->GetJob(small);
        if (!j.ok() || j->state() == v1::JOB_STATE_QUEUED) return false;
        absl::StatusOr<v1::Job> l = reader->GetJob(lines);
        if (l.ok()) lines_when_small_admitted = l->state();
        return true;
      },
      absl::Minutes(1)))
      << b_->Log();
  EXPECT_EQ(lines_when_small_admitted, v1::JOB_STATE_RUNNING)
      << "the pass waited for the ended job's log";
  ASSERT_TRUE(WaitState(lines, v1::JOB_STATE_SUCCEEDED, absl::Minutes(3))) << b_->Log();
  ASSERT_TRUE(WaitState(over, v1::JOB_STATE_SUCCEEDED, absl::Minutes(3))) << b_->Log();
  ASSERT_TRUE(WaitFor([&] { return !DockerHasJob(lines) && !DockerHasJob(over); },
                      absl::Seconds(30)));
  std::unique_ptr<BerthClient> op = b_->Client(Role::kOperator);

  // ~36 MB, under the 64 MiB cap: all of it, in order, once.
  const std::string all = Numbered(1, 1000000);
  JobLogRead log = ReadJobLog(*op, lines, 1, false, absl::Minutes(2));
  ASSERT_TRUE(log.status.ok()) << log.status;
  // (Compared with ==: gtest's diff of megabytes takes minutes.)
  EXPECT_TRUE(log.out == all) << log.out.size() << " bytes, want " << all.size()
                              << "; ends with " << log.out.substr(log.out.size() - 80);
  EXPECT_EQ(log.ended, std::vector<int>{1});
  EXPECT_EQ(log.out_cut.total_bytes(), static_cast<int64_t>(all.size()));
  EXPECT_EQ(log.out_cut.dropped_bytes(), 0);
  absl::StatusOr<v1::Job> got = op->GetJob(lines);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->attempts_size(), 1);
  EXPECT_EQ(got->attempts(0).stdout_cut().total_bytes(), static_cast<int64_t>(all.size()));
  EXPECT_EQ(got->attempts(0).stdout_cut().dropped_bytes(), 0);
  EXPECT_EQ(got->attempts(0).stdout_cut().head_bytes(), static_cast<int64_t>(all.size()));

  // ~109 MB over the cap: the exact first and last 32 MiB around the marker.
  const std::string big = Numbered(1, 3000000);
  const int64_t cap = 64 * kMiB;
  const std::string head = big.substr(0, cap / 2);
  const std::string want =
      absl::StrCat(head, head.back() == '\n' ? "" : "\n", "[berth: ", big.size() - cap,
                   " bytes cut here; ", big.size(), " bytes in all]\n",
                   big.substr(big.size() - cap / 2));
  JobLogRead capped = ReadJobLog(*op, over, 1, false, absl::Minutes(2));
  ASSERT_TRUE(capped.status.ok()) << capped.status;
  EXPECT_TRUE(absl::StartsWith(capped.out, "line 1 of the numbered output xxxxx\n"));
  EXPECT_TRUE(absl::EndsWith(capped.out, "line 3000000 of the numbered output xxxxx\n"));
  EXPECT_TRUE(capped.out == want) << capped.out.size() << " bytes, want " << want.size();
  // The API says what was cut: the head and the tail kept, the middle dropped.
  absl::StatusOr<v1::Job> cut_job = op->GetJob(over);
  ASSERT_TRUE(cut_job.ok()) << cut_job.status();
  ASSERT_EQ(cut_job->attempts_size(), 1);
  for (const v1::LogCut& cut : {cut_job->attempts(0).stdout_cut(), capped.out_cut}) {
    EXPECT_EQ(cut.total_bytes(), static_cast<int64_t>(big.size())) << cut.DebugString();
    EXPECT_EQ(cut.dropped_bytes(), static_cast<int64_t>(big.size()) - cap) << cut.DebugString();
    EXPECT_EQ(cut.head_bytes(), cap / 2) << cut.DebugString();
    EXPECT_EQ(cut.tail_bytes(), cap / 2) << cut.DebugString();
  }
  EXPECT_EQ(cut_job->attempts(0).stderr_cut().dropped_bytes(), 0);

  // How long passes and the reads at the end took (berthd logs each pass
  // over 500 ms and each kept log's read), for the benchmarks.
  for (const char* what : {"slow reconcile pass", "job log kept"}) {
    std::vector<int64_t> ms;
    for (absl::string_view line : absl::StrSplit(b_->Log(), '\n')) {
      if (!absl::StrContains(line, what)) continue;
      const size_t at = line.find("\"ms\":");
      int64_t v = 0;
      if (at != absl::string_view::npos &&
          absl::SimpleAtoi(line.substr(at + 5, line.find_first_of(",}", at) - at - 5), &v)) {
        ms.push_back(v);
      }
    }
    std::cout << what << " (ms):";
    for (int64_t v : ms) std::cout << " " << v;
    std::cout << "\n";
  }
}

// A job that holds 60 MB (its tmpfs /tmp, charged to its memory cgroup) for
// 0.2 s, shorter than a pass: its peak is the kernel's mark at its exit.
TEST_F(BerthdRecordTest, AShortJobsPeakIsTheKernelsMarkAtItsExit) {
  const std::string job = prefix_ + "short";
  Sync({BusyboxJob(job, "ws", 128 * kMiB,
                   "head -c 60000000 /dev/zero > /tmp/fill && usleep 200000 && rm /tmp/fill")});
  ASSERT_TRUE(WaitState(job, v1::JOB_STATE_SUCCEEDED, absl::Minutes(1))) << b_->Log();
  absl::StatusOr<v1::Job> j = b_->Client(Role::kReader)->GetJob(job);
  ASSERT_TRUE(j.ok()) << j.status();
  const int64_t held = 60000000;
  EXPECT_GE(j->observed().peak_memory_bytes(), held) << j->DebugString();
  EXPECT_LE(j->observed().peak_memory_bytes(), held + held / 10) << j->DebugString();
  EXPECT_TRUE(j->observed().peak_exact()) << j->DebugString();
}

}  // namespace
}  // namespace berth
