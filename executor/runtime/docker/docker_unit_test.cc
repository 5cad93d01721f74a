// Unit tests of the Docker runtime's pure parts: error conversion, JSON
// parsing, log demultiplexing, the hardened create body, spec validation.
// No engine is needed (the endpoint points nowhere).
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "executor/runtime/docker/docker_http.h"
#include "executor/runtime/docker/docker_json.h"
#include "executor/runtime/docker/docker_runtime.h"
#include "executor/runtime/unit_test_spec.h"
#include "planner/base/simulated_clock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace berth {
namespace {

using nlohmann::json;

TEST(DockerErrorToStatusTest, HttpStatuses) {
  struct Case {
    long http;
    absl::StatusCode want;
  };
  const std::vector<Case> cases = {
      {400, absl::StatusCode::kInvalidArgument},
      {401, absl::StatusCode::kUnauthenticated},
      {403, absl::StatusCode::kPermissionDenied},
      {404, absl::StatusCode::kNotFound},
      {409, absl::StatusCode::kAlreadyExists},
      {418, absl::StatusCode::kFailedPrecondition},
      {500, absl::StatusCode::kInternal},
      {501, absl::StatusCode::kUnimplemented},
      {502, absl::StatusCode::kUnavailable},
      {503, absl::StatusCode::kUnavailable},
      {504, absl::StatusCode::kUnavailable},
      {200, absl::StatusCode::kOk},
      {201, absl::StatusCode::kOk},
      {204, absl::StatusCode::kOk},
      {304, absl::StatusCode::kOk},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.http);
    EXPECT_EQ(DockerErrorToStatus(0, "", c.http, "", "ctx").code(), c.want);
  }
}

TEST(DockerErrorToStatusTest, UsesDockerMessageAndContext) {
  absl::Status s = DockerErrorToStatus(
      0, "", 404, R"({"message":"No such image: foo:1"})", "create berth-x");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(s.message(), "No such image: foo:1")) << s;
  EXPECT_TRUE(absl::StartsWith(s.message(), "create berth-x")) << s;
  // A non-JSON body is quoted as is.
  s = DockerErrorToStatus(0, "", 500, "boom", "x");
  EXPECT_TRUE(absl::StrContains(s.message(), "boom")) << s;
}

