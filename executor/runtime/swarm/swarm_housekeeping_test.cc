#include "executor/runtime/swarm/swarm_housekeeping.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "executor/runtime/swarm/swarm_json.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

NodeInfo Node(const std::string& host, const std::string& version) {
  NodeInfo n;
  n.id = "id-" + host;
  n.hostname = host;
  n.engine_version = version;
  return n;
}

TEST(EngineMajorVersionTest, LeadingNumber) {
  EXPECT_EQ(EngineMajorVersion("20.10.24+dfsg1"), std::optional<int>(20));
  EXPECT_EQ(EngineMajorVersion("24.0.7"), std::optional<int>(24));
  EXPECT_EQ(EngineMajorVersion("27"), std::optional<int>(27));
  EXPECT_EQ(EngineMajorVersion(""), std::nullopt);
  EXPECT_EQ(EngineMajorVersion("dev"), std::nullopt);
}

TEST(SwarmHousekeepingWarningTest, NamesTheOldEnginesAndTheFix) {
  EXPECT_EQ(SwarmHousekeepingWarning({}, "berth"), std::nullopt);
  EXPECT_EQ(SwarmHousekeepingWarning({Node("a", "24.0.7"), Node("b", "26.1.0")}, "berth"),
            std::nullopt);
  EXPECT_EQ(SwarmHousekeepingWarning({Node("a", ""), Node("b", "25.0.0")}, "berth"),
            std::nullopt);  // unknown versions are not guessed at
  const std::optional<std::string> w = SwarmHousekeepingWarning(
      {Node("mgr", "20.10.24+dfsg1"), Node("w1", "24.0.7"), Node("w2", "23.0.6")}, "lab");
  ASSERT_TRUE(w.has_value());
  EXPECT_TRUE(absl::StrContains(*w, "on 2 node(s): mgr (20.10.24+dfsg1), w2 (23.0.6).")) << *w;
  EXPECT_FALSE(absl::StrContains(*w, "w1")) << *w;
  EXPECT_TRUE(absl::StrContains(*w, "moby/moby#44312")) << *w;
  EXPECT_TRUE(absl::StrContains(
      *w, "docker container prune --force --filter label=berth.instance=lab "))
      << *w;
}

// The version as the manager's node list gives it (recorded on the test
// swarm, Debian 12's docker.io).
TEST(SwarmHousekeepingWarningTest, FromTheManagersNodeList) {
  absl::StatusOr<std::vector<NodeInfo>> nodes = ParseNodeList(R"json([{"ID": "jmeay255",
    "Spec": {"Role": "manager", "Availability": "active"},
    "Description": {"Hostname": "vm", "Engine": {"EngineVersion": "20.10.24+dfsg1"},
                    "Resources": {"NanoCPUs": 2000000000, "MemoryBytes": 25276026880}},
    "Status": {"State": "ready"}}])json");
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  ASSERT_EQ(nodes->size(), 1u);
  EXPECT_EQ(nodes->front().engine_version, "20.10.24+dfsg1");
  const std::optional<std::string> w = SwarmHousekeepingWarning(*nodes, "berth");
  ASSERT_TRUE(w.has_value());
  EXPECT_TRUE(absl::StrContains(*w, "vm (20.10.24+dfsg1)")) << *w;
}

}  // namespace
}  // namespace berth
