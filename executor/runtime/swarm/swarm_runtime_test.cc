// SwarmRuntime against a real multi-node swarm (tools/swarm_cluster.sh up:
// a manager and two workers, each a dockerd in its own network namespace).
// Fails when no manager answers (tools/test.sh brings the cluster up)
// (tools/test.sh), where a missing cluster fails. Each test has its own
// instance label and removes its services.
#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "executor/runtime/docker/testing/docker_test_util.h"
#include "executor/runtime/swarm/swarm_runtime.h"
#include "executor/runtime/swarm/testing/swarm_test_util.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

using testing::TestSpec;
using testing::UniqueName;
using testing::WaitFinished;
using testing::WaitFor;

class SwarmRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::SwarmAvailable()) {
      FAIL() << "no swarm manager at " << testing::SwarmManagerUrl()
             << "; run: bash tools/swarm_cluster.sh up (or leave the swarm tests out"
             << " with --test_tag_filters=-swarm)";
    }
    instance_ = UniqueName("swarmtest");
    absl::StatusOr<std::unique_ptr<SwarmRuntime>> rt =
        SwarmRuntime::Create(testing::SwarmTestOptions(instance_));
    ASSERT_TRUE(rt.ok()) << rt.status();
    rt_ = *std::move(rt);
  }
  void TearDown() override {
    if (!instance_.empty()) (void)testing::RemoveInstanceServices(instance_);
  }

  ContainerSpec Spec(const std::string& job, std::vector<std::string> argv) {
    ContainerSpec s = TestSpec(job, std::move(argv));
    s.memory_bytes = 32 << 20;
    return s;
  }

  std::optional<ExitOutcome> RunToEnd(const ContainerSpec& spec,
                                      ContainerObservation* obs_out = nullptr) {
    absl::StatusOr<StartResult> started = rt_->Start(spec);
    EXPECT_TRUE(started.ok()) << started.status();
    if (!started.ok()) return std::nullopt;
    absl::StatusOr<ContainerObservation> obs =
        WaitFinished(*rt_, spec.job_id, absl::Seconds(60));
    EXPECT_TRUE(obs.ok()) << obs.status();
    if (!obs.ok()) return std::nullopt;
    if (obs_out != nullptr) *obs_out = *obs;
    return ClassifyExit(*obs, StopIntent::kNone);
  }

  // The nodes the job's container runs on, as the nodes' own engines say.
  std::vector<std::string> LiveOn(const std::string& job) {
    absl::StatusOr<testing::NodeProcesses> p = testing::SampleNodeProcesses(instance_);
    EXPECT_TRUE(p.ok()) << p.status();
    if (!p.ok() || !p->nodes_by_job.count(job)) return {};
    return p->nodes_by_job.at(job);
  }

  std::string instance_;
  std::unique_ptr<SwarmRuntime> rt_;
};

TEST_F(SwarmRuntimeTest, JobsRunOnWorkersAndExitZero) {
  const std::vector<NodeInfo> workers = testing::ReadyWorkers(*rt_);
  ASSERT_GE(workers.size(), 1u);
  std::set<std::string> worker_ids;
  for (const NodeInfo& w : workers) worker_ids.insert(w.id);
  std::vector<std::string> jobs;
  const absl::Time t0 = absl::Now();
  for (int i = 0; i < 4; ++i) {
    jobs.push_back(absl::StrCat("ok.", i));  // a dot: not a DNS character
    ContainerSpec s = Spec(jobs.back(), {"sh", "-c", "echo hello-$0; id -u", jobs.back()});
    absl::StatusOr<StartResult> r = rt_->Start(s);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_FALSE(r->adopted);
  }
  std::map<std::string, absl::Duration> done_after;
  for (const std::string& job : jobs) {
    absl::StatusOr<ContainerObservation> obs = WaitFinished(*rt_, job, absl::Seconds(60));
    ASSERT_TRUE(obs.ok()) << obs.status();
    done_after[job] = absl::Now() - t0;
    EXPECT_EQ(ClassifyExit(*obs, StopIntent::kNone),
              (ExitOutcome{ExitKind::kSucceeded, 0}))
        << job << " " << obs->error;
    EXPECT_TRUE(worker_ids.count(obs->node_id)) << "ran on " << obs->node_id;
    absl::StatusOr<std::string> logs = rt_->LogsTail(job, 4096);
    ASSERT_TRUE(logs.ok()) << logs.status();
    EXPECT_TRUE(absl::StrContains(*logs, "hello-" + job)) << *logs;
    EXPECT_TRUE(absl::StrContains(*logs, "65534")) << *logs;  // not root
  }
  std::printf("4 jobs started and finished on the swarm within %s\n",
              absl::FormatDuration(done_after[jobs.back()]).c_str());
  for (const std::string& job : jobs) {
    EXPECT_TRUE(rt_->Remove(job).ok());
    EXPECT_EQ(rt_->Inspect(job).status().code(), absl::StatusCode::kNotFound);
  }
}

