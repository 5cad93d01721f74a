// The kept record of a fast job with the real berthd (default log flags),
// dockerd and gRPC: every line of a job printing 1,000,000 numbered lines as
// fast as it can, in order, after its container is gone; over the cap, the
// exact head, the marker and the exact end; both across a kill -9 of berthd
// while the job prints.
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
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
  void Sync(std::vector<v1::JobSpec> jobs) {
    v1::Snapshot s;
    s.set_generation(1);
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
  // Each prints as fast as it can, pauses once (berthd is killed there,
  // its follows mid-log), and prints on as fast as it can.
  Sync({BusyboxJob(lines, "ws", 64 * kMiB,
                   absl::StrCat("seq 1 500000", kNumbered, "; sleep 2; seq 500001 1000000",
                                kNumbered)),
        BusyboxJob(over, "ws", 64 * kMiB,
                   absl::StrCat("seq 1 1500000", kNumbered, "; sleep 2; seq 1500001 3000000",
                                kNumbered))});
  ASSERT_TRUE(WaitFor([&] { return DockerLastLineHas(lines, "line 500000 of") &&
                                   DockerLastLineHas(over, "line 1500000 of"); },
                      absl::Seconds(90)))
      << b_->Log();
  b_->Kill9();
  ASSERT_TRUE(b_->Restart().ok());
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
}

}  // namespace
}  // namespace berth
