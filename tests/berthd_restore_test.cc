// A restore into a world that moved on (DESIGN.md "Recovery"): a backup is
// taken while jobs run and others wait; after it, the running ones succeed
// (their containers removed) and the waiting ones start (one finishes, one
// runs on); berthd is killed and started on a copy of the backup. Nothing
// runs twice (each job's container counts its runs in the workspace; the
// running one keeps its container and start time), no outcome is rewritten
// (the succeeded jobs are SUCCEEDED with exit code 0 from their run
// metadata), a job submitted after the backup and running at the restore
// keeps its container once the first sync names it again, no revision is
// reused (a follower from the old head gets
// FAILED_PRECONDITION naming the new epoch), and the backup's kept logs read
// back. Real berthd, real Docker, RocksDB on a temp dir.
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "executor/runtime/docker/testing/docker_test_util.h"
#include "gtest/gtest.h"
#include "tests/berthd_process.h"
#include "tests/read_job_log.h"
#include "tools/base/subprocess.h"

namespace berth {
namespace {

namespace fs = std::filesystem;
using ::berth::testing::WaitFor;

constexpr int64_t kMiB = int64_t{1} << 20;

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// What Docker says of a container: State.StartedAt.
std::string DockerStartedAt(const std::string& container) {
  const std::string cmd =
      absl::StrCat("docker inspect --format '{{.State.StartedAt}}' ", container, " 2>&1");
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return "";
  char buf[256] = {};
  std::string out = fgets(buf, sizeof(buf), p) != nullptr ? buf : "";
  pclose(p);
  return std::string(absl::StripAsciiWhitespace(out));
}

absl::Time FromProto(const google::protobuf::Timestamp& t) {
  return absl::FromUnixSeconds(t.seconds()) + absl::Nanoseconds(t.nanos());
}

class BerthdRestoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = absl::StrCat(TmpDir(), "/", UniqueJobPrefix(), "workspaces");
    ASSERT_EQ(mkdir(root_.c_str(), 0755), 0);
    ASSERT_EQ(mkdir((root_ + "/ws").c_str(), 0755), 0);
    backups_ = absl::StrCat(TmpDir(), "/", UniqueJobPrefix(), "backups");
    p_ = UniqueJobPrefix();
  }

  BerthdProcessOptions Options() const {
    BerthdProcessOptions o;
    o.tick = "200ms";
    o.extra_flags = {"--workspaces_root=" + root_, "--write_run_metadata",
                     "--backup_root=" + backups_};
    return o;
  }

  // A job that counts its runs in the workspace, then runs `rest`.
  v1::JobSpec CountingJob(const std::string& name, const std::string& rest) const {
    return BusyboxJob(p_ + name, "ws", 16 * kMiB,
                      absl::StrCat("echo run >> /workspace/runs-", name, "; ", rest));
  }

  int Runs(const std::string& name) const {
    const std::string text = ReadFile(absl::StrCat(root_, "/ws/runs-", name));
    return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  }

  v1::Snapshot Snapshot(uint64_t generation, const std::vector<v1::JobSpec>& jobs) const {
    v1::Snapshot s;
    s.set_generation(generation);
    for (const v1::JobSpec& j : jobs) *s.add_jobs() = j;
    return s;
  }

  bool AwaitState(BerthdProcess& b, const std::string& name, v1::JobState want) {
    std::unique_ptr<BerthClient> c = b.Client(Role::kReader);
    return WaitFor(
        [&] {
          absl::StatusOr<v1::Job> j = c->GetJob(p_ + name);
          return j.ok() && j->state() == want;
        },
        absl::Seconds(60));
  }

  v1::Job Get(BerthdProcess& b, const std::string& name) {
    absl::StatusOr<v1::Job> j = b.Client(Role::kReader)->GetJob(p_ + name);
    EXPECT_TRUE(j.ok()) << name << ": " << j.status();
    return j.value_or(v1::Job());
  }

  std::string root_, backups_, p_;
};

