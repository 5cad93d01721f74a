// Node faults under the real berthd --runtime=swarm on the real three-node
// swarm (tools/swarm_cluster.sh up), every node sized 256 MiB: a worker whose
// dockerd is killed (kill -9) and a worker drained by the operator while
// they run berthd's jobs. Their jobs are requeued (the QUEUED event says
// why, naming the node), finish exactly once -- never two services
// (attempts) of one job at once, the attempt in the service name, and never
// two live attempts (containers) of one job (every node's containers are processes of
// this machine's kernel: the test reads /proc) -- and the drained node takes
// no new job. A killed worker's jobs keep running under its containerd: they
// are held until the node is back and their attempts ended. Each test puts the cluster back (restarts the worker's
// dockerd, sets nodes active), so the target runs alone ("exclusive") and
// outside the sandbox ("local": it signals a node's dockerd by pid).
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "executor/runtime/docker/testing/docker_test_util.h"
#include "executor/runtime/swarm/testing/swarm_test_util.h"
#include "executor/store/store.h"  // IsTerminal
#include "gtest/gtest.h"
#include "tests/swarm_berthd.h"

namespace berth {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kNode = 256 * kMiB;

// How many live attempts of each job run on this machine (all swarm nodes'
// containers included): jobs mark their shell with "fence=<id>;", and an
// attempt is a container, told apart by its PID namespace. Processes are not
// counted: while the shell forks `sleep`, the child is a copy of the marked
// shell until it execs, so one attempt can show two marked processes.
std::map<std::string, int> LiveProcesses(const std::vector<std::string>& jobs) {
  std::map<std::string, std::set<std::string>> namespaces;
  DIR* d = opendir("/proc");
  if (d == nullptr) return {};
  while (struct dirent* e = readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    // read(2), not an ifstream: a process that exits while it is read
    // fails the read with ESRCH, which libstdc++'s filebuf throws as
    // "basic_filebuf::underflow error"; such a process is simply not live.
    std::string cmd;
    const int fd = open(absl::StrCat("/proc/", e->d_name, "/cmdline").c_str(),
                        O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) > 0) cmd.append(buf, static_cast<size_t>(n));
    close(fd);
    if (n < 0) continue;
    // The job's shell itself, not the container's init (docker-init -- sh ...).
    if (!absl::StartsWith(cmd, absl::string_view("sh\0-c\0", 6))) continue;
    char ns[128];
    const ssize_t len = readlink(absl::StrCat("/proc/", e->d_name, "/ns/pid").c_str(), ns,
                                 sizeof(ns) - 1);
    if (len <= 0) continue;  // exited meanwhile
    for (const std::string& id : jobs) {
      if (absl::StrContains(cmd, absl::StrCat("fence=", id, ";"))) {
        namespaces[id].insert(std::string(ns, static_cast<size_t>(len)));
      }
    }
  }
  closedir(d);
  std::map<std::string, int> out;
  for (const auto& [id, set] : namespaces) out[id] = static_cast<int>(set.size());
  return out;
}

// The shell of a fenced job: marked for LiveProcesses, `sleep` as a child
// (not exec'd) so that the marked shell lives as long as the job.
std::string FencedShell(const std::string& id, int seconds) {
  return absl::StrCat(": fence=", id, "; sleep ", seconds, "; true");
}

// Samples the manager until every job is terminal, checking at every sample
// that no job has two services (attempts) or two live tasks at once and no
// node holds more than its size; records every service name seen per job
// and which jobs ever had a live task on each node.
struct Watcher {
  Watcher(BerthClient& c, std::string i, std::vector<std::string> j)
      : client(c), instance(std::move(i)), jobs(std::move(j)) {}
  BerthClient& client;
  std::string instance;
  std::vector<std::string> jobs;
  std::map<std::string, std::set<std::string>> names;     // job -> service names
  std::map<std::string, std::set<std::string>> on_node;   // node -> jobs seen live there
  // Set: each sample also checks that every node's reserved memory in
  // GetBudgets (read first) covers what its engine really runs.
  BerthClient* op = nullptr;
  int samples = 0;
  int overlaps = 0;  // samples with two live attempts of one job
  std::vector<absl::Time> overlap_at;  // when each such sample was taken

