// Starts off the pass, against the real dockerd: Docker taking
// 6 s to create one job's container (a fault-injecting proxy delays that
// one create) does not hold up the rest. Another job admitted in the same
// pass starts, runs and is finalised while the slow create still hangs;
// then the slow job runs too, once.
#include <unistd.h>

#include <functional>
#include <memory>
#include <string>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "executor/runtime/docker/testing/docker_proxy.h"
#include "gtest/gtest.h"
#include "tests/berthd_process.h"
#include "tools/base/subprocess.h"

namespace berth {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;


TEST(BerthdSlowStartTest, ASlowCreateHoldsUpNoOtherJob) {
  absl::BitGen gen;
  // Unix socket paths are limited to 107 bytes: not under TEST_TMPDIR.
  const std::string socket = absl::StrCat("/tmp/berth-slow-", getpid(), "-",
                                          absl::Uniform<uint32_t>(gen, 0, 1u << 30), ".sock");
  absl::StatusOr<std::unique_ptr<testing::DockerProxy>> proxy =
      testing::DockerProxy::Start(socket);
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  const std::string prefix = UniqueJobPrefix();
  const std::string quick = prefix + "quick", slow = prefix + "slow";
  testing::DockerProxy::Fault delay;
  delay.method = "POST";
  delay.kind = testing::DockerProxy::FaultKind::kDelay;
  // As long as can be under the 10 s call timeout (no retry): the quick
  // job's whole run (create, start, exit, log capture) must fit in it on a
  // loaded machine.
  delay.delay = absl::Seconds(9);
  delay.times = 1;
  // Only the slow job's create: its id ends the container name.
  delay.path_contains = slow;
  (*proxy)->AddFault(delay);

  BerthdProcessOptions o;
  o.tick = "30s";  // no tick helps: events and finished starts drive passes
  o.extra_flags = {absl::StrCat("--docker=", (*proxy)->url())};
  absl::StatusOr<std::unique_ptr<BerthdProcess>> started = BerthdProcess::Start(o);
  ASSERT_TRUE(started.ok()) << started.status();
  BerthdProcess& b = **started;
  std::unique_ptr<BerthClient> pusher = b.Client(Role::kPusher);

  v1::Snapshot s;
  s.set_generation(1);
  *s.add_jobs() = BusyboxJob(slow, "ws", 32 * kMiB, "echo slow");
  *s.add_jobs() = BusyboxJob(quick, "ws", 32 * kMiB, "echo quick");
  ASSERT_TRUE(pusher->Sync(s).ok());
  auto state = [&](const std::string& id) {
    absl::StatusOr<v1::Job> j = pusher->GetJob(id);
    return j.ok() ? j->state() : v1::JOB_STATE_UNSPECIFIED;
  };
  const absl::Time synced = absl::Now();
  ASSERT_TRUE(WaitFor([&] { return state(quick) == v1::JOB_STATE_SUCCEEDED; },
                      absl::Seconds(8)))
      << "the quick job waited for the slow create\n" << b.Log();
  EXPECT_LT(absl::Now() - synced, absl::Seconds(9));
  EXPECT_EQ(state(slow), v1::JOB_STATE_ADMITTED) << "its create still hangs";
  EXPECT_EQ((*proxy)->Seen("POST", slow), 1);

  ASSERT_TRUE(WaitFor([&] { return state(slow) == v1::JOB_STATE_SUCCEEDED; },
                      absl::Seconds(40)))
      << b.Log();
  absl::StatusOr<v1::Job> done = pusher->GetJob(slow);
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->logs_tail(), "slow\n");
  EXPECT_EQ((*proxy)->Seen("POST", absl::StrCat("create?name=berth-")), 2)
      << "each job created once";
}

}  // namespace
}  // namespace berth
