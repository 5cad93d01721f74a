// Swarm JSON building and parsing, no engine: names, the service spec, the
// task-state mapping and the bulk list.
#include <functional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "executor/runtime/swarm/swarm_json.h"
#include "executor/runtime/swarm/swarm_runtime.h"
#include "executor/runtime/unit_test_spec.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace berth {
namespace {

using nlohmann::json;

TEST(SwarmServiceNameTest, DeterministicDnsLabelsThatTellJobsApart) {
  // Swarm: "name must be valid as a DNS name component", at most 63 chars.
  const std::regex dns("^[a-zA-Z0-9](?:[-_]*[A-Za-z0-9]+)*$");
  const std::vector<std::string> jobs = {
      "a", "a.b", "a-b", "a_b", "-lead", ".", "x..y",
      std::string(128, 'z'), std::string(127, 'z') + "y", "Job.2024-01-01_7"};
  std::set<std::string> seen;
  for (const std::string& job : jobs) {
    SCOPED_TRACE(job);
    const std::string name = SwarmServiceName("inst", job, 0);
    EXPECT_TRUE(std::regex_match(name, dns)) << name;
    EXPECT_LE(name.size(), 63u);
    EXPECT_EQ(name, SwarmServiceName("inst", job, 0));  // deterministic
    EXPECT_EQ(name.rfind(SwarmServicePrefix("inst"), 0), 0u);
    EXPECT_TRUE(seen.insert(name).second) << "collides: " << name;
  }
  const std::string max = SwarmServiceName("i", std::string(128, 'z'), 2147483647);
  EXPECT_LE(max.size(), 63u);
  EXPECT_NE(SwarmServiceName("inst", "a", 0), SwarmServiceName("inst", "a", 1));
  EXPECT_NE(SwarmServiceName("inst", "a", 0), SwarmServiceName("other", "a", 0));
  EXPECT_NE(SwarmServicePrefix("inst"), SwarmServicePrefix("other"));
}

ContainerSpec Spec() { return UnitTestSpec("job.1", {"sh", "-c", "exit 3"}); }

TEST(BuildServiceSpecTest, OneCompletionByIdWithLimitsAndHardening) {
  SwarmServiceOptions o;
  o.instance = "inst";
  o.pids_limit = 99;
  o.workspaces_root = "/srv/ws";
  ContainerSpec spec = Spec();
  spec.node = "abc123";
  spec.attempt = 2;
  spec.mount_workspace = true;
  const json b = json::parse(BuildServiceSpec(spec, "sha256:feed", o));
  EXPECT_EQ(b["Name"], SwarmServiceName("inst", "job.1", 2));
  EXPECT_EQ(b["Mode"]["ReplicatedJob"]["TotalCompletions"], 1);
  EXPECT_EQ(b["Mode"]["ReplicatedJob"]["MaxConcurrent"], 1);
  const json& t = b["TaskTemplate"];
  EXPECT_EQ(t["RestartPolicy"]["Condition"], "none");
  const json& c = t["ContainerSpec"];
  EXPECT_EQ(c["Image"], "sha256:feed");
  EXPECT_EQ(c["Labels"]["berth.image"], "berth-test/busybox:1");
  EXPECT_EQ(c["Labels"]["berth.job"], "job.1");
  EXPECT_EQ(c["Labels"]["berth.attempt"], "3") << "counted from 1, as the API does";
  EXPECT_EQ(c["Labels"]["berth.attempt_base"], "1");
  EXPECT_TRUE(absl::EndsWith(b["Name"].get<std::string>(), "-a3")) << b["Name"];
  EXPECT_EQ(b["Labels"]["berth.instance"], "inst");
  EXPECT_EQ(c["Args"], json({"sh", "-c", "exit 3"}));
  EXPECT_EQ(c["Env"], json({"A=1"}));
  EXPECT_EQ(c["User"], "65534:65534");
  EXPECT_EQ(c["ReadOnly"], true);
  EXPECT_EQ(c["Init"], true);
  EXPECT_EQ(c["CapabilityDrop"], json({"ALL"}));
  EXPECT_FALSE(c.contains("Groups"));  // no shared workspace group
  ASSERT_EQ(c["Mounts"].size(), 2u);
  EXPECT_EQ(c["Mounts"][0]["Type"], "tmpfs");
  EXPECT_EQ(c["Mounts"][1]["Source"], "/srv/ws/ws");
  EXPECT_EQ(c["Mounts"][1]["Target"], "/workspace");
  const json& r = t["Resources"];
  EXPECT_EQ(r["Limits"]["NanoCPUs"], 500'000'000);
  EXPECT_EQ(r["Limits"]["MemoryBytes"], 64 << 20);
  EXPECT_EQ(r["Limits"]["Pids"], 99);
  EXPECT_EQ(r["Reservations"], json({{"NanoCPUs", 500'000'000},
                                     {"MemoryBytes", 64 << 20}}));
  EXPECT_EQ(t["Placement"]["Constraints"], json({"node.id==abc123"}));
  EXPECT_FALSE(t.contains("Networks"));  // no network unless the pool names one

  spec.network = "pool-net";
  spec.node.clear();
  spec.mount_workspace = false;
  const json b2 = json::parse(BuildServiceSpec(spec, "sha256:feed", o));
  EXPECT_EQ(b2["TaskTemplate"]["Networks"][0]["Target"], "pool-net");
  EXPECT_TRUE(b2["TaskTemplate"]["Placement"]["Constraints"].empty());
  EXPECT_EQ(b2["TaskTemplate"]["ContainerSpec"]["Mounts"].size(), 1u);

  // --workspace_group: the task's one supplementary group; user unchanged.
  o.workspace_gid = 4242;
  const json b3 = json::parse(BuildServiceSpec(spec, "sha256:feed", o));
  EXPECT_EQ(b3["TaskTemplate"]["ContainerSpec"]["Groups"], json({"4242"}));
  EXPECT_EQ(b3["TaskTemplate"]["ContainerSpec"]["User"], "65534:65534");
}

SwarmTask Task(const std::string& state, int exit_code) {
  SwarmTask t;
  t.id = "t";
  t.service_id = "s";
  t.node_id = "n1";
  t.state = state;
  t.exit_code = exit_code;
  return t;
}

TEST(ObserveTaskTest, Table) {
  using S = ContainerState;
  struct Case {
    std::string state;
    int exit_code;
    bool node_ready;
    S want;
    int want_code;
    bool oom, lost, start_failed;
  };
  const std::vector<Case> cases = {
      {"pending", 0, true, S::kCreated, 0, false, false, false},
      {"preparing", 0, true, S::kCreated, 0, false, false, false},
      {"starting", 0, true, S::kCreated, 0, false, false, false},
      {"running", 0, true, S::kRunning, 0, false, false, false},
      {"complete", 0, true, S::kExited, 0, false, false, false},
      {"failed", 3, true, S::kExited, 3, false, false, false},
      {"failed", 137, true, S::kExited, 137, true, false, false},
      {"failed", 143, true, S::kExited, 143, false, false, false},
      {"failed", 0, true, S::kDead, 0, false, false, true},
      {"rejected", 0, true, S::kDead, 0, false, false, true},
      {"shutdown", 143, true, S::kDead, 143, false, true, false},
      {"rejected-after-start", 0, true, S::kDead, 0, false, true, false},
      {"orphaned", 0, true, S::kDead, 0, false, true, false},
      {"running", 0, false, S::kDead, 0, false, true, false},
      {"assigned", 0, false, S::kDead, 0, false, true, false},
      // Terminal facts stand whatever the node does now.
      {"complete", 0, false, S::kExited, 0, false, false, false},
      {"failed", 3, false, S::kExited, 3, false, false, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.state + " exit " + std::to_string(c.exit_code) +
                 (c.node_ready ? " ready" : " node down"));
    SwarmTask t = Task(c.state, c.exit_code);
    if (c.state == "rejected-after-start") {
      t.state = "rejected";
      t.container_id = "c1";
      t.err = "assigned node no longer meets constraints";
    }
    const ContainerObservation o = ObserveTask(t, c.node_ready);
    EXPECT_EQ(ContainerStateName(o.state), ContainerStateName(c.want));
    EXPECT_EQ(o.exit_code, c.want_code);
    EXPECT_EQ(o.oom_killed, c.oom);
    EXPECT_EQ(o.lost, c.lost);
    EXPECT_EQ(o.start_failed, c.start_failed);
    EXPECT_EQ(o.node_id, "n1");
  }
}

TEST(ParseTest, TasksNodesServicesImages) {
  const char* tasks = R"js([{"ID":"t1","ServiceID":"s1","NodeID":"n1",
    "Version":{"Index":30},"CreatedAt":"2026-11-23T16:42:32.036104544Z",
    "Status":{"Timestamp":"2026-11-23T16:42:33.240983854Z","State":"failed",
      "Err":"task: non-zero exit (137)",
      "ContainerStatus":{"ContainerID":"c1","ExitCode":137}},
    "DesiredState":"shutdown"}])js";
  absl::StatusOr<std::vector<SwarmTask>> t = ParseTaskList(tasks);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->size(), 1u);
  EXPECT_EQ((*t)[0].exit_code, 137);
  EXPECT_EQ((*t)[0].version, 30);
  EXPECT_EQ((*t)[0].container_id, "c1");
  EXPECT_TRUE((*t)[0].status_at.has_value());

  const char* nodes = R"([
    {"ID":"b","UpdatedAt":"2026-11-23T16:42:33Z",
     "Spec":{"Role":"worker","Availability":"drain","Labels":{"pool":"db"}},
     "Description":{"Hostname":"h","Resources":{"NanoCPUs":2000000000,"MemoryBytes":1024}},
     "Status":{"State":"ready"}},
    {"ID":"a","Spec":{"Role":"manager","Availability":"active"},
     "Description":{"Hostname":"h"},"Status":{"State":"down"}}])";
  absl::StatusOr<std::vector<NodeInfo>> n = ParseNodeList(nodes);
  ASSERT_TRUE(n.ok()) << n.status();
  ASSERT_EQ(n->size(), 2u);
  EXPECT_EQ((*n)[0].id, "a");  // sorted
  EXPECT_EQ((*n)[0].state, NodeState::kDown);
  EXPECT_TRUE((*n)[0].manager);
  EXPECT_EQ((*n)[1].availability, NodeAvailability::kDrain);
  EXPECT_EQ((*n)[1].nano_cpus, 2000000000);
  EXPECT_EQ((*n)[1].memory_bytes, 1024);
  EXPECT_EQ((*n)[1].labels.at("pool"), "db");
  EXPECT_EQ((*n)[1].updated_at, absl::FromUnixSeconds(1795452153));  // 2026-11-23T16:42:33Z
  EXPECT_FALSE((*n)[0].updated_at.has_value());

  const char* services = R"([
    {"ID":"s1","Spec":{"Name":"x","Labels":{"berth.job":"j","berth.instance":"me","berth.attempt":"1"}}},
    {"ID":"s2","Spec":{"Name":"y","Labels":{"berth.job":"j","berth.instance":"other"}}},
    {"ID":"s3","Spec":{"Name":"z","Labels":{}}},
    {"ID":"s4","Spec":{"Name":"w","Labels":{"berth.job":"k","berth.instance":"me",
                                            "berth.attempt":"1","berth.attempt_base":"1"}}}])";
  absl::StatusOr<std::vector<SwarmService>> s = ParseServiceList(services, "me");
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->size(), 2u);
  EXPECT_EQ((*s)[0].attempt, 1) << "an older berthd's label counts from 0";
  EXPECT_EQ((*s)[1].attempt, 0) << "counted from 1 with its base label";

  EXPECT_EQ(*ParseImageId(R"({"Id":"sha256:ab"})"), "sha256:ab");
  EXPECT_EQ(ParseImageId("{}").status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(ParseTaskList("{").status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(ParseNodeList("{}").status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(*ParseServiceCreate(R"({"ID":"s9"})"), "s9");
}

TEST(BuildContainerListTest, LatestAttemptNewestTaskLiveServicesOnly) {
  std::vector<SwarmService> services = {
      {"s-old", "n0", "j", 0, ""}, {"s-new", "n1", "j", 1, ""},
      {"s-k", "nk", "k", 0, ""},   {"s-p", "np", "pending", 0, ""}};
  SwarmTask old_task = Task("failed", 143);
  old_task.service_id = "s-old";
  SwarmTask t1 = Task("running", 0);
  t1.service_id = "s-new";
  t1.version = 5;
  SwarmTask t0 = Task("failed", 1);  // an older task of the same service
  t0.service_id = "s-new";
  t0.version = 4;
  SwarmTask k = Task("running", 0);
  k.service_id = "s-k";
  k.node_id = "down-node";
  SwarmTask removed = Task("complete", 0);  // its service is gone (moby#44312)
  removed.service_id = "s-gone";
  std::vector<NodeInfo> nodes(2);
  nodes[0].id = "n1";
  nodes[0].state = NodeState::kReady;
  nodes[1].id = "down-node";
  nodes[1].state = NodeState::kDown;
  const ContainerList list = BuildContainerList(
      services, {old_task, t1, t0, k, removed}, [&](const SwarmTask& t) {
        bool ready = false;
        for (const NodeInfo& n : nodes) ready |= n.id == t.node_id && n.state == NodeState::kReady;
        return ObserveTask(t, ready);
      });
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list.at("j").container_id, "s-new");
  EXPECT_EQ(list.at("j").state, ContainerState::kRunning);
  EXPECT_EQ(list.at("j").node_id, "n1");
  EXPECT_EQ(list.at("k").state, ContainerState::kDead);  // lost with its node
  EXPECT_EQ(list.at("pending").state, ContainerState::kCreated);
}

// Stray: running and placed, but no job's newest live service -- an older
// attempt's task, or a removed service's (Docker 20.10 leaves it running).
TEST(StrayTasksTest, RunningTasksOfOlderAttemptsAndRemovedServices) {
  const std::vector<SwarmService> services = {{"s-old", "n0", "j", 0, ""},
                                              {"s-new", "n1", "j", 1, ""}};
  auto task = [](const std::string& id, const std::string& service, const std::string& state,
                 const std::string& node) {
    SwarmTask t = Task(state, 0);
    t.id = id;
    t.service_id = service;
    t.node_id = node;
    return t;
  };
  const std::vector<SwarmTask> strays = StrayTasks(
      services, {task("older", "s-old", "running", "n1"),
                 task("current", "s-new", "running", "n2"),
                 task("removed", "s-gone", "running", "n2"),
                 task("removed-starting", "s-gone2", "preparing", "n1"),
                 task("ended", "s-gone", "complete", "n2"),
                 task("unplaced", "s-gone", "pending", "")});
  std::vector<std::string> ids;
  for (const SwarmTask& t : strays) ids.push_back(t.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"older", "removed", "removed-starting"}));
  EXPECT_TRUE(StrayTasks({}, {}).empty());
}