TEST(DockerErrorToStatusTest, CurlErrors) {
  // Numeric curl codes: 7 couldn't connect, 28 timeout, 52 empty reply,
  // 56 recv error, 60 peer verification, 58 client cert problem, 3 bad URL.
  EXPECT_EQ(DockerErrorToStatus(7, "refused", 0, "", "x").code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(DockerErrorToStatus(28, "", 0, "", "x").code(),
            absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(DockerErrorToStatus(52, "", 0, "", "x").code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(DockerErrorToStatus(56, "", 0, "", "x").code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(DockerErrorToStatus(60, "", 0, "", "x").code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(DockerErrorToStatus(58, "", 0, "", "x").code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(DockerErrorToStatus(3, "", 0, "", "x").code(),
            absl::StatusCode::kInternal);
}

TEST(DockerJsonTest, ParseContainerListKeepsOnlyOurInstance) {
  const std::string body = R"([
    {"Id":"c1","State":"running","Labels":{"berth.job":"a","berth.instance":"me",
                                           "berth.attempt":"1","berth.attempt_base":"1"}},
    {"Id":"c2","State":"exited","Labels":{"berth.job":"b","berth.instance":"me",
                                          "berth.attempt":"1"}},
    {"Id":"c3","State":"running","Labels":{"berth.job":"c","berth.instance":"other"}},
    {"Id":"c4","State":"running","Labels":{}},
    {"Id":"c5","State":"running"}
  ])";
  absl::StatusOr<ContainerList> list = ParseContainerList(body, "me");
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ(list->at("a").container_id, "c1");
  EXPECT_EQ(list->at("a").state, ContainerState::kRunning);
  EXPECT_EQ(list->at("b").state, ContainerState::kExited);
  // Attempts: counted from 1 with the base label; an older berthd's from 0.
  EXPECT_EQ(list->at("a").attempt, 0);
  EXPECT_EQ(list->at("b").attempt, 1);

  EXPECT_EQ(ParseContainerList("{not json", "me").status().code(),
            absl::StatusCode::kInternal);
  EXPECT_EQ(ParseContainerList("{}", "me").status().code(),
            absl::StatusCode::kInternal);
}

TEST(DockerJsonTest, ParseContainerListNotesLegacyNames) {
  const std::string body = R"([
    {"Id":"c1","Names":["/berth-a"],"State":"running",
     "Labels":{"berth.job":"a","berth.instance":"me"}},
    {"Id":"c2","Names":["/berth-0a1b2c3d-b"],"State":"exited",
     "Labels":{"berth.job":"b","berth.instance":"me"}},
    {"Id":"c3","Names":["/berth-c"],"State":"exited",
     "Labels":{"berth.job":"c","berth.instance":"me"}},
    {"Id":"c4","Names":["/berth-0a1b2c3d-c"],"State":"running",
     "Labels":{"berth.job":"c","berth.instance":"me"}}
  ])";
  std::set<std::string> legacy = {"stale"};
  absl::StatusOr<ContainerList> list = ParseContainerList(body, "me", &legacy);
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->size(), 3u);
  // "a" only under its old name; "c" under both: the new one wins.
  EXPECT_EQ(legacy, std::set<std::string>({"a", "stale"}));
  EXPECT_EQ(list->at("a").container_id, "c1");
  EXPECT_EQ(list->at("c").container_id, "c4");
}

TEST(DockerJsonTest, ParseInspect) {
  const std::string body = R"({
    "Id":"abc",
    "Config":{"Labels":{"berth.job":"j1","berth.instance":"me"}},
    "State":{"Status":"exited","ExitCode":137,"OOMKilled":true,"Error":"",
             "StartedAt":"2026-11-22T10:00:00.123456789Z",
             "FinishedAt":"2026-11-22T10:00:05Z"}})";
  std::string instance;
  absl::StatusOr<ContainerObservation> obs = ParseInspect(body, &instance);
  ASSERT_TRUE(obs.ok()) << obs.status();
  EXPECT_EQ(instance, "me");
  EXPECT_EQ(obs->job_id, "j1");
  EXPECT_EQ(obs->container_id, "abc");
  EXPECT_EQ(obs->state, ContainerState::kExited);
  EXPECT_EQ(obs->exit_code, 137);
  EXPECT_TRUE(obs->oom_killed);
  ASSERT_TRUE(obs->started_at.has_value());
  ASSERT_TRUE(obs->finished_at.has_value());
  EXPECT_EQ(*obs->finished_at - *obs->started_at,
            absl::Seconds(5) - absl::Nanoseconds(123456789));

  // Never started: Go's zero time is "unset".
  const std::string created = R"({"Id":"x","State":{"Status":"created",
      "StartedAt":"0001-01-01T00:00:00Z","FinishedAt":"0001-01-01T00:00:00Z"}})";
  obs = ParseInspect(created, &instance);
  ASSERT_TRUE(obs.ok());
  EXPECT_EQ(instance, "");
  EXPECT_FALSE(obs->started_at.has_value());
  EXPECT_EQ(obs->state, ContainerState::kCreated);
}

TEST(DockerJsonTest, ParseHostInfoAndEvents) {
  absl::StatusOr<HostInfo> info = ParseHostInfo(
      R"({"NCPU":2,"MemTotal":25276510208,"ServerVersion":"20.10.24","LiveRestoreEnabled":false})");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->ncpu, 2);
  EXPECT_EQ(info->mem_total_bytes, 25276510208);
  EXPECT_FALSE(info->live_restore);
  EXPECT_EQ(ParseHostInfo("{}").status().code(), absl::StatusCode::kInternal);

  std::optional<ParsedEvent> e = ParseEventLine(
      R"({"Type":"container","Action":"die","Actor":{"ID":"x","Attributes":{"berth.job":"j","exitCode":"0"}},"timeNano":1700000000000000001})");
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->event.job_id, "j");
  EXPECT_EQ(e->event.action, "die");
  EXPECT_EQ(e->time_nanos, 1700000000000000001);
  EXPECT_EQ(e->event.container_id, "x");
  EXPECT_EQ(e->event.exit_code, std::optional<int>(0));
  EXPECT_EQ(e->event.time, absl::FromUnixNanos(1700000000000000001));
  std::optional<ParsedEvent> oom = ParseEventLine(
      R"({"Type":"container","Action":"die","Actor":{"ID":"y","Attributes":{"berth.job":"k","exitCode":"137"}},"timeNano":5})");
  ASSERT_TRUE(oom.has_value());
  EXPECT_EQ(oom->event.exit_code, std::optional<int>(137));
  std::optional<ParsedEvent> start = ParseEventLine(
      R"({"Type":"container","Action":"start","Actor":{"ID":"y","Attributes":{"berth.job":"k"}}})");
  ASSERT_TRUE(start.has_value());
  EXPECT_FALSE(start->event.exit_code.has_value());
  EXPECT_EQ(start->event.time, absl::InfinitePast());
  EXPECT_FALSE(ParseEventLine(R"({"Type":"network","Action":"connect"})").has_value());
  EXPECT_FALSE(ParseEventLine("garbage").has_value());
}