// Ingest's image presence check asks the manager: it holds
// the test image, by tag and by id, and not a tag nobody loaded.
TEST_F(SwarmRuntimeTest, ListImagesIsTheManagersImages) {
  absl::StatusOr<std::vector<std::string>> images = rt_->ListImages();
  ASSERT_TRUE(images.ok()) << images.status();
  auto has = [&](absl::string_view ref) {
    return std::find(images->begin(), images->end(), ref) != images->end();
  };
  EXPECT_TRUE(has("berth-test/busybox:1"));
  EXPECT_FALSE(has("berth-test/busybox:2"));
  EXPECT_TRUE(std::any_of(images->begin(), images->end(), [](const std::string& r) {
    return absl::StartsWith(r, "sha256:");
  }));
  EXPECT_GE(rt_->Counters()["images"].calls, 1);
}

TEST_F(SwarmRuntimeTest, NonzeroExitIsClassified) {
  ContainerObservation obs;
  std::optional<ExitOutcome> out = RunToEnd(Spec("exit3", {"sh", "-c", "exit 3"}), &obs);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->kind, ExitKind::kNonzeroExit) << ExitKindName(out->kind);
  EXPECT_EQ(out->exit_code, 3);
  EXPECT_FALSE(obs.oom_killed);
}

TEST_F(SwarmRuntimeTest, RealOomIsClassified) {
  // 32 MiB limit, ~100 MB held in a shell variable: the kernel kills it.
  ContainerSpec s = Spec("oom", {"sh", "-c",
                                 "x=$(head -c 100000000 /dev/zero | tr '\\0' a); echo survived"});
  ContainerObservation obs;
  std::optional<ExitOutcome> out = RunToEnd(s, &obs);
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(out->kind, ExitKind::kOomKilled)
      << ExitKindName(out->kind) << " exit " << out->exit_code << " " << obs.error;
  EXPECT_EQ(out->exit_code, 137);
}

TEST_F(SwarmRuntimeTest, SameJobTwiceIsOneService) {
  ContainerSpec s = Spec("once", {"sleep", "30"});
  absl::StatusOr<StartResult> first = rt_->Start(s);
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<StartResult> second = rt_->Start(s);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(second->adopted);
  EXPECT_EQ(second->container_id, first->container_id);
  // A berthd that crashed and restarted: a new runtime, no cache.
  std::unique_ptr<SwarmRuntime> again =
      *SwarmRuntime::Create(testing::SwarmTestOptions(instance_));
  absl::StatusOr<StartResult> third = again->Start(s);
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_TRUE(third->adopted);
  EXPECT_EQ(third->container_id, first->container_id);
  EXPECT_EQ(again->Counters()["create"].calls, 1);  // refused by name (409)
  absl::StatusOr<ContainerList> list = again->List();
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->size(), 1u);
  // Another instance's runtime cannot adopt it.
  std::unique_ptr<SwarmRuntime> other =
      *SwarmRuntime::Create(testing::SwarmTestOptions(instance_ + "-other"));
  absl::StatusOr<ContainerList> others = other->List();
  ASSERT_TRUE(others.ok());
  EXPECT_TRUE(others->empty());
  // A new attempt is a new service; List reports the newest.
  s.attempt = 1;
  absl::StatusOr<StartResult> retry = rt_->Start(s);
  ASSERT_TRUE(retry.ok()) << retry.status();
  EXPECT_NE(retry->container_id, first->container_id);
  ASSERT_TRUE(WaitFor([&] {
    absl::StatusOr<ContainerList> l = rt_->List();
    return l.ok() && l->count("once") && l->at("once").container_id == retry->container_id;
  }, absl::Seconds(10)));
  // Every attempt, each once its task has ended.
  EXPECT_TRUE(WaitFor([&] { return rt_->Remove("once").ok(); }, absl::Seconds(20)));
  absl::StatusOr<ContainerList> after = rt_->List();
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->count("once"), 0u);
}