TEST(ParseTest, TaskJobAndReservations) {
  absl::StatusOr<std::vector<SwarmTask>> tasks = ParseTaskList(R"([{"ID":"t1",
      "Spec":{"ContainerSpec":{"Labels":{"berth.job":"j1"}},
              "Resources":{"Reservations":{"MemoryBytes":67108864,"NanoCPUs":250000000}}},
      "Status":{"State":"running"}}])");
  ASSERT_TRUE(tasks.ok()) << tasks.status();
  ASSERT_EQ(tasks->size(), 1u);
  EXPECT_EQ((*tasks)[0].job_id, "j1");
  EXPECT_EQ((*tasks)[0].reserved_memory_bytes, 64 << 20);
  EXPECT_EQ((*tasks)[0].reserved_nano_cpus, 250'000'000);
}

// The stop update: zero completions and concurrency, the rest of the spec as
// it was, without the update/rollback configs a job may not carry.
TEST(StopJobServiceSpecTest, ZeroCompletionsKeepsTheRest) {
  absl::StatusOr<std::string> body = StopJobServiceSpec(R"({"ID":"s1","Version":{"Index":7},
      "Spec":{"Name":"berth-x-a0","Labels":{"berth.job":"j","berth.instance":"i"},
              "TaskTemplate":{"ContainerSpec":{"Image":"sha256:abc"}},
              "Mode":{"ReplicatedJob":{"MaxConcurrent":1,"TotalCompletions":1}},
              "UpdateConfig":{"Parallelism":1},"RollbackConfig":{"Parallelism":1}}})");
  ASSERT_TRUE(body.ok()) << body.status();
  const nlohmann::json j = nlohmann::json::parse(*body);
  EXPECT_EQ(j["Mode"]["ReplicatedJob"]["TotalCompletions"], 0);
  EXPECT_EQ(j["Mode"]["ReplicatedJob"]["MaxConcurrent"], 0);
  EXPECT_FALSE(j.contains("UpdateConfig"));
  EXPECT_FALSE(j.contains("RollbackConfig"));
  EXPECT_EQ(j["Name"], "berth-x-a0");
  EXPECT_EQ(j["TaskTemplate"]["ContainerSpec"]["Image"], "sha256:abc");
  EXPECT_EQ(j["Labels"]["berth.job"], "j");
  EXPECT_EQ(StopJobServiceSpec(R"({"ID":"s1"})").status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(StopJobServiceSpec("[").status().code(), absl::StatusCode::kInternal);
  // A stopped service reads as such in the list.
  nlohmann::json running = j;
  running["Mode"]["ReplicatedJob"]["TotalCompletions"] = 1;
  absl::StatusOr<std::vector<SwarmService>> listed = ParseServiceList(
      absl::StrCat(R"([{"ID":"s1","Spec":)", j.dump(), R"(},{"ID":"s2","Spec":)",
                   running.dump(), "}]"),
      "i");
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_TRUE((*listed)[0].stopped);
  EXPECT_FALSE((*listed)[1].stopped);
}