  bool AllTerminal() {
    for (const std::string& id : jobs) {
      absl::StatusOr<v1::Job> j = client.GetJob(id);
      if (!j.ok() || !IsTerminal(j->state())) return false;
    }
    return true;
  }
  testing::ClusterSample Sample() {
    absl::StatusOr<testing::ClusterSample> s = testing::SampleCluster(instance);
    EXPECT_TRUE(s.ok()) << s.status();
    if (!s.ok()) return {};
    ++samples;
    for (const auto& [job, services] : s->services_by_job) {
      EXPECT_LE(services.size(), 1u) << job << ": two attempts exist at once";
      names[job].insert(services.begin(), services.end());
    }
    for (const auto& [job, nodes] : s->live_nodes_by_job) {
      EXPECT_LE(nodes.size(), 1u) << job << " runs twice at once";
      for (const std::string& n : nodes) on_node[n].insert(job);
    }
    for (const auto& [node, reserved] : s->reserved_by_node) {
      EXPECT_LE(reserved, kNode) << "node " << node << " overcommitted";
    }
    bool overlap = false;
    for (const auto& [job, n] : LiveProcesses(jobs)) {
      EXPECT_LE(n, 1) << job << ": " << n << " live attempts (containers) at once";
      overlap = overlap || n > 1;
    }
    std::map<std::string, int64_t> reserved;  // node id -> Berth's reservations
    if (op != nullptr) {
      absl::StatusOr<v1::Budgets> b = op->GetBudgets();
      EXPECT_TRUE(b.ok()) << b.status();
      if (b.ok()) {
        for (const v1::NodeUse& u : b->node_use()) {
          reserved[u.node().id()] = u.reserved_memory_bytes();
        }
      }
    }
    // What each node's own engine runs (the nodes' sockets, not the manager);
    // a node whose dockerd this test killed is covered by LiveProcesses above.
    absl::StatusOr<testing::NodeProcesses> p =
        testing::SampleNodeProcesses(instance, /*skip_unreachable=*/true);
    EXPECT_TRUE(p.ok()) << p.status();
    if (p.ok()) {
      for (const auto& [job, nodes] : p->nodes_by_job) {
        EXPECT_LE(nodes.size(), 1u) << job << ": " << nodes.size() << " live containers";
        overlap = overlap || nodes.size() > 1;
      }
      for (const auto& [name, memory] : p->memory_by_node) {
        auto r = reserved.find(p->node_ids[name]);
        if (r == reserved.end()) continue;
        EXPECT_GE(r->second, memory) << "node " << name << " runs more than Berth reserves";
      }
    }
    overlaps += overlap ? 1 : 0;
    if (overlap) overlap_at.push_back(absl::Now());
    return *s;
  }
  // Samples until all jobs are terminal; false on timeout.
  bool Run(absl::Duration timeout) {
    const absl::Time deadline = absl::Now() + timeout;
    while (!AllTerminal()) {
      if (absl::Now() > deadline) return false;
      Sample();
      absl::SleepFor(absl::Milliseconds(200));  // sampling interval, not a wait
    }
    return true;
  }
};

// Starts `n` jobs of 96 MiB (two per node), waits until all run, and returns
// a worker that runs two of them with its cluster-script name.
struct Spread {
  std::vector<std::string> ids;
  std::string victim_name, victim_id;
};
Spread StartSpreadJobs(BerthClient& c, const std::string& instance, const std::string& prefix,
                      int seconds) {
  Spread out;
  v1::Snapshot snap;
  snap.set_generation(1);
  for (int i = 0; i < 6; ++i) {
    out.ids.push_back(absl::StrCat(prefix, i));
    *snap.add_jobs() =
        BusyboxJob(out.ids.back(), "ws", 96 * kMiB, FencedShell(out.ids.back(), seconds));
  }
  absl::StatusOr<v1::SyncSnapshotResponse> synced = c.Sync(snap);
  EXPECT_TRUE(synced.ok()) << synced.status();
  for (const std::string& id : out.ids) {
    absl::StatusOr<v1::Job> j = WaitJob(
        c, id, [](const v1::Job& j) { return j.state() == v1::JOB_STATE_RUNNING; },
        absl::Seconds(60));
    EXPECT_TRUE(j.ok()) << j.status();
  }
  // RUNNING in berthd's view once the service exists: wait until the
  // manager has put every job's task on a node.
  absl::StatusOr<testing::ClusterSample> s;
  const bool placed = testing::WaitFor(
      [&] {
        s = testing::SampleCluster(instance);
        return s.ok() && s->live_nodes_by_job.size() == out.ids.size();
      },
      absl::Seconds(60));
  EXPECT_TRUE(placed) << (s.ok() ? "not all placed" : s.status().ToString());
  if (!s.ok()) return out;
  std::map<std::string, int> per_node;
  for (const auto& [job, nodes] : s->live_nodes_by_job) {
    for (const std::string& n : nodes) ++per_node[n];
  }
  std::string seen;
  for (const auto& [name, id] : testing::WorkerNodeIds()) {
    absl::StrAppend(&seen, name, "=", id, ":", per_node[id], " ");
    if (per_node[id] == 2 && out.victim_id.empty()) {
      out.victim_name = name;
      out.victim_id = id;
    }
  }
  EXPECT_FALSE(out.victim_id.empty()) << "no worker runs two jobs: " << seen;
  return out;
}

