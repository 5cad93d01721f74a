// Helpers for tests of the real berthd --runtime=swarm on the test swarm
// (tools/swarm_cluster.sh up): a berthd whose nodes are all one small size,
// waiting for job states, and the event stream of a finished test.
//
// Not thread-safe (one test thread drives them).
#ifndef BERTH_TESTS_SWARM_BERTHD_H_
#define BERTH_TESTS_SWARM_BERTHD_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tests/berthd_process.h"

namespace berth {

// berthd --runtime=swarm on the test swarm's manager with --memory=auto
// --cpus=auto and --reserve_memory chosen so that every node (they all
// report the machine's memory) plans with `node_memory_bytes`. FAILED_
// PRECONDITION when no swarm answers (the test must fail, not skip).
absl::StatusOr<std::unique_ptr<BerthdProcess>> StartSwarmBerthd(int64_t node_memory_bytes);

// Polls GetJob until the job is terminal; DEADLINE_EXCEEDED with its state.
absl::StatusOr<v1::Job> WaitTerminal(BerthClient& c, const std::string& id,
                                     absl::Duration timeout);

// Polls GetJob until `want(job)` holds; DEADLINE_EXCEEDED otherwise.
absl::StatusOr<v1::Job> WaitJob(BerthClient& c, const std::string& id,
                                const std::function<bool(const v1::Job&)>& want,
                                absl::Duration timeout);

// Every event from revision 1 up to and including the terminal event of each
// of `jobs` (all already terminal), in order.
absl::StatusOr<std::vector<v1::Event>> EventsUntilTerminal(BerthClient& c,
                                                           const std::vector<std::string>& jobs);

}  // namespace berth

#endif  // BERTH_TESTS_SWARM_BERTHD_H_