std::string Frame(char stream, const std::string& payload) {
  std::string h(8, '\0');
  h[0] = stream;
  const uint32_t n = static_cast<uint32_t>(payload.size());
  h[4] = static_cast<char>(n >> 24);
  h[5] = static_cast<char>(n >> 16);
  h[6] = static_cast<char>(n >> 8);
  h[7] = static_cast<char>(n);
  return h + payload;
}

TEST(DockerLogDemuxerTest, StripsHeadersAcrossChunkBoundaries) {
  const std::string big(300, 'x');
  const std::string stream =
      Frame(1, "hello\n") + Frame(2, "err\n") + Frame(1, big) + Frame(1, "end\n");
  // Every possible split into byte-sized chunks must give the same payload.
  for (size_t chunk : {1u, 3u, 7u, 8u, 9u, 64u, 10000u}) {
    SCOPED_TRACE(chunk);
    DockerLogDemuxer d;
    std::string out;
    for (size_t i = 0; i < stream.size(); i += chunk) {
      d.Feed(absl::string_view(stream).substr(i, chunk), &out);
    }
    EXPECT_EQ(out, "hello\nerr\n" + big + "end\n");
  }
}

DockerRuntimeOptions TestOptions(SimulatedClock* clock) {
  DockerRuntimeOptions o;
  o.endpoint.url = "unix:///nonexistent/berth-unit-test.sock";
  o.instance = "unit";
  o.image_allow_list = {"berth-test/*", "registry.local/research/*:v?"};
  o.clock = clock;
  return o;
}

ContainerSpec TestSpec() { return UnitTestSpec("job-1", {"sh", "-c", "echo hi"}); }

TEST(DockerRuntimeTest, CreateBodyIsHardened) {
  SimulatedClock clock;
  auto rt = DockerRuntime::Create(TestOptions(&clock));
  ASSERT_TRUE(rt.ok()) << rt.status();
  const json body = json::parse((*rt)->BuildCreateBody(TestSpec()));
  const json& host = body["HostConfig"];
  EXPECT_EQ(host["NetworkMode"], "none");
  EXPECT_EQ(host["CapDrop"], json::array({"ALL"}));
  EXPECT_EQ(host["SecurityOpt"], json::array({"no-new-privileges"}));
  EXPECT_EQ(host["PidsLimit"], 256);
  EXPECT_EQ(host["Memory"], 64 << 20);
  EXPECT_EQ(host["MemorySwap"], 64 << 20);
  EXPECT_EQ(host["NanoCpus"], 500'000'000);
  EXPECT_EQ(host["Init"], true);
  EXPECT_EQ(host["ReadonlyRootfs"], true);
  EXPECT_EQ(host["LogConfig"]["Type"], "local");
  EXPECT_EQ(host["LogConfig"]["Config"]["max-size"], "10m");
  EXPECT_EQ(host["LogConfig"]["Config"]["max-file"], "3");
  EXPECT_FALSE(host.contains("Binds"));
  EXPECT_FALSE(host.contains("GroupAdd"));  // no shared workspace group
  EXPECT_EQ(body["User"], "65534:65534");
  EXPECT_EQ(body["Labels"]["berth.job"], "job-1");
  EXPECT_EQ(body["Labels"]["berth.workspace"], "ws");
  EXPECT_EQ(body["Labels"]["berth.action"], "run");
  EXPECT_EQ(body["Labels"]["berth.instance"], "unit");
  EXPECT_EQ(body["Cmd"], json::array({"sh", "-c", "echo hi"}));
  EXPECT_EQ(body["Env"], json::array({"A=1"}));

  ContainerSpec pool = TestSpec();
  pool.network = "berth-db-net";
  EXPECT_EQ(json::parse((*rt)->BuildCreateBody(pool))["HostConfig"]["NetworkMode"],
            "berth-db-net");
}