// The events of `job` in order, as "STATE" or "STATE: message" for QUEUED.
std::vector<v1::Event> EventsOf(const std::vector<v1::Event>& all, const std::string& job) {
  std::vector<v1::Event> out;
  for (const v1::Event& e : all) {
    if (e.job_id() == job) out.push_back(e);
  }
  return out;
}

// A requeued job: RUNNING (attempt 0) -> QUEUED with `why` -> ... ->
// SUCCEEDED, requeued once, on another node if `elsewhere`, both attempts'
// services seen.
void ExpectRequeuedOnce(BerthClient& c, const Watcher& w, const std::vector<v1::Event>& events,
                        const std::string& job, const std::string& lost_node,
                        const std::string& why, bool elsewhere) {
  absl::StatusOr<v1::Job> j = c.GetJob(job);
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ(j->state(), v1::JOB_STATE_SUCCEEDED) << job << ": " << j->message();
  EXPECT_EQ(j->requeue_count(), 1) << job;
  if (elsewhere) {
    EXPECT_NE(j->node(), lost_node) << job << " finished on the node it was taken off";
  }
  int running = 0, requeues = 0;
  for (const v1::Event& e : EventsOf(events, job)) {
    if (e.state() == v1::JOB_STATE_RUNNING) ++running;
    if (e.state() == v1::JOB_STATE_QUEUED && e.previous_state() != v1::JOB_STATE_UNSPECIFIED) {
      ++requeues;
      EXPECT_EQ(running, 1) << job << ": requeued before it ran once";
      EXPECT_TRUE(absl::StrContains(e.message(), why)) << e.message();
    }
  }
  EXPECT_EQ(running, 2) << job;
  EXPECT_EQ(requeues, 1) << job;
  auto names = w.names.find(job);
  ASSERT_NE(names, w.names.end()) << job;
  bool a1 = false, a2 = false;
  for (const std::string& n : names->second) {
    a1 = a1 || absl::EndsWith(n, "-a1");
    a2 = a2 || absl::EndsWith(n, "-a2");
  }
  EXPECT_TRUE(a1 && a2) << job << ": both attempts' services, counted from 1 in the name";
}

// Every job succeeded: those of the lost node requeued once (ExpectRequeuedOnce),
// the others never.
void ExpectOutcomes(BerthClient& c, const Watcher& w, const std::vector<std::string>& ids,
                    const std::set<std::string>& on_victim, const std::string& victim_id,
                    const std::string& why, bool elsewhere) {
  absl::StatusOr<std::vector<v1::Event>> events = EventsUntilTerminal(c, w.jobs);
  ASSERT_TRUE(events.ok()) << events.status();
  for (const std::string& id : ids) {
    if (on_victim.count(id)) {
      ExpectRequeuedOnce(c, w, *events, id, victim_id, why, elsewhere);
      continue;
    }
    absl::StatusOr<v1::Job> j = c.GetJob(id);
    ASSERT_TRUE(j.ok());
    EXPECT_EQ(j->state(), v1::JOB_STATE_SUCCEEDED) << id;
    EXPECT_EQ(j->requeue_count(), 0) << id;
  }
}

