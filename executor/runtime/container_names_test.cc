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
// Labels count attempts from 1, as the API does; an older container's
// labels (0-based, no base label) read back the same 0-based attempt.
TEST(ContainerNamesTest, AttemptLabelsCountFromOneAndReadOldOnes) {
  for (int attempt : {0, 1, 7}) {
    const std::map<std::string, std::string> labels = AttemptLabels(attempt);
    EXPECT_EQ(labels.at(kAttemptLabel), std::to_string(attempt + 1));
    EXPECT_EQ(ParseAttemptLabel(labels.at(kAttemptLabel), labels.at(kAttemptBaseLabel)),
              attempt);
    EXPECT_EQ(ParseAttemptLabel(std::to_string(attempt), ""), attempt) << "an older label";
  }
  EXPECT_FALSE(ParseAttemptLabel("", "1").has_value());
  EXPECT_FALSE(ParseAttemptLabel("x", "").has_value());
}

}  // namespace berth