TEST(SwarmRuntimeTest, CreateValidatesOptions) {
  SwarmRuntimeOptions o;
  o.instance = "bad/instance";
  EXPECT_EQ(SwarmRuntime::Create(o).status().code(),
            absl::StatusCode::kInvalidArgument);
  o.instance = "ok";
  o.user = "0:0";
  EXPECT_EQ(SwarmRuntime::Create(o).status().code(),
            absl::StatusCode::kInvalidArgument);
  o.user = "65534:65534";
  o.endpoint.url = "ftp://x";
  EXPECT_EQ(SwarmRuntime::Create(o).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(SwarmRuntimeTest, StartRefusesBeforeAnyCall) {
  SwarmRuntimeOptions o;
  o.instance = "unit";
  o.endpoint.url = "unix:///nonexistent/docker.sock";
  o.max_attempts = 1;
  o.image_allow_list = {"berth-test/*"};
  std::unique_ptr<SwarmRuntime> rt = *SwarmRuntime::Create(o);
  ContainerSpec s = Spec();
  s.image = "evil/image:1";
  EXPECT_EQ(rt->Start(s).status().code(), absl::StatusCode::kPermissionDenied);
  s = Spec();
  s.node = "Not-A-Node-Id";
  EXPECT_EQ(rt->Start(s).status().code(), absl::StatusCode::kInvalidArgument);
  s = Spec();
  s.mount_workspace = true;
  EXPECT_EQ(rt->Start(s).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(TotalCalls(rt->Counters()), 0);
  // With a valid spec the engine is asked, and it is not there.
  EXPECT_EQ(rt->Start(Spec()).status().code(), absl::StatusCode::kUnavailable);
}

// The shared runtime limits (runtime_limits.h), as the Docker runtime checks
// them: every case is INVALID_ARGUMENT naming the field, before any call.
TEST(SwarmRuntimeTest, RuntimeLimitsAreCheckedBeforeAnyCall) {
  SwarmRuntimeOptions o;
  o.instance = "unit";
  o.endpoint.url = "unix:///nonexistent/docker.sock";
  o.max_attempts = 1;
  o.image_allow_list = {"berth-test/*"};
  std::unique_ptr<SwarmRuntime> rt = *SwarmRuntime::Create(o);
  struct Case {
    const char* name;
    std::function<void(ContainerSpec&)> edit;
    const char* field;
  };
  const std::vector<Case> cases = {
      {"cpu below the quota granularity", [](ContainerSpec& s) { s.cpu_millis = 5; },
       "cpu_millis"},
      {"memory below the engine minimum",
       [](ContainerSpec& s) { s.memory_bytes = (6 << 20) - 1; }, "memory_bytes"},
      {"dot-dot job id", [](ContainerSpec& s) { s.job_id = ".."; }, "id"},
      {"dot workspace", [](ContainerSpec& s) { s.workspace = "."; }, "workspace"},
      {"path escape in the image",
       [](ContainerSpec& s) { s.image = "berth-test/../evil:1"; }, "image"},
      {"trailing newline in the image",
       [](ContainerSpec& s) { s.image = "berth-test/busybox:1\n"; }, "image"},
      {"1 MiB env value",
       [](ContainerSpec& s) { s.env = {{"BIG", std::string(1 << 20, 'x')}}; }, "env"},
      {"negative attempt", [](ContainerSpec& s) { s.attempt = -1; }, "attempt"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ContainerSpec s = Spec();
    c.edit(s);
    absl::StatusOr<StartResult> r = rt->Start(s);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(c.field), absl::string_view::npos)
        << r.status().message();
  }
  EXPECT_EQ(TotalCalls(rt->Counters()), 0);
}

// The container user: numeric uid:gid, never root by any spelling, in range.
TEST(SwarmRuntimeTest, UserMustBeNumericNonRoot) {
  SwarmRuntimeOptions o;
  o.instance = "unit";
  for (const char* user : {"", "0", "root", "0:0", "00:0", "+0:0", "65534:0", "0:65534",
                           "-1:-1", "4294967296:1", "nobody", "65534", "root:root"}) {
    SCOPED_TRACE(user);
    o.user = user;
    EXPECT_EQ(SwarmRuntime::Create(o).status().code(), absl::StatusCode::kInvalidArgument);
  }
  o.user = "65534:65534";
  EXPECT_TRUE(SwarmRuntime::Create(o).ok());
}

}  // namespace
}  // namespace berth