TEST(DockerRuntimeTest, WorkspaceGroupIsTheOneSupplementaryGroup) {
  SimulatedClock clock;
  DockerRuntimeOptions opts = TestOptions(&clock);
  opts.workspace_gid = 4242;
  auto rt = DockerRuntime::Create(opts);
  ASSERT_TRUE(rt.ok()) << rt.status();
  const json body = json::parse((*rt)->BuildCreateBody(TestSpec()));
  const json& host = body["HostConfig"];
  EXPECT_EQ(host["GroupAdd"], json::array({"4242"}));
  // Nothing else of the hardening changes.
  EXPECT_EQ(body["User"], "65534:65534");
  EXPECT_EQ(host["CapDrop"], json::array({"ALL"}));
  EXPECT_EQ(host["SecurityOpt"], json::array({"no-new-privileges"}));
  EXPECT_EQ(host["ReadonlyRootfs"], true);

  for (int64_t bad : {int64_t{0}, int64_t{-2}, int64_t{1} << 32}) {
    opts.workspace_gid = bad;
    auto refused = DockerRuntime::Create(opts);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(refused.status().message(), "workspace_gid"))
        << refused.status();
  }
}

TEST(DockerRuntimeTest, RefusesBeforeAnyEngineCall) {
  SimulatedClock clock;
  DockerRuntimeOptions opts = TestOptions(&clock);
  opts.workspaces_root = "/nonexistent-root";
  auto rt = DockerRuntime::Create(opts);
  ASSERT_TRUE(rt.ok()) << rt.status();
  struct Case {
    std::string name;
    ContainerSpec spec;
    absl::StatusCode want;
  };
  std::vector<Case> cases;
  ContainerSpec s = TestSpec();
  s.image = "docker.io/library/alpine:3";
  cases.push_back({"image not allowed", s, absl::StatusCode::kPermissionDenied});
  s = TestSpec();
  s.image = "registry.local/research/tool:v10";  // '?' is one char
  cases.push_back({"glob is exact", s, absl::StatusCode::kPermissionDenied});
  s = TestSpec();
  s.job_id = "../etc";
  cases.push_back({"bad job id", s, absl::StatusCode::kInvalidArgument});
  s = TestSpec();
  s.workspace = "a/b";
  cases.push_back({"bad workspace", s, absl::StatusCode::kInvalidArgument});
  s = TestSpec();
  s.memory_bytes = 0;
  cases.push_back({"no memory", s, absl::StatusCode::kInvalidArgument});
  s = TestSpec();
  s.env = {{"A=B", "x"}};
  cases.push_back({"bad env", s, absl::StatusCode::kInvalidArgument});
  s = TestSpec();
  s.mount_workspace = true;
  cases.push_back({"missing workspace dir", s,
                   absl::StatusCode::kFailedPrecondition});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<StartResult> r = (*rt)->Start(c.spec);
    EXPECT_EQ(r.status().code(), c.want) << r.status();
  }
  absl::StatusOr<StartResult> r = (*rt)->Start(cases[0].spec);
  EXPECT_TRUE(absl::StrContains(r.status().message(), "docker.io/library/alpine:3"))
      << r.status();
  EXPECT_EQ(TotalCalls((*rt)->Counters()), 0);
}

TEST(DockerRuntimeTest, UnreachableEngineIsUnavailableAfterRetries) {
  SimulatedClock clock;
  const absl::Time t0 = clock.Now();
  auto rt = DockerRuntime::Create(TestOptions(&clock));
  ASSERT_TRUE(rt.ok());
  absl::StatusOr<ContainerList> list = (*rt)->List();
  EXPECT_EQ(list.status().code(), absl::StatusCode::kUnavailable) << list.status();
  const CallCounters c = (*rt)->Counters();
  EXPECT_EQ(c.at("list").calls, 4);  // max_attempts
  EXPECT_EQ(c.at("list").errors, 4);
  // Backoff 100 + 200 + 400 ms, +-20% jitter, on the simulated clock.
  EXPECT_GE(clock.Now() - t0, absl::Milliseconds(560));
  EXPECT_LE(clock.Now() - t0, absl::Milliseconds(840));
  EXPECT_EQ((*rt)->Ping().code(), absl::StatusCode::kUnavailable);
}

TEST(DockerRuntimeTest, RejectsBadOptions) {
  SimulatedClock clock;
  DockerRuntimeOptions o = TestOptions(&clock);
  o.instance = "";
  EXPECT_EQ(DockerRuntime::Create(o).status().code(),
            absl::StatusCode::kInvalidArgument);
  o = TestOptions(&clock);
  o.user = "0:0";
  EXPECT_EQ(DockerRuntime::Create(o).status().code(),
            absl::StatusCode::kInvalidArgument);
  o = TestOptions(&clock);
  o.endpoint.url = "ftp://x";
  EXPECT_EQ(DockerRuntime::Create(o).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace berth
