// ExecutorCore's operator RPCs: budgets, pause/resume, pool maintenance and
// drain (requeue). The snapshot and read RPCs are in executor_core.cc.
#include "server/core/executor_core.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_join.h"
#include "server/core/field_mask_paths.h"
#include "server/ingest/job_validation.h"
#include "planner/base/crash_point.h"
#include "planner/base/log.h"
#include "planner/base/proto_json.h"
#include "planner/convert/convert.h"
#include "planner/base/status_macros.h"
#include "server/core/request_limits.h"

namespace berth {
absl::StatusOr<v1::Budgets> ExecutorCore::GetBudgets() {
  bool stored = false;
  ASSIGN_OR_RETURN(v1::Budgets b, CurrentBudgets(&stored));
  AddNodeUse(b, stored);
  return b;
}

void ExecutorCore::AddNodeUse(v1::Budgets& b, bool operator_set) const {
  // What plans use; SetBudgets never stores these nodes.
  plans_.ApplyNodes(b, operator_set);
  if (b.nodes().empty()) return;
  // The jobs' reservations as of the last pass (never planned here: a
  // budgets read must stay cheap); none before the first plan.
  for (v1::NodeUse& u : plans_.NodeUsesNow(b)) {
    *b.add_node_use() = std::move(u);
  }
}

absl::StatusOr<v1::Budgets> ExecutorCore::SetBudgets(const v1::SetBudgetsRequest& request) {
  ASSIGN_OR_RETURN(v1::Budgets next, CurrentBudgets());
  const v1::Budgets& in = request.budgets();
  if (request.update_mask().paths_size() == 0) {
    next = in;
  } else {
    // Proto names or their JSON names (grpcurl and the docs use the latter).
    ASSIGN_OR_RETURN(std::vector<std::string> paths,
                     NormaliseFieldMaskPaths(request.update_mask(), *v1::Budgets::descriptor()));
    for (const std::string& path : paths) {
      if (path == "memory_bytes") next.set_memory_bytes(in.memory_bytes());
      else if (path == "cpu_millis") next.set_cpu_millis(in.cpu_millis());
      else if (path == "max_workers") next.set_max_workers(in.max_workers());
      else if (path == "pools") *next.mutable_pools() = in.pools();
      else if (path == "workspace_max_workers") next.set_workspace_max_workers(in.workspace_max_workers());
    }
  }
  if (next.memory_bytes() <= 0) {
    return absl::InvalidArgumentError("budgets.memory_bytes: must be > 0");
  }
  if (next.cpu_millis() <= 0) {
    return absl::InvalidArgumentError("budgets.cpu_millis: must be > 0");
  }
  RETURN_IF_ERROR(CheckBudgetsCanRunAJob(next.memory_bytes(), next.cpu_millis(),
                                         "budgets.memory_bytes", "budgets.cpu_millis"));
  if (next.max_workers() <= 0) {
    return absl::InvalidArgumentError("budgets.max_workers: must be > 0");
  }
  if (next.workspace_max_workers() < 0) {
    return absl::InvalidArgumentError("budgets.workspace_max_workers: must be >= 0");
  }
  for (const auto& [pool, b] : next.pools()) {
    if (!IsValidId(pool)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "budgets.pools: pool name '", pool, "' must be 1-128 of [A-Za-z0-9._-]"));
    }
    if (b.max_workers() < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "budgets.pools[", pool, "].max_workers: must be >= 0"));
    }
  }
  next.clear_warnings();  // answers' fields, never stored
  next.clear_node_use();
  {
    absl::MutexLock lock(&admission_mu_);
    RETURN_IF_ERROR(store_.SetBudgets(next, clock_.Now()).status());
  }
  Trigger();
  for (std::string& w : BudgetsAboveEngine(next, options_.engine)) {
    Log(LogLevel::kWarning, "budget above what the engine reports", {{"warning", w}});
    next.add_warnings(std::move(w));
  }
  // The answer is what plans use, as GetBudgets': on a multi-node runtime
  // the nodes (each less its own reserve) and, with auto totals, their sums.
  AddNodeUse(next, /*operator_set=*/true);
  return next;
}

absl::StatusOr<v1::ControlState> ExecutorCore::Pause(const std::string& reason) {
  RETURN_IF_ERROR(CheckLength("reason", reason, kMaxReasonBytes));
  ASSIGN_OR_RETURN(v1::ControlState s, store_.SetPaused(true, reason, clock_.Now()));
  Trigger();
  return s;
}

absl::StatusOr<v1::ControlState> ExecutorCore::Resume() {
  ASSIGN_OR_RETURN(v1::ControlState s, store_.SetPaused(false, "", clock_.Now()));
  Trigger();
  return s;
}

absl::StatusOr<std::vector<std::string>> ExecutorCore::Requeue(
    const std::function<bool(const StoredJob&)>& which, v1::RequeueCause cause,
    const std::string& reason) {
  std::vector<DecisionRequest> decisions;
  std::vector<std::string> ids;
  for (v1::JobState state : {v1::JOB_STATE_ADMITTED, v1::JOB_STATE_RUNNING}) {
    for (const JobRecord& job : store_.JobsInState(state)) {
      if (job->stop_intent() != StopIntent::kNone || !which(job->Decode())) continue;
      DecisionRequest d;
      d.job_id = std::string(job->id());
      d.kind = DecisionKind::kRequeue;
      d.expected_state = state;
      d.reason = reason;
      d.requeue_cause = cause;
      d.plan_generation = store_.LastAppliedGeneration();
      ids.push_back(d.job_id);
      decisions.push_back(std::move(d));
    }
  }
  if (!decisions.empty()) {
    RETURN_IF_ERROR(store_.RecordDecisions(decisions, clock_.Now()).status());
  }
  return ids;
}

