#include "tests/swarm_berthd.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "executor/runtime/swarm/swarm_runtime.h"
#include "executor/runtime/swarm/testing/swarm_test_util.h"
#include "executor/store/store.h"  // IsTerminal

namespace berth {

absl::StatusOr<std::unique_ptr<BerthdProcess>> StartSwarmBerthd(int64_t node_memory_bytes) {
  if (!testing::SwarmAvailable()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no swarm manager at ", testing::SwarmManagerUrl(),
        "; run: bash tools/swarm_cluster.sh up (or leave the swarm tests out"
        " with --test_tag_filters=-swarm)"));
  }
  absl::StatusOr<std::unique_ptr<SwarmRuntime>> rt =
      SwarmRuntime::Create(testing::SwarmTestOptions("probe"));
  if (!rt.ok()) return rt.status();
  absl::StatusOr<std::vector<NodeInfo>> nodes = (*rt)->ListNodes();
  if (!nodes.ok()) return nodes.status();
  int64_t smallest = 0;
  for (const NodeInfo& n : *nodes) {
    if (smallest == 0 || n.memory_bytes < smallest) smallest = n.memory_bytes;
  }
  if (smallest <= node_memory_bytes) {
    return absl::FailedPreconditionError("swarm nodes smaller than the test's node size");
  }
  for (const NodeInfo& n : *nodes) {
    if (n.memory_bytes != smallest) {
      return absl::FailedPreconditionError(
          "swarm nodes of different sizes: the test sizes them with one reserve");
    }
  }
  BerthdProcessOptions o;
  o.memory = "auto";
  o.cpus = "auto";
  o.max_workers = 16;
  o.extra_flags = {"--runtime=swarm",
                   absl::StrCat("--swarm_manager=", testing::SwarmManagerUrl()),
                   absl::StrCat("--reserve_memory=", smallest - node_memory_bytes)};
  return BerthdProcess::Start(o);
}

absl::StatusOr<v1::Job> WaitJob(BerthClient& c, const std::string& id,
                                const std::function<bool(const v1::Job&)>& want,
                                absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    absl::StatusOr<v1::Job> j = c.GetJob(id);
    if (j.ok() && want(*j)) return j;
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(absl::StrCat(
          id, ": ", j.ok() ? v1::JobState_Name(j->state()) : j.status().ToString()));
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
}

absl::StatusOr<v1::Job> WaitTerminal(BerthClient& c, const std::string& id,
                                     absl::Duration timeout) {
  return WaitJob(c, id, [](const v1::Job& j) { return IsTerminal(j.state()); }, timeout);
}

absl::StatusOr<std::vector<v1::Event>> EventsUntilTerminal(
    BerthClient& c, const std::vector<std::string>& jobs) {
  std::set<std::string> open(jobs.begin(), jobs.end());
  std::vector<v1::Event> events;
  absl::Status s = c.Watch(
      0,
      [&](const v1::Event& e) {
        events.push_back(e);
        if (IsTerminal(e.state())) open.erase(e.job_id());
        return !open.empty();
      },
      absl::Now() + absl::Seconds(20));
  if (!s.ok()) return s;
  return events;
}

}  // namespace berth
