#include "executor/runtime/swarm/node_loss.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "planner/base/units.h"

namespace berth {
namespace {

// How long before Berth first saw a node lost it may have been lost (the
// manager's heartbeat timeout plus Berth's tick, with margin).
constexpr absl::Duration kLossSlack = absl::Minutes(1);

std::string Clock(absl::Time t) {
  return absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", t, absl::UTCTimeZone());
}

std::string NodeName(const std::string& id, const std::optional<NodeInfo>& node,
                     const NodeLoss* loss) {
  std::string host = node.has_value() ? node->hostname : "";
  if (host.empty() && loss != nullptr) host = loss->hostname;
  return host.empty() ? absl::StrCat("node ", id)
                      : absl::StrCat("node ", host, " (", id, ")");
}

// Task states the manager sets for a task whose node went away (the node's
// agent never reported them).
bool EndedByManager(const SwarmTask& t) {
  if (t.state == "shutdown" || t.state == "orphaned" || t.state == "remove") return true;
  return t.state == "rejected" &&
         (!t.container_id.empty() || t.err.find("constraints") != std::string::npos);
}

// Exit codes of a container stopped by signal (143 SIGTERM, 137 SIGKILL):
// what a worker's dockerd restarted without live-restore does to the
// containers it finds (SIGTERM, the stop grace, SIGKILL).
bool KilledBySignal(const SwarmTask& t) { return t.exit_code == 143 || t.exit_code == 137; }

// A loss Berth did not see (berthd was down through it): the task failed by
// signal around its node record's last change, and the node is Ready -- the
// change is its return (a Ready node's record changes on a re-registration,
// or an operator's update). The swarm's task record is the same as for a
// job that killed itself (failed, desired shutdown, exit 143), so the time is
// the only witness.
bool FailedAtUnseenReturn(const SwarmTask& t, const std::optional<NodeInfo>& node,
                          const NodeLossOptions& options) {
  if (t.state != "failed" || !KilledBySignal(t) || !t.status_at.has_value()) return false;
  if (!node.has_value() || node->state != NodeState::kReady || !node->updated_at.has_value()) {
    return false;
  }
  // Killed while the restarted dockerd restored (before the agent came
  // back: up to its stop grace and start-up earlier), or by the agent after
  // it came back (within the settle).
  return *t.status_at >= *node->updated_at - kLossSlack &&
         *t.status_at <= *node->updated_at + options.rejoin_settle;
}

}  // namespace

void NodeLossTracker::See(const std::string& id, const NodeInfo& n, absl::Time now) {
  auto it = losses_.find(id);
  if (n.state != NodeState::kReady) {
    if (it == losses_.end()) {
      NodeLoss l;
      l.hostname = n.hostname;
      l.lost_at = now;
      losses_[id] = std::move(l);
    } else if (it->second.back_at.has_value() || it->second.removed) {
      // Down again after it was back (or re-joined after a removal): a new
      // loss, timed from now -- --swarm_node_lost_grace counts from it.
      it->second.lost_at = now;
      it->second.back_at.reset();
      it->second.removed = false;
    }
    return;
  }
  if (it != losses_.end() && !it->second.back_at.has_value()) it->second.back_at = now;
}

void NodeLossTracker::Update(const std::vector<NodeInfo>& nodes, absl::Time now) {
  std::map<std::string, bool> present;
  for (const NodeInfo& n : nodes) {
    present[n.id] = true;
    See(n.id, n, now);
  }
  for (auto& [id, loss] : losses_) {
    if (!present.count(id)) loss.removed = true;
  }
}

void NodeLossTracker::UpdateOne(const std::string& node_id,
                                const std::optional<NodeInfo>& node, absl::Time now) {
  if (node.has_value()) {
    See(node_id, *node, now);
    return;
  }
  auto it = losses_.find(node_id);
  if (it != losses_.end()) it->second.removed = true;
}

const NodeLoss* NodeLossTracker::Find(const std::string& node_id) const {
  auto it = losses_.find(node_id);
  return it == losses_.end() ? nullptr : &it->second;
}

std::map<std::string, NodeLoss> NodeLossTracker::Lost() const {
  std::map<std::string, NodeLoss> out;
  for (const auto& [id, l] : losses_) {
    if (!l.removed && !l.back_at.has_value()) out[id] = l;
  }
  return out;
}

Fence FenceTask(const SwarmTask& task, const std::optional<NodeInfo>& node,
                const NodeLoss* loss, absl::Time now, const NodeLossOptions& options) {
  Fence f;
  if (task.node_id.empty()) return f;  // never placed: nothing can run
  const bool terminal = IsTerminalTaskState(task.state);
  // An end the node's agent reported (complete, failed, a start refused) is
  // the attempt's own -- unless it failed around a loss of its node: a
  // dockerd restarted without live-restore kills what ran there (137/143),
  // which is the loss, not the job.
  const bool failed_in_loss =
      loss != nullptr && task.state == "failed" &&
      (!task.status_at.has_value() || *task.status_at >= loss->lost_at - kLossSlack);
  const bool failed_at_return =
      loss == nullptr && FailedAtUnseenReturn(task, node, options);
  const std::string name = NodeName(task.node_id, node, loss);
  if (terminal && !EndedByManager(task) && !failed_in_loss && !failed_at_return) {
    // Ended by itself, but its node's engine was down for part of the run:
    // Docker keeps no output a container writes while its daemon is down.
    const bool ran_through_loss =
        loss != nullptr && task.status_at.has_value() &&
        *task.status_at >= loss->lost_at - kLossSlack &&
        (!loss->back_at.has_value() || !task.created_at.has_value() ||
         *task.created_at <= *loss->back_at);
    if (ran_through_loss) {
      f.log_note = absl::StrCat(
          "ran while ", name, " was lost (from ", Clock(loss->lost_at),
          loss->back_at.has_value() ? absl::StrCat(" to ", Clock(*loss->back_at)) : "",
          "): output written while its engine was unreachable may be missing from the log");
    }
    return f;
  }
  const std::string lost_at =
      loss != nullptr ? absl::StrCat(" lost at ", Clock(loss->lost_at)) : std::string();
  if (!node.has_value() || (loss != nullptr && loss->removed)) {
    f.verdict = FenceVerdict::kRequeue;
    f.reason = absl::StrCat(name, lost_at,
                            " was removed from the swarm: its attempt counts as ended");
    return f;
  }
  if (node->state == NodeState::kReady) {
    if (!terminal) return f;  // it runs (or starts) on a node that is there
    if (loss != nullptr && loss->back_at.has_value()) {
      const absl::Time settled = *loss->back_at + options.rejoin_settle;
      if (now < settled) {
        f.verdict = FenceVerdict::kHold;
        f.reason = absl::StrCat("requeue after ", Clock(settled), ": ", name, lost_at,
                                " is back since ", Clock(*loss->back_at),
                                "; its agent stops the old attempt meanwhile");
        return f;
      }
      f.verdict = FenceVerdict::kRequeue;
      f.reason = absl::StrCat(name, lost_at, " came back at ", Clock(*loss->back_at),
                              " and its attempt ended (task ", task.state, ")");
      return f;
    }
    if (failed_at_return) {
      // Its container is dead (the agent reported it): no settle needed.
      f.verdict = FenceVerdict::kRequeue;
      f.reason = absl::StrCat(
          "the task on ", name, " was killed by signal (", task.exit_code, ") at ",
          Clock(*task.status_at), ", when the node came back (its record changed at ",
          Clock(*node->updated_at), "; berthd did not see the loss): counted as the node's "
          "loss, not the job's failure");
      return f;
    }
    // Berth never saw the node lost (berthd was down, or the loss was
    // shorter than its pass), yet the manager ended the task without the
    // node: the node may have just rejoined, its agent still stopping the
    // attempt. Settle from the node record's last change (its return).
    if (node->updated_at.has_value() && now < *node->updated_at + options.rejoin_settle) {
      f.verdict = FenceVerdict::kHold;
      f.reason = absl::StrCat("requeue after ", Clock(*node->updated_at + options.rejoin_settle),
                              ": swarm ended the task on ", name, " (", task.state,
                              "), which changed at ", Clock(*node->updated_at),
                              "; its agent stops the old attempt meanwhile");
      return f;
    }
    f.verdict = FenceVerdict::kRequeue;
    f.reason = absl::StrCat("swarm ended the task on ", name, " (", task.state,
                            task.err.empty() ? "" : ": ", task.err, ")");
    return f;
  }
  // The node is down: an attempt may still run there.
  if (loss != nullptr && options.lost_grace > absl::ZeroDuration() &&
      now >= loss->lost_at + options.lost_grace) {
    f.verdict = FenceVerdict::kRequeue;
    f.reason = absl::StrCat(name, lost_at, " has been down for more than ",
                            FormatHumanDuration(options.lost_grace),
                            " (--swarm_node_lost_grace): its attempt counts as ended");
    return f;
  }
  // The operator's override names the node by id: hostnames need not be
  // unique.
  f.verdict = FenceVerdict::kHold;
  const bool timed = loss != nullptr && options.lost_grace > absl::ZeroDuration();
  f.reason = absl::StrCat(
      timed ? absl::StrCat("requeue after ", Clock(loss->lost_at + options.lost_grace),
                           " (--swarm_node_lost_grace)")
            : std::string("requeue once the node is back and its attempt has ended"),
      ": ", name, lost_at.empty() ? " is not ready" : lost_at,
      timed ? "; sooner if it comes back and its attempt ends" : "",
      ". If the node is known dead, `docker node rm --force ", task.node_id,
      "` requeues now");
  return f;
}

ContainerObservation ObserveFencedTask(const SwarmTask& task, const Fence& fence) {
  if (fence.verdict == FenceVerdict::kAsObserved) {
    ContainerObservation obs = ObserveTask(task, true);
    obs.log_note = fence.log_note;
    return obs;
  }
  ContainerObservation obs;
  obs.node_id = task.node_id;
  obs.error = fence.reason;
  if (fence.verdict == FenceVerdict::kRequeue) {
    obs.state = ContainerState::kDead;
    obs.lost = true;
    obs.finished_at = task.status_at;
    return obs;
  }
  obs.held = fence.reason;
  const bool started = task.state == "running" || !task.container_id.empty();
  obs.state = started ? ContainerState::kRunning : ContainerState::kCreated;
  return obs;
}

}  // namespace berth