TEST_F(SwarmRuntimeTest, BulkListSeesExactlyOursInThreeCalls) {
  std::unique_ptr<SwarmRuntime> other =
      *SwarmRuntime::Create(testing::SwarmTestOptions(instance_ + "-b"));
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(rt_->Start(Spec(absl::StrCat("mine-", i), {"true"})).ok());
  }
  ASSERT_TRUE(other->Start(Spec("theirs", {"true"})).ok());
  CallCounters before = rt_->Counters();
  absl::StatusOr<ContainerList> list = rt_->List();
  ASSERT_TRUE(list.ok()) << list.status();
  CallCounters after = rt_->Counters();
  EXPECT_EQ(TotalCalls(after) - TotalCalls(before), 3);  // services, tasks, nodes
  EXPECT_EQ(list->size(), 5u);
  for (const auto& [job, c] : *list) EXPECT_TRUE(absl::StartsWith(job, "mine-"));
  // Once all finished, nothing changes between passes: no diff, no inspect.
  ASSERT_TRUE(WaitFor([&] {
    absl::StatusOr<ContainerList> l = rt_->List();
    if (!l.ok() || l->size() != 5) return false;
    for (const auto& [job, c] : *l) if (!IsFinished(c.state)) return false;
    return true;
  }, absl::Seconds(60)));
  ContainerList a = *rt_->List();
  ContainerList b = *rt_->List();
  EXPECT_TRUE(DiffContainerLists(a, b).changed.empty());
  (void)testing::RemoveInstanceServices(instance_ + "-b");
}

