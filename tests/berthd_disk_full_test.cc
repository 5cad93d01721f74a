// A full disk degrades berthd, never stops it: the real berthd keeps its
// data dir on a small tmpfs (mounted by the test, which runs as root) that
// the test fills with a file while a job runs on the real Docker, and later
// frees. While full: berthd stays up, health "berth.store" is NOT_SERVING
// ("" and berth.v1.Executor stay SERVING), /metrics says
// berth_store_writable 0, reads and ExplainJob answer, and every sync gets
// RESOURCE_EXHAUSTED saying why. Once freed, without a restart: the store
// accepts writes, a sync succeeds, the job that ended meanwhile is recorded,
// and a restart finds everything acknowledged.
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "executor/store/tmpfs_testing.h"
#include "tests/berthd_process.h"

namespace berth {
namespace {

namespace fs = std::filesystem;
using HealthStatus = grpc::health::v1::HealthCheckResponse;
constexpr int64_t kMiB = int64_t{1} << 20;

HealthStatus::ServingStatus Health(const BerthdProcess& b, const std::string& service) {
  auto stub = grpc::health::v1::Health::NewStub(
      grpc::CreateChannel(b.target(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  HealthStatus response;
  if (!stub->Check(&context, request, &response).ok()) return HealthStatus::UNKNOWN;
  return response.status();
}

// An unlabelled metric's value; -1 when absent or unreadable.
double Metric(const BerthdProcess& b, const std::string& name) {
  absl::StatusOr<std::string> m = b.Metrics();
  if (!m.ok()) return -1;
  for (absl::string_view line : absl::StrSplit(*m, '\n')) {
    double v = 0;
    if (absl::StartsWith(line, name + " ") &&
        absl::SimpleAtod(line.substr(name.size() + 1), &v)) {
      return v;
    }
  }
  return -1;
}

bool WaitFor(const std::function<bool()>& done, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (done()) return true;
    absl::SleepFor(absl::Milliseconds(100));
  }
  return done();
}

v1::JobState State(BerthClient& c, const std::string& id) {
  absl::StatusOr<v1::Job> j = c.GetJob(id);
  return j.ok() ? j->state() : v1::JOB_STATE_UNSPECIFIED;
}

v1::Snapshot Generation(uint64_t generation, const std::vector<v1::JobSpec>& jobs) {
  v1::Snapshot s;
  s.set_generation(generation);
  for (v1::JobSpec j : jobs) {
    j.set_priority(static_cast<int32_t>(generation));
    *s.add_jobs() = std::move(j);
  }
  return s;
}

TEST(BerthdDiskFullTest, DegradesWhileFullAndResumesWithoutRestart) {
  const char* base = std::getenv("TEST_TMPDIR");
  testing::Tmpfs tmpfs(
      absl::StrCat(base != nullptr ? base : "/tmp", "/diskfull-", getpid()), 64);
  ASSERT_EQ(tmpfs.error(), "");
  BerthdProcessOptions o;
  o.data_dir = tmpfs.dir() + "/data";
  o.tick = "200ms";
  absl::StatusOr<std::unique_ptr<BerthdProcess>> started = BerthdProcess::Start(o);
  ASSERT_TRUE(started.ok()) << started.status();
  BerthdProcess& b = **started;
  const pid_t pid = b.pid();
  std::unique_ptr<BerthClient> pusher = b.Client(Role::kPusher);
  std::unique_ptr<BerthClient> reader = b.Client(Role::kReader);
  ASSERT_TRUE(WaitFor([&] { return Health(b, "berth.store") == HealthStatus::SERVING; },
                      absl::Seconds(10)));

  // `early` ends before the disk fills; `across` runs on while it is full
  // and ends then (its outcome is recorded once there is room); `later`
  // arrives after.
  const std::string prefix = UniqueJobPrefix();
  const std::string early = prefix + "early", across = prefix + "across",
                    later = prefix + "later";
  std::vector<v1::JobSpec> jobs = {
      BusyboxJob(early, "ws", 32 * kMiB, "echo early"),
      BusyboxJob(across, "ws", 32 * kMiB, "echo start; sleep 8; echo done")};
  uint64_t generation = 1;
  ASSERT_TRUE(pusher->Sync(Generation(generation, jobs)).ok());
  ASSERT_TRUE(WaitFor(
      [&] {
        return State(*reader, early) == v1::JOB_STATE_SUCCEEDED &&
               State(*reader, across) == v1::JOB_STATE_RUNNING;
      },
      absl::Seconds(30)))
      << b.Log();

  tmpfs.Fill();
  // Syncs that change every job until one is refused (RocksDB preallocates
  // its log file, so the first writes may still fit).
  absl::Status refused;
  for (int i = 0; i < 500 && refused.ok(); ++i) {
    absl::StatusOr<v1::SyncSnapshotResponse> r = pusher->Sync(Generation(generation + 1, jobs));
    if (r.ok()) {
      ++generation;
    } else {
      refused = r.status();
    }
  }
  ASSERT_EQ(refused.code(), absl::StatusCode::kResourceExhausted) << refused << b.Log();
  EXPECT_TRUE(absl::StrContains(refused.message(), "No space left on device")) << refused;
  ASSERT_TRUE(WaitFor([&] { return Health(b, "berth.store") == HealthStatus::NOT_SERVING; },
                      absl::Seconds(10)))
      << b.Log();
  EXPECT_EQ(Health(b, ""), HealthStatus::SERVING);
  EXPECT_EQ(Health(b, "berth.v1.Executor"), HealthStatus::SERVING);
  EXPECT_EQ(Metric(b, "berth_store_writable"), 0);

  // Full for longer than RocksDB's own recovery interval (5 s, where it
  // used to abort) and until `across` has exited: berthd up, reads and
  // explanations answer, every sync refused saying why.
  const absl::Time full_until = absl::Now() + absl::Seconds(12);
  int rounds = 0;
  while (absl::Now() < full_until) {
    ASSERT_TRUE(b.Running()) << b.Log();
    absl::StatusOr<v1::SyncSnapshotResponse> r = pusher->Sync(Generation(generation + 1, jobs));
    EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted) << r.status();
    EXPECT_TRUE(absl::StrContains(r.status().message(), "refuses writes")) << r.status();
    EXPECT_TRUE(reader->GetPlan().ok());
    EXPECT_TRUE(reader->ExplainJob(across).ok());
    EXPECT_EQ(State(*reader, early), v1::JOB_STATE_SUCCEEDED);
    EXPECT_EQ(Metric(b, "berth_store_writable"), 0);
    ++rounds;
    absl::SleepFor(absl::Milliseconds(500));
  }
  EXPECT_GE(rounds, 5);
  EXPECT_EQ(b.pid(), pid);

  tmpfs.Free();
  const absl::Time freed = absl::Now();
  ASSERT_TRUE(WaitFor([&] { return Health(b, "berth.store") == HealthStatus::SERVING; },
                      absl::Seconds(30)))
      << b.Log();
  std::cout << "store writable again " << absl::ToDoubleSeconds(absl::Now() - freed)
            << " s after the disk was freed (probe every 5 s)\n";
  EXPECT_EQ(Metric(b, "berth_store_writable"), 1);
  jobs.push_back(BusyboxJob(later, "ws", 32 * kMiB, "echo later"));
  absl::StatusOr<v1::SyncSnapshotResponse> synced = pusher->Sync(Generation(generation + 1, jobs));
  ASSERT_TRUE(synced.ok()) << synced.status() << b.Log();
  ++generation;
  EXPECT_TRUE(WaitFor(
      [&] {
        return State(*reader, across) == v1::JOB_STATE_SUCCEEDED &&
               State(*reader, later) == v1::JOB_STATE_SUCCEEDED;
      },
      absl::Seconds(60)))
      << b.Log();
  EXPECT_EQ(b.pid(), pid) << "berthd restarted";

  // Nothing lost: a restart finds what was acknowledged.
  ASSERT_EQ(b.Terminate(absl::Seconds(20)), 0) << b.Log();
  ASSERT_TRUE(b.Restart().ok()) << b.Log();
  std::unique_ptr<BerthClient> after = b.Client(Role::kReader);
  for (const std::string& id : {early, across, later}) {
    absl::StatusOr<v1::Job> j = after->GetJob(id);
    ASSERT_TRUE(j.ok()) << id << ": " << j.status();
    EXPECT_EQ(j->state(), v1::JOB_STATE_SUCCEEDED) << id;
  }
  EXPECT_EQ(after->GetJob(later)->spec().priority(), static_cast<int32_t>(generation));
}

}  // namespace
}  // namespace berth
