// Fencing a Swarm job against node loss: at most one live attempt per job.
//
// A Swarm worker whose dockerd dies (or that is cut off from the manager)
// keeps its containers running (containerd holds them), while the manager
// marks the node Down and may end the task on paper (rejected "assigned node
// no longer meets constraints", shutdown, orphaned). Requeuing then would run
// the job twice at once. So a task on a lost node is HELD -- the job stays as
// it was (RUNNING if its container had started, else ADMITTED) -- until its
// attempt is known to have ended:
//   - the node is Ready again and the task is terminal, and the node has been
//     back for `rejoin_settle` (its agent stops every container the manager
//     no longer assigns to it, within the stop grace); or
//   - the node has left the swarm (`docker node rm --force`): the operator's
//     statement that it is dead; or
//   - `lost_grace` > 0 and the node has been down that long: the operator's
//     standing statement that a node down that long has stopped its tasks
//     (Nomad's max_client_disconnect). 0 (the default) never requeues on time.
// A task that "failed" on a node around its loss (from a minute before Berth
// saw the node lost) failed because of it (a dockerd restarted without
// live-restore kills its containers): it is treated as ended by the loss.
// A loss Berth never saw (berthd was down through it) leaves the same task
// record as a job that killed itself (failed, exit 143/137): such a task on
// a Ready node, failed from a minute before the node record's last change
// (its return) to rejoin_settle after it, is treated as ended by the loss.
// Pure functions and a small state tracker; no I/O.
#ifndef BERTH_EXECUTOR_RUNTIME_SWARM_NODE_LOSS_H_
#define BERTH_EXECUTOR_RUNTIME_SWARM_NODE_LOSS_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "executor/runtime/runtime.h"
#include "executor/runtime/swarm/swarm_json.h"

namespace berth {

struct NodeLossOptions {
  // A node down this long counts as dead (its attempts ended). 0 = never:
  // wait for the node to come back or to be removed from the swarm.
  absl::Duration lost_grace = absl::ZeroDuration();
  // How long a lost node must be Ready again before its tasks that the
  // manager ended count as stopped (>= the stop grace: its agent SIGTERMs,
  // waits the grace, SIGKILLs).
  absl::Duration rejoin_settle = absl::Seconds(15);
};

// What Berth saw of one node that was lost.
struct NodeLoss {
  std::string hostname;
  absl::Time lost_at = absl::InfinitePast();  // first seen not Ready (this loss)
  std::optional<absl::Time> back_at;          // seen Ready again since
  bool removed = false;                       // no longer in the node list
};

// Remembers node losses across observations (in memory: after a berthd
// restart a node still down counts as lost from the first observation).
// Thread-compatible (SwarmRuntime guards it).
class NodeLossTracker {
 public:
  // The whole node list: nodes missing from it are marked removed.
  void Update(const std::vector<NodeInfo>& nodes, absl::Time now);
  // One node (GET /nodes/{id}); `node` nullopt: the node is gone (404).
  void UpdateOne(const std::string& node_id, const std::optional<NodeInfo>& node,
                 absl::Time now);
  // nullptr when the node was never seen lost (or has long been back).
  const NodeLoss* Find(const std::string& node_id) const;
  // Nodes currently lost (not Ready and not removed), by id.
  std::map<std::string, NodeLoss> Lost() const;

 private:
  void See(const std::string& id, const NodeInfo& n, absl::Time now);
  std::map<std::string, NodeLoss> losses_;
};

enum class FenceVerdict {
  kAsObserved,  // the task's own state is the truth
  kHold,        // an attempt may still run on a lost node: do not requeue
  kRequeue,     // its node was lost and the attempt has ended: requeue
};
struct Fence {
  FenceVerdict verdict = FenceVerdict::kAsObserved;
  std::string reason;  // for kHold and kRequeue: names the node and why
  // kAsObserved, a task that ended by itself on a node lost while it ran
  // (created before the node was back, ended after it was lost): names the
  // node and says output may be missing from the log (its engine was down).
  std::string log_note;
};

// The verdict for the newest task of a job's service. node: the task's node
// as the manager reports it now (nullopt: not in the swarm any more); loss:
// the tracker's record of it (nullptr if none).
Fence FenceTask(const SwarmTask& task, const std::optional<NodeInfo>& node,
                const NodeLoss* loss, absl::Time now, const NodeLossOptions& options);

// The task observed through its fence: kAsObserved -> ObserveTask; kHold ->
// kRunning if its container had started (running or a container id), else
// kCreated, with the reason as error and as held; kRequeue -> kDead, lost, the reason as
// error, no exit code. The fence's log_note becomes the observation's.
ContainerObservation ObserveFencedTask(const SwarmTask& task, const Fence& fence);

}  // namespace berth

#endif  // BERTH_EXECUTOR_RUNTIME_SWARM_NODE_LOSS_H_
