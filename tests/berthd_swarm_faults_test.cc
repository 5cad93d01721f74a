// Node faults under the real berthd --runtime=swarm on the real three-node
// swarm (tools/swarm_cluster.sh up), every node sized 256 MiB: a worker whose
// dockerd is killed (kill -9) and a worker drained by the operator while
// they run berthd's jobs. Their jobs are requeued (the QUEUED event says
// why), finish on another node exactly once -- never two services (attempts)
// of one job at once, the attempt in the service name -- and the drained node
// takes no new job. Each test puts the cluster back (restarts the worker's
// dockerd, sets nodes active), so the target runs alone ("exclusive") and
// outside the sandbox ("local": it signals a node's dockerd by pid).
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
  int samples = 0;

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
                      const std::string& shell) {
  Spread out;
  v1::Snapshot snap;
  snap.set_generation(1);
  for (int i = 0; i < 6; ++i) {
    out.ids.push_back(absl::StrCat(prefix, i));
    *snap.add_jobs() = BusyboxJob(out.ids.back(), "ws", 96 * kMiB, shell);
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
// SUCCEEDED, requeued once, on another node, both attempts' services seen.
void ExpectRequeuedOnce(BerthClient& c, const Watcher& w, const std::vector<v1::Event>& events,
                        const std::string& job, const std::string& lost_node,
                        const std::string& why) {
  absl::StatusOr<v1::Job> j = c.GetJob(job);
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ(j->state(), v1::JOB_STATE_SUCCEEDED) << job << ": " << j->message();
  EXPECT_EQ(j->requeue_count(), 1) << job;
  EXPECT_NE(j->node(), lost_node) << job << " finished on the node it was taken off";
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
  bool a0 = false, a1 = false;
  for (const std::string& n : names->second) {
    a0 = a0 || absl::EndsWith(n, "-a0");
    a1 = a1 || absl::EndsWith(n, "-a1");
  }
  EXPECT_TRUE(a0 && a1) << job << ": both attempts' services, the attempt in the name";
}

// Every job succeeded: those of the lost node requeued once (ExpectRequeuedOnce),
// the others never.
void ExpectOutcomes(BerthClient& c, const Watcher& w, const std::vector<std::string>& ids,
                    const std::set<std::string>& on_victim, const std::string& victim_id,
                    const std::string& why) {
  absl::StatusOr<std::vector<v1::Event>> events = EventsUntilTerminal(c, w.jobs);
  ASSERT_TRUE(events.ok()) << events.status();
  for (const std::string& id : ids) {
    if (on_victim.count(id)) {
      ExpectRequeuedOnce(c, w, *events, id, victim_id, why);
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
  void Begin(const std::string& prefix, const std::string& shell) {
    absl::StatusOr<std::unique_ptr<BerthdProcess>> started = StartSwarmBerthd(kNode);
    ASSERT_TRUE(started.ok()) << started.status();
    b_ = *std::move(started);
    c_ = b_->Client(Role::kPusher);
    s_ = StartSpreadJobs(*c_, b_->instance(), prefix, shell);
    ASSERT_FALSE(s_.victim_id.empty()) << "no worker runs two jobs\n" << b_->Log();
    w_ = std::make_unique<Watcher>(*c_, b_->instance(), s_.ids);
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
  std::unique_ptr<BerthClient> c_;
  Spread s_;
  std::unique_ptr<Watcher> w_;
  std::set<std::string> on_victim_;
};

TEST_F(BerthdSwarmFaults, KilledWorkerRequeuesItsJobsWhichFinishElsewhereOnce) {
  ASSERT_NO_FATAL_FAILURE(Begin(UniqueJobPrefix() + "k", "sleep 6"));
  const absl::Time t0 = absl::Now();
  ASSERT_TRUE(testing::KillWorkerDaemon(s_.victim_name).ok());
  ASSERT_TRUE(w_->Run(absl::Seconds(120))) << "jobs not done in time\n" << b_->Log();
  const absl::Duration all_done = absl::Now() - t0;

  ExpectOutcomes(*c_, *w_, s_.ids, on_victim_, s_.victim_id, "requeued: the engine lost it");
  std::printf("swarm kill -9 of %s: its 2 jobs requeued and done elsewhere %s after the kill"
              " (%d samples)\n",
              s_.victim_name.c_str(), absl::FormatDuration(all_done).c_str(), w_->samples);
}

TEST_F(BerthdSwarmFaults, DrainedWorkerRequeuesItsJobsAndTakesNoNewOne) {
  const std::string p = UniqueJobPrefix() + "d";
  ASSERT_NO_FATAL_FAILURE(Begin(p, "sleep 8"));
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
    *snap.add_jobs() = BusyboxJob(id, "ws", 96 * kMiB, "sleep 8");
  }
  const std::string late = p + "late";
  *snap.add_jobs() = BusyboxJob(late, "ws", 96 * kMiB, "sleep 1");
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
                 absl::StrCat("requeued: its node ", s_.victim_id, " is drained"));
  std::printf("swarm drain of %s: its 2 jobs requeued and done elsewhere %s after the drain"
              " (%d samples)\n",
              s_.victim_name.c_str(), absl::FormatDuration(all_done).c_str(), w_->samples);
}

}  // namespace
}  // namespace berth