absl::StatusOr<v1::SetPoolMaintenanceResponse> ExecutorCore::SetPoolMaintenance(
    const v1::SetPoolMaintenanceRequest& request) {
  const std::string& pool = request.pool();
  if (pool.empty()) return absl::InvalidArgumentError("pool: required");
  RETURN_IF_ERROR(CheckLength("pool", pool, kMaxNameBytes));
  RETURN_IF_ERROR(CheckLength("reason", request.reason(), kMaxReasonBytes));
  ASSIGN_OR_RETURN(v1::Budgets budgets, CurrentBudgets());
  if (pool != "default" && !budgets.pools().contains(pool)) {
    return absl::NotFoundError(absl::StrCat("pool '", pool, "' is not configured"));
  }
  v1::SetPoolMaintenanceResponse out;
  ASSIGN_OR_RETURN(*out.mutable_state(),
                   store_.SetPoolMaintenance(pool, request.in_maintenance(),
                                             request.reason(), clock_.Now()));
  if (request.in_maintenance()) {
    ASSIGN_OR_RETURN(
        std::vector<std::string> ids,
        Requeue(
            [&pool](const StoredJob& j) {
              const std::string& p = j.job.spec().pool();
              return (p.empty() ? std::string("default") : p) == pool;
            },
            v1::REQUEUE_CAUSE_POOL_MAINTENANCE,
            request.reason().empty()
                ? absl::StrCat("pool '", pool, "' in maintenance")
                : absl::StrCat("pool '", pool, "' in maintenance: ", request.reason())));
    for (std::string& id : ids) out.add_requeued_job_ids(std::move(id));
  }
  Trigger();
  return out;
}

absl::StatusOr<v1::DrainResponse> ExecutorCore::Drain(const v1::DrainRequest& request) {
  RETURN_IF_ERROR(CheckLength("reason", request.reason(), kMaxReasonBytes));
  std::string reason = request.reason().empty() ? "drain" : request.reason();
  v1::DrainResponse out;
  ASSIGN_OR_RETURN(*out.mutable_state(), store_.SetPaused(true, reason, clock_.Now()));
  ASSIGN_OR_RETURN(std::vector<std::string> ids,
                   Requeue([](const StoredJob&) { return true; },
                           v1::REQUEUE_CAUSE_DRAIN, absl::StrCat("drain: ", reason)));
  for (std::string& id : ids) out.add_requeued_job_ids(std::move(id));
  Trigger();
  return out;
}

absl::StatusOr<v1::BackupResponse> ExecutorCore::Backup(const v1::BackupRequest& request) {
  if (options_.backup_root.empty()) {
    return absl::FailedPreconditionError(
        "backups are off: start berthd with --backup_root=DIR (docs/OPERATIONS.md "
        "\"Backup and restore\")");
  }
  const std::string& name = request.name();
  const bool valid_chars = std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' ||
           c == '-';
  });
  if (name.empty() || name.size() > 128 || name[0] == '.' || !valid_chars) {
    return absl::InvalidArgumentError(absl::StrCat(
        "name: '", absl::CHexEscape(name.substr(0, 128)),
        "' must be 1-128 characters of [A-Za-z0-9._-], not starting with '.'"));
  }
  const std::string path = absl::StrCat(options_.backup_root, "/", name);
  // The file system refusing berthd's own user is not the caller's
  // PERMISSION_DENIED (which clients read as "your token's role").
  auto own_files = [&](const absl::Status& s) {
    if (s.code() != absl::StatusCode::kPermissionDenied) return s;
    return absl::FailedPreconditionError(absl::StrCat(
        "berthd cannot write the backup under --backup_root '", options_.backup_root,
        "' (the directory's owner or mode, or a read-only file system, refuses berthd's "
        "user): ", s.message()));
  };
  const absl::Time started = clock_.Now();
  int64_t files = 0;
  BackupExtraCopy extra;
  if (options_.backup_files) {
    extra = [this, &files](const std::string& dir) -> absl::Status {
      ASSIGN_OR_RETURN(files, options_.backup_files(dir));
      return absl::OkStatus();
    };
  }
  absl::StatusOr<BackupInfo> taken = store_.Backup(path, extra);
  if (!taken.ok()) return own_files(taken.status());
  const BackupInfo& info = *taken;
  v1::BackupResponse out;
  out.set_path(path);
  out.set_revision(info.revision);
  out.set_last_generation(info.last_generation);
  out.set_jobs(info.jobs);
  out.set_store_schema_version(info.schema_version);
  out.set_berth_version(options_.version);
  *out.mutable_taken_at() = planner::ToProtoTimestamp(clock_.Now());
  out.set_size_bytes(info.size_bytes);
  out.set_epoch(store_.Epoch().id);
  out.set_log_files(files);
  *out.mutable_writes_held() = planner::ToProtoDuration(clock_.Now() - started);
  ASSIGN_OR_RETURN(std::string manifest, ToJson(out));
  RETURN_IF_ERROR(
      own_files(WriteFileAtomically(absl::StrCat(path, "/BERTH_BACKUP.json"), manifest)));
  return out;
}

}  // namespace berth