// Each test: berthd on 256 MiB nodes running six jobs, two on the victim
// worker; TearDown puts the cluster back, pass or fail.
class BerthdSwarmFaults : public ::testing::Test {
 protected:
  void Begin(const std::string& prefix, int seconds) {
    absl::StatusOr<std::unique_ptr<BerthdProcess>> started = StartSwarmBerthd(kNode);
    ASSERT_TRUE(started.ok()) << started.status();
    b_ = *std::move(started);
    c_ = b_->Client(Role::kPusher);
    s_ = StartSpreadJobs(*c_, b_->instance(), prefix, seconds);
    ASSERT_FALSE(s_.victim_id.empty()) << "no worker runs two jobs\n" << b_->Log();
    op_ = b_->Client(Role::kOperator);
    w_ = std::make_unique<Watcher>(*c_, b_->instance(), s_.ids);
    w_->op = op_.get();
    w_->Sample();
    on_victim_ = w_->on_node[s_.victim_id];
    ASSERT_EQ(on_victim_.size(), 2u);
  }
  void TearDown() override {
    absl::Status s = testing::RestoreCluster(absl::Seconds(90));
    EXPECT_TRUE(s.ok()) << "cluster not restored: " << s;
    if (b_ != nullptr) (void)testing::RemoveInstanceServices(b_->instance());
  }
  std::unique_ptr<BerthdProcess> b_;
  std::unique_ptr<BerthClient> c_, op_;
  Spread s_;
  std::unique_ptr<Watcher> w_;
  std::set<std::string> on_victim_;
};

TEST_F(BerthdSwarmFaults, KilledWorkerHoldsItsJobsUntilTheirAttemptsEndedNeverTwiceAtOnce) {
  const std::string p = UniqueJobPrefix() + "k";
  // Long enough to still run when the node's dockerd comes back (and stops it).
  ASSERT_NO_FATAL_FAILURE(Begin(p, 50));
  const absl::Time t0 = absl::Now();
  ASSERT_TRUE(testing::KillWorkerDaemon(s_.victim_name).ok());
  // The dangerous window: the manager marks the node Down (and used to end
  // its tasks) while containerd keeps the jobs running there. Sampled for
  // 25 s with the node held down: the jobs stay RUNNING, are not requeued,
  // and their first attempts are still alive.
  const absl::Time hold_until = t0 + absl::Seconds(25);
  while (absl::Now() < hold_until) {
    w_->Sample();
    absl::SleepFor(absl::Milliseconds(200));  // sampling interval, not a wait
  }
  const std::map<std::string, int> alive = LiveProcesses(s_.ids);
  for (const std::string& id : on_victim_) {
    absl::StatusOr<v1::Job> j = c_->GetJob(id);
    ASSERT_TRUE(j.ok()) << j.status();
    EXPECT_EQ(j->state(), v1::JOB_STATE_RUNNING) << id << ": " << j->message();
    EXPECT_EQ(j->requeue_count(), 0) << id << ": requeued while its node was lost";
    EXPECT_EQ(alive.count(id) ? alive.at(id) : 0, 1)
        << id << ": its first attempt should still run under the dead node's containerd";
    // berthctl explain says why it waits, on which node, and the override.
    absl::StatusOr<v1::Explanation> e = c_->ExplainJob(id);
    ASSERT_TRUE(e.ok()) << e.status();
    EXPECT_TRUE(absl::StrContains(e->held(), absl::StrCat(s_.victim_id, ") lost at ")))
        << id << ": " << e->held();
    EXPECT_TRUE(absl::StrContains(e->held(), "requeue once the node is back")) << e->held();
    EXPECT_TRUE(absl::StrContains(e->held(),
                                  absl::StrCat("docker node rm --force ", s_.victim_id)))
        << e->held();
    EXPECT_TRUE(absl::StrContains(e->summary(), "Held, its node was lost")) << e->summary();
  }
  // The node comes back: its dockerd (no live-restore) stops the old
  // containers, the tasks end, and after the settle the jobs are requeued.
  const absl::Time back = absl::Now();
  absl::Status restored = testing::RestoreCluster(absl::Seconds(90));
  ASSERT_TRUE(restored.ok()) << restored;
  ASSERT_TRUE(w_->Run(absl::Seconds(240))) << "jobs not done in time\n" << b_->Log();
  const absl::Duration all_done = absl::Now() - t0;

  ExpectOutcomes(*c_, *w_, s_.ids, on_victim_, s_.victim_id,
                 absl::StrCat(s_.victim_id, ")"), /*elsewhere=*/false);
  absl::StatusOr<std::vector<v1::Event>> events = EventsUntilTerminal(*c_, w_->jobs);
  ASSERT_TRUE(events.ok()) << events.status();
  for (const std::string& id : on_victim_) {
    for (const v1::Event& e : EventsOf(*events, id)) {
      if (e.state() != v1::JOB_STATE_QUEUED || e.previous_state() != v1::JOB_STATE_RUNNING) {
        continue;
      }
      EXPECT_TRUE(absl::StrContains(e.message(), "came back")) << e.message();
      EXPECT_FALSE(absl::StrContains(e.message(), "exit")) << e.message();
      EXPECT_FALSE(e.has_exit_code()) << e.exit_code();
      const absl::Time requeued = absl::FromUnixSeconds(e.time().seconds());
      std::printf("swarm kill -9 of %s: %s requeued %s after the kill, %s after the node "
                  "was let back (%s)\n",
                  s_.victim_name.c_str(), id.c_str(),
                  absl::FormatDuration(requeued - t0).c_str(),
                  absl::FormatDuration(requeued - back).c_str(), e.message().c_str());
    }
  }
  EXPECT_EQ(w_->overlaps, 0);
  for (absl::Time at : w_->overlap_at) {
    std::printf("two live attempts of one job at %s after the kill, %s after the node was let "
                "back\n",
                absl::FormatDuration(at - t0).c_str(), absl::FormatDuration(at - back).c_str());
  }
  if (w_->overlaps > 0) std::printf("berthd's log:\n%s\n", b_->Log().c_str());
  std::printf("swarm kill -9 of %s: 6 jobs done %s after the kill; two live attempts of one "
              "job in %d of %d samples\n",
              s_.victim_name.c_str(), absl::FormatDuration(all_done).c_str(), w_->overlaps,
              w_->samples);
}

