#include "executor/runtime/runtime.h"

#include <algorithm>

namespace berth {

absl::string_view ContainerStateName(ContainerState s) {
  switch (s) {
    case ContainerState::kCreated: return "created";
    case ContainerState::kRunning: return "running";
    case ContainerState::kPaused: return "paused";
    case ContainerState::kRestarting: return "restarting";
    case ContainerState::kRemoving: return "removing";
    case ContainerState::kExited: return "exited";
    case ContainerState::kDead: return "dead";
    case ContainerState::kUnknown: return "unknown";
  }
  return "unknown";
}

ContainerState ParseContainerState(absl::string_view name) {
  static constexpr ContainerState kAll[] = {
      ContainerState::kCreated,    ContainerState::kRunning,
      ContainerState::kPaused,     ContainerState::kRestarting,
      ContainerState::kRemoving,   ContainerState::kExited,
      ContainerState::kDead};
  for (ContainerState s : kAll) {
    if (ContainerStateName(s) == name) return s;
  }
  return ContainerState::kUnknown;
}

bool IsFinished(ContainerState s) {
  return s == ContainerState::kExited || s == ContainerState::kDead;
}

bool operator==(const ContainerSummary& a, const ContainerSummary& b) {
  return a.job_id == b.job_id && a.container_id == b.container_id &&
         a.state == b.state && a.node_id == b.node_id;
}

absl::string_view NodeStateName(NodeState s) {
  switch (s) {
    case NodeState::kReady: return "ready";
    case NodeState::kDown: return "down";
    case NodeState::kUnknown: return "unknown";
  }
  return "unknown";
}

absl::string_view NodeAvailabilityName(NodeAvailability a) {
  switch (a) {
    case NodeAvailability::kActive: return "active";
    case NodeAvailability::kPause: return "pause";
    case NodeAvailability::kDrain: return "drain";
  }
  return "active";
}

bool AcceptsJobs(const NodeInfo& n) {
  return n.state == NodeState::kReady &&
         n.availability == NodeAvailability::kActive;
}

ContainerListDiff DiffContainerLists(const ContainerList& before,
                                     const ContainerList& after) {
  ContainerListDiff diff;
  for (const auto& [job, summary] : after) {
    auto it = before.find(job);
    if (it == before.end() || !(it->second == summary)) {
      diff.changed.push_back(job);
    }
  }
  for (const auto& [job, summary] : before) {
    if (after.find(job) == after.end()) diff.vanished.push_back(job);
  }
  // std::map iteration is ordered: both vectors are already sorted.
  return diff;
}

absl::string_view ExitKindName(ExitKind k) {
  switch (k) {
    case ExitKind::kSucceeded: return "SUCCEEDED";
    case ExitKind::kNonzeroExit: return "NONZERO_EXIT";
    case ExitKind::kOomKilled: return "OOM_KILLED";
    case ExitKind::kTimedOut: return "TIMED_OUT";
    case ExitKind::kCancelled: return "CANCELLED";
    case ExitKind::kRequeued: return "REQUEUED";
    case ExitKind::kLost: return "LOST";
    case ExitKind::kStartFailed: return "START_FAILED";
  }
  return "UNKNOWN";
}

bool operator==(const ExitOutcome& a, const ExitOutcome& b) {
  return a.kind == b.kind && a.exit_code == b.exit_code;
}

namespace {

std::optional<ExitKind> IntentKind(StopIntent intent) {
  switch (intent) {
    case StopIntent::kNone: return std::nullopt;
    case StopIntent::kCancel: return ExitKind::kCancelled;
    case StopIntent::kTimeout: return ExitKind::kTimedOut;
    case StopIntent::kRequeue: return ExitKind::kRequeued;
  }
  return std::nullopt;
}

}  // namespace

std::optional<ExitOutcome> ClassifyExit(
    const std::optional<ContainerObservation>& observation, StopIntent intent) {
  const std::optional<ExitKind> by_intent = IntentKind(intent);
  if (!observation.has_value()) {
    return ExitOutcome{by_intent.value_or(ExitKind::kLost), 0};
  }
  if (!IsFinished(observation->state)) return std::nullopt;
  const int code = observation->exit_code;
  if (observation->oom_killed) return ExitOutcome{ExitKind::kOomKilled, code};
  if (by_intent.has_value()) return ExitOutcome{*by_intent, code};
  if (observation->start_failed) return ExitOutcome{ExitKind::kStartFailed, code};
  if (observation->lost) return ExitOutcome{ExitKind::kRequeued, 0};
  if (code == 0) return ExitOutcome{ExitKind::kSucceeded, 0};
  return ExitOutcome{ExitKind::kNonzeroExit, code};
}

std::optional<ExitKind> ClassifyStartError(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kAlreadyExists:
      return ExitKind::kStartFailed;
    default:
      return std::nullopt;
  }
}

int64_t TotalCalls(const CallCounters& c) {
  int64_t total = 0;
  for (const auto& [name, counters] : c) total += counters.calls;
  return total;
}

}  // namespace berth
