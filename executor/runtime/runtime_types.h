// The values a Runtime (runtime.h) takes and gives: what to run, what a
// container is and became, nodes, exits, events, usage samples, call counters
// and log reads. No Docker, curl or JSON type appears here.
#ifndef BERTH_EXECUTOR_RUNTIME_RUNTIME_TYPES_H_
#define BERTH_EXECUTOR_RUNTIME_RUNTIME_TYPES_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "executor/runtime/stop_intent.h"

namespace berth {

// What to run for one job. Validated by Runtime::Start.
struct ContainerSpec {
  // The job-server's id: 1-128 chars of [A-Za-z0-9._-]. The container is named
  // "berth-<job_id>" and labelled berth.job=<job_id>.
  std::string job_id;
  // Workspace name, validated like an id; labelled berth.workspace. When
  // mount_workspace is true, <workspaces root>/<workspace> is bind-mounted
  // read-write at /workspace (and nothing else is mounted).
  std::string workspace;
  // Free text, labelled berth.action (e.g. "run").
  std::string action;
  // Image reference; must match the runtime's allow-list. Never pulled.
  std::string image;
  // Command and arguments, no shell. Empty: the image's default command.
  std::vector<std::string> argv;
  // Environment variables (name, value).
  std::vector<std::pair<std::string, std::string>> env;
  // CPU quota in thousandths of a CPU. REQUIRES: > 0.
  int64_t cpu_millis = 0;
  // Memory limit (and reservation) in bytes; swap is disabled. REQUIRES: > 0.
  int64_t memory_bytes = 0;
  // Docker network to join (a pool's operator-created network). Empty: no
  // network at all (NetworkMode "none").
  std::string network;
  // Whether to mount the workspace directory at /workspace (see workspace).
  bool mount_workspace = false;
  // Multi-node runtimes (Swarm): the node the planner chose, by the engine's
  // node id; the job runs there or nowhere. Empty: any node. Single-host
  // runtimes ignore it.
  std::string node;
  // Which run of the job this is (0 the first, +1 per requeue). Multi-node
  // runtimes put it in the name, so a requeued job's new run never collides
  // with its old one; every runtime labels the container with it
  // (ContainerSummary::attempt).
  int attempt = 0;
};

// A container's lifecycle state as the engine reports it.
enum class ContainerState {
  kCreated,
  kRunning,
  kPaused,
  kRestarting,
  kRemoving,
  kExited,
  kDead,
  kUnknown,
};

absl::string_view ContainerStateName(ContainerState s);
// Parses the engine's lowercase state name; unknown names give kUnknown.
ContainerState ParseContainerState(absl::string_view name);
// True for kExited and kDead: the job's process is gone for good.
bool IsFinished(ContainerState s);

// One row of the bulk list.
struct ContainerSummary {
  std::string job_id;
  std::string container_id;
  ContainerState state = ContainerState::kUnknown;
  // Multi-node runtimes: the node the job's task is (or was) on; "" when not
  // yet placed or on a single host.
  std::string node_id = {};
  // Runtimes whose start is asynchronous (Swarm): when the job's process
  // began running, if the list knows it (unset otherwise). Not compared.
  std::optional<absl::Time> started_at = {};
  // Multi-node runtimes: set while the job is held because its node was lost
  // (an earlier attempt may still run there; executor/runtime/swarm/
  // node_loss.h): why, naming the node, when it was lost and what requeues
  // the job. Empty otherwise. Not compared.
  std::string held = {};
  // Which run of the job the container is (ContainerSpec::attempt), from
  // its label; unset for containers started before the label existed. Not
  // compared.
  std::optional<int> attempt = {};
};
bool operator==(const ContainerSummary& a, const ContainerSummary& b);

// The bulk list: job id -> summary, this instance's containers only.
using ContainerList = std::map<std::string, ContainerSummary>;

// Which jobs a reconciler must look at after a new bulk list.
struct ContainerListDiff {
  // New in `after`, or with a different container id or state: inspect these.
  std::vector<std::string> changed;
  // In `before` but not in `after`: the container vanished.
  std::vector<std::string> vanished;
};
// Pure. Both outputs are sorted by job id.
ContainerListDiff DiffContainerLists(const ContainerList& before,
                                     const ContainerList& after);

// The full state of one container (Runtime::Inspect).
struct ContainerObservation {
  std::string job_id;
  std::string container_id;
  ContainerState state = ContainerState::kUnknown;
  // Meaningful only when IsFinished(state).
  int exit_code = 0;
  // The kernel's OOM killer acted inside the container.
  bool oom_killed = false;
  // Unset when the engine reports none (e.g. never started).
  std::optional<absl::Time> started_at;
  std::optional<absl::Time> finished_at;
  // The engine's error text, e.g. why a start failed. Often empty.
  std::string error;
  // Multi-node runtimes: the node the job ran on ("" if never placed).
  std::string node_id;
  // The engine gave up on the job's process without it exiting by itself and
  // without Berth asking: its node went down, or the engine shut the task
  // down. Set only with a finished state; the exit code means nothing then.
  bool lost = false;
  // The engine refused to start the process (e.g. Swarm rejected the task:
  // a bind source missing on the node). Set only with a finished state.
  bool start_failed = false;
  // The engine's id of the image the process ran ("sha256:..."), when the
  // runtime reports it (Docker's inspect does); empty otherwise.
  std::string image_id;
  // Multi-node runtimes: ContainerSummary::held (the job is held because its
  // node was lost; the state is kRunning or kCreated meanwhile).
  std::string held;
  // Set with a finished state when the runtime knows the process's output
  // may be missing from its log, and why (Swarm: its node's engine was
  // unreachable while it ran): a sentence for the job's message.
  std::string log_note;
};

// One node of a multi-node engine (Runtime::ListNodes).
enum class NodeState { kReady, kDown, kUnknown };
enum class NodeAvailability { kActive, kPause, kDrain };
absl::string_view NodeStateName(NodeState s);
absl::string_view NodeAvailabilityName(NodeAvailability a);

struct NodeInfo {
  std::string id;        // the engine's node id (what ContainerSpec::node takes)
  std::string hostname;  // not unique: several nodes may share one
  NodeState state = NodeState::kUnknown;
  NodeAvailability availability = NodeAvailability::kActive;
  bool manager = false;
  int64_t nano_cpus = 0;
  int64_t memory_bytes = 0;
  std::map<std::string, std::string> labels;
  // Swarm: when the manager last wrote the node's record (UpdatedAt: a
  // status change such as Down -> Ready among others). nullopt if unknown.
  std::optional<absl::Time> updated_at;
  // Swarm: the node's Docker Engine version (Description.Engine.
  // EngineVersion, e.g. "20.10.24+dfsg1"); empty if unknown.
  std::string engine_version;
  // Multi-node runtimes: this instance's stray tasks running on the node (a
  // removed service's or an older attempt's: no job's current run), as of
  // the runtime's last List(), and their reservations. Plans keep them back
  // from the node's capacity until they end.
  int stray_tasks = 0;
  int64_t stray_memory_bytes = 0;
  int64_t stray_cpu_millis = 0;
  // Those stray tasks, one line each for the event that reports them.
  struct Stray {
    std::string task_id;
    std::string job_id;        // its berth.job label
    std::string container_id;  // empty until the node reports one
    std::string note;          // what Berth does about it, for the event
  };
  std::vector<Stray> strays;
};
// True when new jobs may be placed on the node: Ready and active.
bool AcceptsJobs(const NodeInfo& n);


// How a job ended.
enum class ExitKind {
  kSucceeded,    // exit code 0
  kNonzeroExit,  // exit code != 0, not OOM, no stop intent
  kOomKilled,
  kTimedOut,
  kCancelled,
  kRequeued,
  kLost,         // the container vanished without Berth asking
  kStartFailed,  // the container could not be created/started (see below)
};
absl::string_view ExitKindName(ExitKind k);

struct ExitOutcome {
  ExitKind kind = ExitKind::kLost;
  // The container's exit code when it has one (0 otherwise).
  int exit_code = 0;
};
bool operator==(const ExitOutcome& a, const ExitOutcome& b);

// Pure. Classifies a job from its latest observation (nullopt: the container
// no longer exists, i.e. Inspect returned NOT_FOUND -- never pass nullopt for
// UNAVAILABLE/DEADLINE_EXCEEDED) and the caller's recorded intent.
// Returns nullopt while the container has not finished (created, running...):
// there is nothing to classify yet.
// Rules, in order: container gone -> the intent's kind, or kLost without one;
// oom_killed -> kOomKilled (a kernel fact, it wins over any intent);
// an intent -> kTimedOut / kCancelled / kRequeued whatever the exit code;
// start_failed -> kStartFailed; lost -> kRequeued (the engine, not the job,
// ended it: the job runs again); exit 0 -> kSucceeded; otherwise
// kNonzeroExit.
std::optional<ExitOutcome> ClassifyExit(
    const std::optional<ContainerObservation>& observation, StopIntent intent);

// Pure. Classifies an error from Runtime::Start. Returns kStartFailed for
// errors that retrying cannot fix (missing image, refused image, invalid
// spec: NOT_FOUND, INVALID_ARGUMENT, PERMISSION_DENIED, FAILED_PRECONDITION,
// ALREADY_EXISTS); nullopt for transient ones (UNAVAILABLE, DEADLINE_EXCEEDED,
// INTERNAL, ...) after which the caller tries again later. REQUIRES: !s.ok().
std::optional<ExitKind> ClassifyStartError(const absl::Status& s);

// What Start did.
struct StartResult {
  std::string container_id;
  // True when the container already existed (a name conflict) and was
  // adopted instead of creating a second one.
  bool adopted = false;
  // False when the engine accepted the job but its process is not known to
  // run yet (Swarm: the service exists, its task is still being scheduled):
  // the job stays ADMITTED until a list shows it running.
  bool running = true;
};

// The engine host's capacity, for default budgets.
struct HostInfo {
  int ncpu = 0;
  int64_t mem_total_bytes = 0;
  std::string server_version;
  bool live_restore = false;
  // The engine's cgroup driver ("cgroupfs", "systemd"; empty if unknown).
  std::string cgroup_driver = "";
  // Multi-node runtimes: how many nodes ncpu and mem_total_bytes sum (each
  // runs its own engine: a per-host reserve applies to each). 1 on a host.
  int nodes = 1;
};

// A container event for this instance (Runtime::SubscribeEvents).
struct RuntimeEvent {
  // Empty for the synthetic "resync" action (see SubscribeEvents).
  std::string job_id;
  // The engine's action, e.g. "create", "start", "die", "oom", "destroy".
  std::string action;
  // The container the event is about (the engine's id; "" when unknown).
  // A requeued job's next container has another id: match on it.
  std::string container_id = {};
  // "die" only: the process's exit code, as the engine reported it with the
  // event (nullopt when the event carried none).
  std::optional<int> exit_code = std::nullopt;
  // When the engine emitted it (InfinitePast when unknown).
  absl::Time time = absl::InfinitePast();
};

// One container's resource use at a sample (Runtime::SampleUsage).
struct UsageSample {
  // Memory charged to the container now (processes, page cache, tmpfs), bytes.
  int64_t memory_bytes = 0;
  // The kernel's high-water mark of memory_bytes since the container
  // started; 0 when the kernel keeps none (cgroup v2 before Linux 5.19).
  int64_t peak_memory_bytes = 0;
  // CPU time used since the container started (user + system).
  absl::Duration cpu = absl::ZeroDuration();
};
// Job id -> its container's sample.
using UsageSamples = std::map<std::string, UsageSample>;

// Per-endpoint counters, counted per HTTP attempt (a retried call counts
// each attempt). errors counts failed attempts of any kind.
struct EndpointCounters {
  int64_t calls = 0;
  int64_t errors = 0;
};
// Endpoint name ("create", "list", "inspect", ...) -> counters.
using CallCounters = std::map<std::string, EndpointCounters>;
// Sum of calls over all endpoints.
int64_t TotalCalls(const CallCounters& c);

// A live events subscription. Destroying it stops delivery: when the
// destructor returns, the callback is not running and will not run again.
// Which of a container's output streams a log chunk came from.
enum class LogStream { kStdout = 1, kStderr = 2 };

// How ReadLogs reads.
struct LogReadOptions {
  // false: what the engine holds now, then return. true: keep reading live
  // output until the container stops (or should_stop says so).
  bool follow = false;
  // Polled about once a second; true ends the read early (OK). May be null.
  std::function<bool()> should_stop;
  // When set: the engine's time of the first message the read hands to the
  // sink (Docker's log timestamps); unchanged if none came or the runtime
  // does not know it. A read whose sink returns false at once thus asks
  // when the oldest message the engine still holds was logged (rotation
  // drops the oldest first).
  absl::Time* first_message_time = nullptr;
};

// Receives ReadLogs' output; returning false ends the read early (OK).
using LogSink = std::function<bool(LogStream, absl::string_view)>;

}  // namespace berth

#endif  // BERTH_EXECUTOR_RUNTIME_RUNTIME_TYPES_H_