// Removing a replicated-job service does not stop its task on Docker 20.10:
// Stop must end the container itself, as the node's engine sees it, and
// report the exit code the task really had.
TEST_F(SwarmRuntimeTest, StopEndsTheContainerOnItsNodeAndKeepsLogsUntilRemove) {
  ContainerSpec s = Spec("stop-me", {"sh", "-c", "echo started; sleep 300"});
  ASSERT_TRUE(rt_->Start(s).ok());
  ASSERT_TRUE(WaitFor([&] {
    absl::StatusOr<ContainerObservation> o = rt_->Inspect("stop-me");
    return o.ok() && o->state == ContainerState::kRunning;
  }, absl::Seconds(30)));
  ASSERT_TRUE(WaitFor([&] { return LiveOn("stop-me").size() == 1; }, absl::Seconds(10)));
  const absl::Time t0 = absl::Now();
  ASSERT_TRUE(rt_->Stop("stop-me", absl::Seconds(1)).ok());
  const absl::Duration took = absl::Now() - t0;
  // Reported ended only once it is: no container of it on any node.
  EXPECT_TRUE(LiveOn("stop-me").empty()) << "still running after Stop";
  EXPECT_LT(took, absl::Seconds(20));
  absl::StatusOr<ContainerObservation> obs = rt_->Inspect("stop-me");
  ASSERT_TRUE(obs.ok()) << obs.status();
  EXPECT_TRUE(IsFinished(obs->state));
  EXPECT_FALSE(obs->oom_killed);
  // sh ends on the SIGTERM (docker-init passes it on): 143, never a made-up
  // 137; or no code at all when Swarm deleted the record before it was read.
  if (obs->state == ContainerState::kExited) {
    EXPECT_EQ(obs->exit_code, 143);
  } else {
    EXPECT_TRUE(obs->lost);
    EXPECT_TRUE(absl::StrContains(obs->error, "before Berth read its exit code")) << obs->error;
  }
  std::printf("Stop returned after %s; state %s exit %d\n", absl::FormatDuration(took).c_str(),
              std::string(ContainerStateName(obs->state)).c_str(), obs->exit_code);
  EXPECT_EQ(ClassifyExit(*obs, StopIntent::kCancel)->kind, ExitKind::kCancelled);
  absl::StatusOr<ContainerList> list = rt_->List();
  ASSERT_TRUE(list.ok());
  EXPECT_TRUE(IsFinished(list->at("stop-me").state));
  absl::StatusOr<std::string> logs = rt_->LogsTail("stop-me", 1024);
  ASSERT_TRUE(logs.ok());
  EXPECT_TRUE(absl::StrContains(*logs, "started")) << *logs;
  EXPECT_TRUE(rt_->Stop("stop-me", absl::Seconds(1)).ok());  // idempotent
  EXPECT_TRUE(rt_->Remove("stop-me").ok());
  EXPECT_EQ(rt_->Inspect("stop-me").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(rt_->Stop("stop-me", absl::Seconds(1)).code(), absl::StatusCode::kNotFound);
}

// A job whose process ignores SIGTERM is killed at the stop grace: the
// engine's 137, and the container gone.
TEST_F(SwarmRuntimeTest, StopKillsAJobThatIgnoresSigterm) {
  ContainerSpec s = Spec("stubborn", {"sh", "-c", "trap '' TERM; while true; do sleep 1; done"});
  ASSERT_TRUE(rt_->Start(s).ok());
  ASSERT_TRUE(WaitFor([&] { return LiveOn("stubborn").size() == 1; }, absl::Seconds(30)));
  const absl::Time t0 = absl::Now();
  ASSERT_TRUE(rt_->Stop("stubborn", absl::Seconds(1)).ok());
  const absl::Duration took = absl::Now() - t0;
  EXPECT_TRUE(LiveOn("stubborn").empty());
  EXPECT_GE(took, rt_->options().stop_grace);  // SIGKILL only after the grace
  absl::StatusOr<ContainerObservation> obs = rt_->Inspect("stubborn");
  ASSERT_TRUE(obs.ok()) << obs.status();
  if (obs->state == ContainerState::kExited) {
    EXPECT_EQ(obs->exit_code, 137);
  }
  EXPECT_FALSE(obs->oom_killed);
  std::printf("Stop of a job ignoring SIGTERM (grace %s) returned after %s; state %s exit %d\n",
              absl::FormatDuration(rt_->options().stop_grace).c_str(),
              absl::FormatDuration(took).c_str(),
              std::string(ContainerStateName(obs->state)).c_str(), obs->exit_code);
}

// Remove never leaves a running task behind (a removed job service's task
// runs on in Docker 20.10): it asks the task to end and refuses until it has.
TEST_F(SwarmRuntimeTest, RemoveOfARunningJobEndsItsContainerFirst) {
  ContainerSpec s = Spec("rm-me", {"sleep", "300"});
  ASSERT_TRUE(rt_->Start(s).ok());
  ASSERT_TRUE(WaitFor([&] { return LiveOn("rm-me").size() == 1; }, absl::Seconds(30)));
  absl::Status first = rt_->Remove("rm-me");
  EXPECT_EQ(first.code(), absl::StatusCode::kUnavailable) << first;
  ASSERT_TRUE(WaitFor([&] { return LiveOn("rm-me").empty(); }, absl::Seconds(20)));
  ASSERT_TRUE(WaitFor([&] { return rt_->Remove("rm-me").ok(); }, absl::Seconds(10)));
  EXPECT_EQ(rt_->Inspect("rm-me").status().code(), absl::StatusCode::kNotFound);
}

// A task of this instance that is no job's current run (here: attempt 0
// still running when attempt 1 starts) is counted on its node by ListNodes
// and asked to end by List; its container ends on its node.
TEST_F(SwarmRuntimeTest, AStrayTaskIsCountedOnItsNodeAndEnded) {
  ContainerSpec s = Spec("stray", {"sleep", "300"});
  s.memory_bytes = 48 << 20;
  ASSERT_TRUE(rt_->Start(s).ok());
  ASSERT_TRUE(WaitFor([&] { return LiveOn("stray").size() == 1; }, absl::Seconds(30)));
  absl::StatusOr<ContainerObservation> first = rt_->Inspect("stray");
  ASSERT_TRUE(first.ok()) << first.status();
  const std::string node = first->node_id;
  // Attempt 1 pinned away from attempt 0's node, so the two are told apart.
  s.attempt = 1;
  s.memory_bytes = 32 << 20;
  for (const NodeInfo& w : testing::ReadyWorkers(*rt_)) {
    if (w.id != node) s.node = w.id;
  }
  ASSERT_FALSE(s.node.empty());
  ASSERT_TRUE(rt_->Start(s).ok());
  ASSERT_TRUE(rt_->List().ok());  // notes the stray (and asks it to end)
  absl::StatusOr<std::vector<NodeInfo>> nodes = rt_->ListNodes();
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  int64_t counted = 0;
  for (const NodeInfo& n : *nodes) {
    if (n.id == node) {
      EXPECT_EQ(n.stray_tasks, 1);
      counted = n.stray_memory_bytes;
      ASSERT_EQ(n.strays.size(), 1u);
      EXPECT_EQ(n.strays[0].job_id, "stray");
      EXPECT_FALSE(n.strays[0].task_id.empty());
      EXPECT_TRUE(absl::StrContains(n.strays[0].note, node)) << n.strays[0].note;
      EXPECT_TRUE(absl::StrContains(n.strays[0].note, "asked to end")) << n.strays[0].note;
    } else {
      EXPECT_EQ(n.stray_tasks, 0) << n.id;
      EXPECT_TRUE(n.strays.empty()) << n.id;
    }
  }
  EXPECT_EQ(counted, 48 << 20);
  // Ended on its node; once it has, nothing is counted any more.
  ASSERT_TRUE(WaitFor([&] {
    absl::StatusOr<testing::NodeProcesses> p = testing::SampleNodeProcesses(instance_);
    if (!p.ok()) return false;
    for (const auto& [name, id] : p->node_ids) {
      if (id != node) continue;
      const auto& jobs = p->nodes_by_job;
      auto it = jobs.find("stray");
      if (it == jobs.end()) return true;
      for (const std::string& n : it->second) if (n == name) return false;
      return true;
    }
    return false;
  }, absl::Seconds(20)));
  ASSERT_TRUE(WaitFor([&] {
    if (!rt_->List().ok()) return false;
    absl::StatusOr<std::vector<NodeInfo>> n = rt_->ListNodes();
    if (!n.ok()) return false;
    for (const NodeInfo& x : *n) if (x.stray_tasks != 0) return false;
    return true;
  }, absl::Seconds(10)));
}

TEST_F(SwarmRuntimeTest, PinnedToTheChosenNode) {
  const std::vector<NodeInfo> workers = testing::ReadyWorkers(*rt_);
  ASSERT_GE(workers.size(), 1u);
  for (const NodeInfo& w : workers) {
    ContainerSpec s = Spec("pin-" + w.id, {"true"});
    s.node = w.id;
    ContainerObservation obs;
    std::optional<ExitOutcome> out = RunToEnd(s, &obs);
    ASSERT_TRUE(out.has_value());
    EXPECT_EQ(out->kind, ExitKind::kSucceeded);
    EXPECT_EQ(obs.node_id, w.id);
  }
}

TEST_F(SwarmRuntimeTest, MissingImageAndNodesAreReported) {
  SwarmRuntimeOptions o = testing::SwarmTestOptions(instance_);
  o.image_allow_list.push_back("berth-test/missing:*");
  std::unique_ptr<SwarmRuntime> rt = *SwarmRuntime::Create(o);
  ContainerSpec s = Spec("missing", {"true"});
  s.image = "berth-test/missing:1";
  EXPECT_EQ(rt->Start(s).status().code(), absl::StatusCode::kNotFound);
  absl::StatusOr<std::vector<NodeInfo>> nodes = rt->ListNodes();
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  EXPECT_GE(nodes->size(), 3u);
  int managers = 0;
  for (const NodeInfo& n : *nodes) {
    managers += n.manager;
    EXPECT_GT(n.nano_cpus, 0);
    EXPECT_GT(n.memory_bytes, 0);
  }
  EXPECT_EQ(managers, 1);
  absl::StatusOr<HostInfo> host = rt->GetHostInfo();
  ASSERT_TRUE(host.ok()) << host.status();
  EXPECT_GT(host->ncpu, 0);
}

}  // namespace
}  // namespace berth
