// berthd's container engine: the runtime --runtime selects (the local
// dockerd, or a swarm's manager), and the default budgets, which need the
// engine's host size unless --memory and --cpus are both explicit.
//
// Thread-safety: functions of their arguments; call once at start.
#ifndef BERTH_SERVER_DAEMON_BERTHD_RUNTIME_H_
#define BERTH_SERVER_DAEMON_BERTHD_RUNTIME_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "berth/v1/budgets.pb.h"
#include "executor/runtime/runtime.h"
#include "server/core/budget_checks.h"
#include "server/daemon/config.h"

namespace berth {

struct BerthdRuntime {
  std::unique_ptr<Runtime> runtime;
  // The runtime's image allow-list check (for ingest validation); views
  // `runtime`.
  std::function<bool(absl::string_view)> image_allowed;
  // The engine's URL, for messages.
  std::string engine_url;
};

// Connects the runtime `config` selects. Errors: the runtime's (a bad
// endpoint or allow-list).
[[nodiscard]] absl::StatusOr<BerthdRuntime> ConnectRuntime(const BerthdConfig& config);

// DefaultBudgets(config, ...) with the host size asked from `engine` when
// either budget is auto: retried for up to 30 s while the engine does not
// answer, then UNAVAILABLE naming the engine and what to do. With both
// budgets explicit the engine is asked once, for `engine_size` only.
// `engine_size` (may be null) gets what a local Docker engine reports (left
// zero on a Swarm, whose budgets are its nodes' sum, or when it did not
// answer); budgets above it are logged as a warning ("budget above what the
// engine reports"), one line per dimension.
[[nodiscard]] absl::StatusOr<v1::Budgets> ResolveDefaultBudgets(const BerthdConfig& config,
                                                              const BerthdRuntime& engine,
                                                              EngineSize* engine_size);

// Logs one "swarm node" line per node of `budgets` (hostname, id, memory and
// CPU for jobs, the reserve kept back on it) and returns `budgets` without
// its nodes, for the start-up log's totals. Nothing is logged on one host.
v1::Budgets LogNodesAtStart(v1::Budgets budgets);

}  // namespace berth

#endif  // BERTH_SERVER_DAEMON_BERTHD_RUNTIME_H_