TEST_F(BerthdSwarmFaults, DrainedWorkerRequeuesItsJobsAndTakesNoNewOne) {
  const std::string p = UniqueJobPrefix() + "d";
  // Long enough that an old attempt left running would overlap its requeue.
  ASSERT_NO_FATAL_FAILURE(Begin(p, 30));
  const absl::Time t0 = absl::Now();
  ASSERT_TRUE(testing::SetNodeAvailability(s_.victim_id, "drain").ok());
  // A job that arrives after the drain never goes to the drained node.
  ASSERT_TRUE(WaitJob(*c_, *on_victim_.begin(),
                      [](const v1::Job& j) { return j.requeue_count() > 0; },
                      absl::Seconds(30))
                  .ok())
      << b_->Log();
  v1::Snapshot snap;
  snap.set_generation(2);
  for (const std::string& id : s_.ids) {
    *snap.add_jobs() = BusyboxJob(id, "ws", 96 * kMiB, FencedShell(id, 30));
  }
  const std::string late = p + "late";
  *snap.add_jobs() = BusyboxJob(late, "ws", 96 * kMiB, FencedShell(late, 1));
  ASSERT_TRUE(c_->Sync(snap).ok());
  w_->jobs.push_back(late);
  ASSERT_TRUE(w_->Run(absl::Seconds(120))) << "jobs not done in time\n" << b_->Log();
  const absl::Duration all_done = absl::Now() - t0;

  // Only the two jobs it ran before the drain were ever live on it.
  EXPECT_EQ(w_->on_node[s_.victim_id], on_victim_);
  absl::StatusOr<v1::Job> l = c_->GetJob(late);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->state(), v1::JOB_STATE_SUCCEEDED);
  EXPECT_NE(l->node(), s_.victim_id);
  ExpectOutcomes(*c_, *w_, s_.ids, on_victim_, s_.victim_id,
                 absl::StrCat("requeued: its node ", s_.victim_id, " is drained"),
                 /*elsewhere=*/true);
  EXPECT_EQ(w_->overlaps, 0);
  std::printf("swarm drain of %s: its 2 jobs requeued and done elsewhere %s after the drain"
              "; two live attempts of one job in %d of %d samples\n",
              s_.victim_name.c_str(), absl::FormatDuration(all_done).c_str(), w_->overlaps,
              w_->samples);
}

}  // namespace
}  // namespace berth