TEST_F(BerthdRestoreTest, ARestoreIntoAWorldThatMovedOnNeverRerunsOrRewrites) {
  absl::StatusOr<std::unique_ptr<BerthdProcess>> a_started = BerthdProcess::Start(Options());
  ASSERT_TRUE(a_started.ok()) << a_started.status();
  BerthdProcess& a = **a_started;
  std::unique_ptr<BerthClient> pusher = a.Client(Role::kPusher);
  std::unique_ptr<BerthClient> op = a.Client(Role::kOperator);

  // Before the backup: "pre" ends (its log is kept); three jobs run, held
  // by a gate file; two more are queued (admission paused).
  const std::string gate =
      "while [ ! -e /workspace/go ]; do sleep 0.1; done; echo passed-the-gate; echo gate-err >&2";
  std::vector<v1::JobSpec> jobs = {CountingJob("pre", "echo hello-pre"),
                                   CountingJob("fin-0", gate), CountingJob("fin-1", gate),
                                   CountingJob("fin-2", gate)};
  ASSERT_TRUE(pusher->Sync(Snapshot(1, jobs)).ok());
  ASSERT_TRUE(AwaitState(a, "pre", v1::JOB_STATE_SUCCEEDED)) << a.Log();
  for (const char* f : {"fin-0", "fin-1", "fin-2"}) {
    ASSERT_TRUE(AwaitState(a, f, v1::JOB_STATE_RUNNING)) << f << a.Log();
  }
  ASSERT_TRUE(op->Pause("hold the queued jobs until the backup").ok());
  jobs.push_back(CountingJob("q-long", "sleep 600"));
  jobs.push_back(CountingJob("q-done", "true"));
  ASSERT_TRUE(pusher->Sync(Snapshot(2, jobs)).ok());
  absl::StatusOr<v1::BackupResponse> backup = op->Backup("before");
  ASSERT_TRUE(backup.ok()) << backup.status();
  EXPECT_GE(backup->log_files(), 1) << "pre's kept log";
  EXPECT_FALSE(backup->epoch().empty());

  // The world moves on: the queued jobs start, the gated ones succeed.
  ASSERT_TRUE(op->Resume().ok());
  ASSERT_TRUE(AwaitState(a, "q-long", v1::JOB_STATE_RUNNING)) << a.Log();
  ASSERT_TRUE(AwaitState(a, "q-done", v1::JOB_STATE_SUCCEEDED)) << a.Log();
  // A job the backup never had: submitted after it, running at the restore.
  jobs.push_back(CountingJob("late", "sleep 600"));
  ASSERT_TRUE(pusher->Sync(Snapshot(3, jobs)).ok());
  ASSERT_TRUE(AwaitState(a, "late", v1::JOB_STATE_RUNNING)) << a.Log();
  const std::string late_container = Get(a, "late").container_id();
  std::ofstream(root_ + "/ws/go") << "go\n";
  for (const char* f : {"fin-0", "fin-1", "fin-2"}) {
    ASSERT_TRUE(AwaitState(a, f, v1::JOB_STATE_SUCCEEDED)) << f << a.Log();
  }
  const v1::Job long_before = Get(a, "q-long");
  const std::string docker_started = DockerStartedAt(long_before.container_id());
  ASSERT_FALSE(docker_started.empty());
  // A follower that read to the head of this history.
  absl::StatusOr<v1::Plan> plan = a.Client(Role::kReader)->GetPlan(1);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const uint64_t head = plan->revision();
  ASSERT_GT(head, backup->revision());
  const std::string old_epoch = backup->epoch();

  // berthd dies; it is started on a copy of the backup, as documented.
  a.Kill9();
  const std::string restored = absl::StrCat(TmpDir(), "/", UniqueJobPrefix(), "restored");
  fs::copy(backup->path(), restored, fs::copy_options::recursive);
  BerthdProcessOptions r = Options();
  r.data_dir = restored;
  r.instance = a.instance();
  absl::StatusOr<std::unique_ptr<BerthdProcess>> b_started = BerthdProcess::Start(r);
  ASSERT_TRUE(b_started.ok()) << b_started.status();
  BerthdProcess& b = **b_started;
  EXPECT_TRUE(absl::StrContains(b.Log(), "store restored from a backup")) << b.Log();
  // Killed again before any sync: the restart must hold "late" as well (the
  // epoch record keeps the backup's generation), not stop it as an orphan.
  constexpr char kHeld[] = "does not know are held";
  ASSERT_TRUE(WaitFor([&] { return absl::StrContains(b.Log(), kHeld); }, absl::Seconds(60)))
      << b.Log();
  b.Kill9();
  ASSERT_TRUE(b.Restart().ok()) << b.Log();  // the log is appended to
  const auto count = [&](const std::string& what) {
    const std::string log = b.Log();
    int n = 0;
    for (size_t at = log.find(what); at != std::string::npos; at = log.find(what, at + 1)) ++n;
    return n;
  };
  ASSERT_TRUE(WaitFor([&] { return count(kHeld) == 2; }, absl::Seconds(60))) << b.Log();
  EXPECT_EQ(count("store restored from a backup"), 1) << "the epoch began once:\n" << b.Log();
  // The backup held the pause; the operator resumes as after any restore.
  ASSERT_TRUE(b.Client(Role::kOperator)->Resume().ok());
  // The job-server's first sync after the restore still names "late":
  // its container, held meanwhile, is adopted, not stopped and run again.
  ASSERT_TRUE(b.Client(Role::kPusher)->Sync(Snapshot(4, jobs)).ok());
  ASSERT_TRUE(AwaitState(b, "late", v1::JOB_STATE_RUNNING)) << b.Log();
  EXPECT_EQ(Get(b, "late").container_id(), late_container);
  EXPECT_TRUE(absl::StrContains(Get(b, "late").message(), "adopted")) << Get(b, "late").message();

  // No outcome rewritten: the jobs that succeeded after the backup are
  // SUCCEEDED with exit code 0, from their run metadata.
  for (const char* f : {"fin-0", "fin-1", "fin-2", "q-done"}) {
    ASSERT_TRUE(AwaitState(b, f, v1::JOB_STATE_SUCCEEDED)) << f << "\n" << b.Log();
    const v1::Job j = Get(b, f);
    EXPECT_TRUE(j.has_exit_code()) << f;
    EXPECT_EQ(j.exit_code(), 0) << f;
    EXPECT_TRUE(absl::StrContains(j.message(), "run metadata")) << f << ": " << j.message();
  }
  // Nothing ran twice: the running job kept its container and start time.
  ASSERT_TRUE(AwaitState(b, "q-long", v1::JOB_STATE_RUNNING)) << b.Log();
  const v1::Job long_after = Get(b, "q-long");
  EXPECT_EQ(long_after.container_id(), long_before.container_id());
  EXPECT_EQ(DockerStartedAt(long_after.container_id()), docker_started);
  EXPECT_LE(FromProto(long_after.started_at()), FromProto(long_before.started_at()));
  EXPECT_GT(FromProto(long_after.started_at()),
            FromProto(long_before.started_at()) - absl::Seconds(5));
  EXPECT_EQ(long_after.attempt(), 1);
  for (const char* name : {"pre", "fin-0", "fin-1", "fin-2", "q-long", "q-done", "late"}) {
    EXPECT_EQ(Runs(name), 1) << name << " ran " << Runs(name) << " times";
  }

  // No revision reused: a follower from the old head is refused, told the
  // new epoch and where to resume.
  {
    std::unique_ptr<BerthClient> reader = b.Client(Role::kReader);
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", "Bearer " + TokenFor(Role::kReader));
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::WatchEventsRequest req;
    req.set_from_revision(head);
    req.set_epoch(old_epoch);
    auto stream = reader->stub().WatchEvents(&ctx, req);
    v1::Event e;
    EXPECT_FALSE(stream->Read(&e));
    grpc::Status s = stream->Finish();
    EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
    const auto& trailers = ctx.GetServerTrailingMetadata();
    auto epoch = trailers.find("berth-epoch");
    ASSERT_NE(epoch, trailers.end());
    const std::string new_epoch(epoch->second.data(), epoch->second.size());
    EXPECT_NE(new_epoch, old_epoch);
    EXPECT_TRUE(absl::StrContains(s.error_message(), new_epoch)) << s.error_message();
    auto resume = trailers.find("berth-resume-revision");
    ASSERT_NE(resume, trailers.end());
    EXPECT_EQ(std::string(resume->second.data(), resume->second.size()),
              absl::StrCat(backup->revision()));
  }

  // The backup's kept log reads back.
  JobLogRead log = ReadJobLog(*b.Client(Role::kOperator), p_ + "pre");
  EXPECT_TRUE(log.status.ok()) << log.status;
  EXPECT_TRUE(absl::StrContains(log.out, "hello-pre")) << log.out;
  // The log of a run that ended after the backup, kept from beside its run
  // metadata: the restored store never captured it.
  for (const char* f : {"fin-0", "fin-1", "fin-2"}) {
    JobLogRead fin = ReadJobLog(*b.Client(Role::kOperator), p_ + f);
    EXPECT_TRUE(fin.status.ok()) << f << ": " << fin.status;
    EXPECT_EQ(fin.out, "passed-the-gate\n") << f;
    EXPECT_EQ(fin.err, "gate-err\n") << f;
  }

  // Job-server's next sync still rules the job list: q-long and late withdrawn.
  // One a sync: withdrawing both at once trips the mass-cancel guard.
  jobs.erase(jobs.begin() + 4);  // q-long
  ASSERT_TRUE(b.Client(Role::kPusher)->Sync(Snapshot(5, jobs)).ok());
  EXPECT_TRUE(AwaitState(b, "q-long", v1::JOB_STATE_CANCELLED)) << b.Log();
  EXPECT_EQ(Runs("q-long"), 1);
  jobs.pop_back();  // late
  ASSERT_TRUE(b.Client(Role::kPusher)->Sync(Snapshot(6, jobs)).ok());
  EXPECT_TRUE(AwaitState(b, "late", v1::JOB_STATE_CANCELLED)) << b.Log();
  EXPECT_EQ(Runs("late"), 1);
}

}  // namespace
}  // namespace berth
