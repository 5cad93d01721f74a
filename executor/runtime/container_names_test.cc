#include "executor/runtime/container_names.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace berth {
namespace {

TEST(ContainerNamesTest, PrefixIsFixedWidthAndPerInstance) {
  EXPECT_EQ(InstanceNamePrefix("a").size(), 15u);  // "berth-" 8 hex "-"
  EXPECT_EQ(InstanceNamePrefix("a-b.c_d").size(), 15u);
  EXPECT_EQ(InstanceNamePrefix("prod"), InstanceNamePrefix("prod"));
  EXPECT_NE(InstanceNamePrefix("prod"), InstanceNamePrefix("staging"));
  EXPECT_EQ(InstanceNamePrefix("x").rfind("berth-", 0), 0u);
}

// '-' is legal in both instances and job ids: the fixed-width prefix keeps
// (instance, job) pairs that concatenate alike apart.
TEST(ContainerNamesTest, InstancesWithDashesNeverShareANameForOneJob) {
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"a", "b-c"}, {"a-b", "c"}, {"a-b-c", ""}, {"prod", "job"}, {"staging", "job"},
      {"p", "rod-job"}};
  std::set<std::string> names;
  for (const auto& [instance, job] : pairs) {
    SCOPED_TRACE(instance + " / " + job);
    const std::string name = ContainerName(instance, job);
    EXPECT_EQ(name, InstanceNamePrefix(instance) + job);
    EXPECT_TRUE(names.insert(name).second) << name;
  }
  EXPECT_EQ(LegacyContainerName("job-1"), "berth-job-1");
}

TEST(ContainerNamesTest, HashIsStable) {
  // FNV-1a 64 of "" is its offset basis: names survive rebuilds.
  EXPECT_EQ(NameHash(""), 1469598103934665603ull);
  EXPECT_NE(NameHash("a", "b"), NameHash("ab"));
}

}  // namespace
}  // namespace berth
