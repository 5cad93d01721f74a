#include "tools/ctl/commands.h"

#include <limits>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "grpcpp/grpcpp.h"
#include "planner/base/proto_json.h"
#include "planner/base/status_macros.h"
#include "tools/ctl/format.h"
#include "tools/ctl/format_usage.h"
#include "tools/ctl/logs.h"
#include "tools/ctl/watch.h"
#include "tools/files/snapshot_files.h"
#include "planner/base/units.h"

namespace berth {
namespace ctl {
namespace {

absl::Status PrintJson(CommandContext& ctx, const google::protobuf::Message& m) {
  ASSIGN_OR_RETURN(std::string json, ToJson(m));
  *ctx.out << json;
  if (!absl::EndsWith(json, "\n")) *ctx.out << "\n";
  return absl::OkStatus();
}

const std::string& Arg(const CommandContext& ctx, size_t i) { return ctx.args.positional[i]; }

// ---- push ----

absl::Status RunPush(CommandContext& ctx) {
  const std::string& path = Arg(ctx, 1);
  absl::StatusOr<v1::Snapshot> snapshot = ReadSnapshotFile(path);
  if (!snapshot.ok()) return AsUsageError(snapshot.status());
  if (ctx.args.Has("generation")) {
    ASSIGN_OR_RETURN(int64_t g, ParseInt("--generation", ctx.args.Get("generation"), 1,
                                         std::numeric_limits<int64_t>::max()));
    snapshot->set_generation(static_cast<uint64_t>(g));
  }
  if (snapshot->generation() == 0) {
    return UsageError(absl::StrCat(path, ": generation: must be >= 1 (set \"generation\" in the "
                                         "file or pass --generation N)"));
  }
  if (ctx.args.Has("allow-mass-cancel")) snapshot->set_allow_mass_cancel(true);
  const char* generation_hint =
      "a new snapshot needs a generation > the last applied one (`berthctl plan --json` shows it "
      "as lastAppliedGeneration); pass --generation N";
  ASSIGN_OR_RETURN(BerthClient* client, ctx.connect());
  if (ctx.args.Has("dry-run")) {
    absl::StatusOr<v1::DryRunResponse> r = client->DryRun(*snapshot);
    if (!r.ok()) {
      return WithHint(r.status(), r.status().code() == absl::StatusCode::kFailedPrecondition
                                      ? generation_hint
                                      : "");
    }
    if (ctx.json) return PrintJson(ctx, *r);
    PrintSync(r->sync(), /*dry_run=*/true, *ctx.out);
    *ctx.out << "\nresulting plan:\n";
    PrintPlan(r->plan(), ctx.now, *ctx.out);
    return absl::OkStatus();
  }
  absl::StatusOr<v1::SyncSnapshotResponse> r = client->Sync(*snapshot);
  if (!r.ok()) {
    if (r.status().code() == absl::StatusCode::kFailedPrecondition) {
      return WithHint(r.status(),
                      absl::StrContains(r.status().message(), "cancel")
                          ? "if cancelling those jobs is intended, pass --allow-mass-cancel"
                          : generation_hint);
    }
    return r.status();
  }
  if (ctx.json) return PrintJson(ctx, *r);
  PrintSync(*r, /*dry_run=*/false, *ctx.out);
  return absl::OkStatus();
}

// ---- reads ----

absl::Status RunPlan(CommandContext& ctx) {
  int64_t limit = 0;
  if (ctx.args.Has("limit")) {
    ASSIGN_OR_RETURN(limit, ParseInt("--limit", ctx.args.Get("limit"), 0, 1 << 30));
  }
  const bool state_out = ctx.args.Has("state-out");
  ASSIGN_OR_RETURN(BerthClient* client, ctx.connect());
  ASSIGN_OR_RETURN(v1::Plan plan, client->GetPlan(static_cast<int32_t>(limit), state_out));
  if (state_out) {
    // The plan's input as a workload `berth-plan now` reads: "what happens
    // from here" is one more command.
    const std::string& path = ctx.args.Get("state-out");
    ASSIGN_OR_RETURN(std::string json, ToJson(plan.state()));
    RETURN_IF_ERROR(WriteFileAtomically(path, json));
    plan.clear_state();
  }
  if (ctx.json) return PrintJson(ctx, plan);
  PrintPlan(plan, ctx.now, *ctx.out);
  return absl::OkStatus();
}

constexpr char kUnknownJobHint[] = "`berthctl list` shows the jobs berthd knows";

absl::Status RunExplain(CommandContext& ctx) {
  ASSIGN_OR_RETURN(BerthClient* client, ctx.connect());
  absl::StatusOr<v1::Explanation> e = client->ExplainJob(Arg(ctx, 1));
  if (!e.ok()) {
    return WithHint(e.status(),
                    e.status().code() == absl::StatusCode::kNotFound ? kUnknownJobHint : "");
  }
  if (ctx.json) return PrintJson(ctx, *e);
  PrintExplanation(*e, ctx.now, *ctx.out);
  return absl::OkStatus();
}

absl::Status RunGet(CommandContext& ctx) {
  ASSIGN_OR_RETURN(BerthClient* client, ctx.connect());
  absl::StatusOr<v1::Job> job = client->GetJob(Arg(ctx, 1));
  if (!job.ok()) {
    return WithHint(job.status(),
                    job.status().code() == absl::StatusCode::kNotFound ? kUnknownJobHint : "");
  }
  if (ctx.json) return PrintJson(ctx, *job);
  PrintJob(*job, ctx.now, *ctx.out);
  return absl::OkStatus();
}

absl::Status RunList(CommandContext& ctx) {
  v1::ListJobsRequest request;
  for (const std::string& value : ctx.args.GetAll("state")) {
    for (absl::string_view s : absl::StrSplit(value, ',', absl::SkipEmpty())) {
      ASSIGN_OR_RETURN(v1::JobState state, ParseState(std::string(s)));
      request.add_states(state);
    }
  }
  if (ctx.args.Has("workspace")) request.set_workspace(ctx.args.Get("workspace"));
  if (ctx.args.Has("pool")) request.set_pool(ctx.args.Get("pool"));
  if (ctx.args.Has("page-size")) {
    ASSIGN_OR_RETURN(int64_t n, ParseInt("--page-size", ctx.args.Get("page-size"), 1, 1000));
    request.set_page_size(static_cast<int32_t>(n));
  }
  if (ctx.args.Has("page-token")) request.set_page_token(ctx.args.Get("page-token"));
  const bool all = ctx.args.Has("all");
  v1::ListJobsResponse combined;
  ASSIGN_OR_RETURN(BerthClient* client, ctx.connect());
  while (true) {
    ASSIGN_OR_RETURN(v1::ListJobsResponse page, client->ListJobs(request));
    for (v1::Job& j : *page.mutable_jobs()) *combined.add_jobs() = std::move(j);
    combined.set_next_page_token(page.next_page_token());
    if (!all || page.next_page_token().empty()) break;
    request.set_page_token(page.next_page_token());
  }
  if (ctx.json) return PrintJson(ctx, combined);
  std::vector<v1::Job> jobs(combined.jobs().begin(), combined.jobs().end());
  PrintJobs(jobs, ctx.now, *ctx.out);
  if (!combined.next_page_token().empty()) {
    *ctx.out << "(more jobs: add --all, or --page-token " << combined.next_page_token() << ")\n";
  }
  return absl::OkStatus();
}

// ---- budgets ----

absl::Status RunBudgets(CommandContext& ctx) {
  const std::string& verb = Arg(ctx, 1);
  const std::vector<std::string> set_flags = {"memory", "cpus", "max-workers", "pool-max",
                                              "workspace-max"};
  if (verb == "get") {
    for (const std::string& f : set_flags) {
      if (ctx.args.Has(f)) return UsageError(absl::StrCat("--", f, " is for `budgets set`"));
    }
    ASSIGN_OR_RETURN(BerthClient* client, ctx.connect());
    ASSIGN_OR_RETURN(v1::Budgets b, client->GetBudgets());
    if (ctx.json) return PrintJson(ctx, b);
    PrintBudgets(b, *ctx.out);
    return absl::OkStatus();
  }
  if (verb != "set") {
    return UsageError(absl::StrCat("berthctl budgets: \"", verb, "\": expected get or set"));
  }
  v1::SetBudgetsRequest request;
  v1::Budgets* b = request.mutable_budgets();
  auto* mask = request.mutable_update_mask();
  if (ctx.args.Has("memory")) {
    absl::StatusOr<int64_t> v = ParseBytes("--memory", ctx.args.Get("memory"));
    if (!v.ok()) return AsUsageError(v.status());
    b->set_memory_bytes(*v);
    mask->add_paths("memory_bytes");
  }
  if (ctx.args.Has("cpus")) {
    absl::StatusOr<int64_t> v = ParseCpuMillis("--cpus", ctx.args.Get("cpus"));
    if (!v.ok()) return AsUsageError(v.status());
    b->set_cpu_millis(*v);
    mask->add_paths("cpu_millis");
  }
  if (ctx.args.Has("max-workers")) {
    ASSIGN_OR_RETURN(int64_t v, ParseInt("--max-workers", ctx.args.Get("max-workers"), 1,
                                         std::numeric_limits<int32_t>::max()));
    b->set_max_workers(static_cast<int32_t>(v));
    mask->add_paths("max_workers");
  }
  if (ctx.args.Has("workspace-max")) {
    ASSIGN_OR_RETURN(int64_t v, ParseInt("--workspace-max", ctx.args.Get("workspace-max"), 0,
                                         std::numeric_limits<int32_t>::max()));
    b->set_workspace_max_workers(static_cast<int32_t>(v));
    mask->add_paths("workspace_max_workers");
  }
  std::map<std::string, int32_t> pool_max;
  for (const std::string& value : ctx.args.GetAll("pool-max")) {
    for (absl::string_view item : absl::StrSplit(value, ',', absl::SkipEmpty())) {
      std::pair<std::string, std::string> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
      if (kv.first.empty() || !absl::StrContains(item, '=')) {
        return UsageError(
            absl::StrCat("--pool-max: \"", item, "\": expected POOL=N, e.g. database=4"));
      }
      ASSIGN_OR_RETURN(int64_t n, ParseInt(absl::StrCat("--pool-max ", kv.first), kv.second, 0,
                                           std::numeric_limits<int32_t>::max()));
      pool_max[kv.first] = static_cast<int32_t>(n);
    }
  }
  if (!pool_max.empty()) mask->add_paths("pools");
  if (mask->paths_size() == 0) {
    return UsageError(
        "berthctl budgets set: nothing to set: pass at least one of --memory, --cpus, "
        "--max-workers, --pool-max, --workspace-max");
  }
  ASSIGN_OR_RETURN(BerthClient* client, ctx.connect());
  if (!pool_max.empty()) {
    // The API replaces the whole pools map: start from the current one so
    // that pools not named here keep their limits.
    ASSIGN_OR_RETURN(v1::Budgets current, client->GetBudgets());
    *b->mutable_pools() = current.pools();
    for (const auto& [pool, n] : pool_max) (*b->mutable_pools())[pool].set_max_workers(n);
  }
  absl::StatusOr<v1::Budgets> r = client->SetBudgets(request);
  if (!r.ok()) return r.status();
  if (ctx.json) return PrintJson(ctx, *r);
  PrintBudgets(*r, *ctx.out);
  return absl::OkStatus();
}

// ---- controls ----

std::string Reason(const CommandContext& ctx) {
  return ctx.args.Has("reason") ? ctx.args.Get("reason") : "";
}

absl::Status RunPause(CommandContext& ctx) {
  ASSIGN_OR_RETURN(BerthClient* client, ctx.connect());
  ASSIGN_OR_RETURN(v1::ControlState s, client->Pause(Reason(ctx)));
  if (ctx.json) return PrintJson(ctx, s);
  PrintControlState(s, *ctx.out);
  return absl::OkStatus();
}

absl::Status RunResume(CommandContext& ctx) {
  ASSIGN_OR_RETURN(BerthClient* client, ctx.connect());
  ASSIGN_OR_RETURN(v1::ControlState s, client->Resume());
  if (ctx.json) return PrintJson(ctx, s);
  PrintControlState(s, *ctx.out);
  return absl::OkStatus();
}

absl::Status RunMaintenance(CommandContext& ctx) {
  v1::SetPoolMaintenanceRequest request;
  request.set_pool(Arg(ctx, 1));
  const std::string& mode = Arg(ctx, 2);
  if (mode != "on" && mode != "off") {
    return UsageError(absl::StrCat("berthctl maintenance: \"", mode, "\": expected on or off"));
  }
  request.set_in_maintenance(mode == "on");
  request.set_reason(Reason(ctx));
  ASSIGN_OR_RETURN(BerthClient* client, ctx.connect());
  absl::StatusOr<v1::SetPoolMaintenanceResponse> r = client->SetPoolMaintenance(request);
  if (!r.ok()) {
    return WithHint(r.status(), r.status().code() == absl::StatusCode::kNotFound
                                    ? "`berthctl budgets get` lists the configured pools"
                                    : "");
  }
  if (ctx.json) return PrintJson(ctx, *r);
  PrintControlState(r->state(), *ctx.out);
  // Turning maintenance off requeues nothing: no "requeued: none".
  if (request.in_maintenance()) PrintRequeued(r->requeued_job_ids(), *ctx.out);
  return absl::OkStatus();
}

absl::Status RunDrain(CommandContext& ctx) {
  ASSIGN_OR_RETURN(BerthClient* client, ctx.connect());
  ASSIGN_OR_RETURN(v1::DrainResponse r, client->Drain(Reason(ctx)));
  if (ctx.json) return PrintJson(ctx, r);
  PrintControlState(r.state(), *ctx.out);
  PrintRequeued(r.requeued_job_ids(), *ctx.out);
  *ctx.out << "admission stays paused: `berthctl resume` starts admitting again\n";
  return absl::OkStatus();
}

absl::Status RunBackup(CommandContext& ctx) {
  ASSIGN_OR_RETURN(BerthClient* client, ctx.connect());
  ASSIGN_OR_RETURN(v1::BackupResponse r, client->Backup(Arg(ctx, 1)));
  if (ctx.json) return PrintJson(ctx, r);
  *ctx.out << "backup " << r.path() << ": revision " << r.revision() << ", generation "
           << r.last_generation() << ", " << r.jobs() << " jobs, "
           << FormatBytes(r.size_bytes()) << ", store format " << r.store_schema_version()
           << "\nrestore: copy it off this host; start berthd with --data_dir on a copy\n";
  return absl::OkStatus();
}

absl::Status RunRightSize(CommandContext& ctx) {
  v1::RightSizeRequest request;
  if (ctx.args.Has("workspace")) request.set_workspace(ctx.args.Get("workspace"));
  if (ctx.args.Has("limit")) {
    ASSIGN_OR_RETURN(int64_t n, ParseInt("--limit", ctx.args.Get("limit"), 1, 1000));
    request.set_limit(static_cast<int32_t>(n));
  }
  ASSIGN_OR_RETURN(BerthClient* client, ctx.connect());
  ASSIGN_OR_RETURN(v1::RightSizeResponse r, client->RightSize(request));
  if (ctx.json) return PrintJson(ctx, r);
  PrintRightSize(r, *ctx.out);
  return absl::OkStatus();
}

}  // namespace

const std::vector<Command>& Commands() {
  static const auto* commands = new std::vector<Command>{
      {"push", "push FILE [--dry-run] [--generation N] [--allow-mass-cancel]",
       {{"dry-run", false}, {"generation"}, {"allow-mass-cancel", false}}, 1, 1, &RunPush},
      {"plan", "plan [--limit N] [--state-out FILE]", {{"limit"}, {"state-out"}}, 0, 0,
       &RunPlan},
      {"explain", "explain JOB", {}, 1, 1, &RunExplain},
      {"list",
       "list [--state S]... [--workspace W] [--pool P] [--page-size N] [--page-token T] [--all]",
       {{"state", true, true}, {"workspace"}, {"pool"}, {"page-size"}, {"page-token"},
        {"all", false}},
       0, 0, &RunList},
      {"get", "get JOB", {}, 1, 1, &RunGet},
      {"logs", "logs JOB [--follow] [--attempt N] [--stdout-only | --stderr-only]",
       {{"follow", false}, {"attempt"}, {"stdout-only", false}, {"stderr-only", false}}, 1, 1,
       &RunLogs},
      {"watch",
       "watch [--from REV [--epoch EPOCH] | --save-revision FILE] [--follow] [--limit N]",
       {{"from"}, {"epoch"}, {"follow", false}, {"limit"}, {"save-revision"}}, 0, 0, &RunWatch},
      {"budgets",
       "budgets get | budgets set [--memory 256Gi] [--cpus 32] [--max-workers 24] "
       "[--pool-max database=4]... [--workspace-max N]",
       {{"memory"}, {"cpus"}, {"max-workers"}, {"pool-max", true, true}, {"workspace-max"}}, 1, 1,
       &RunBudgets},
      {"pause", "pause [--reason TEXT]", {{"reason"}}, 0, 0, &RunPause},
      {"resume", "resume", {}, 0, 0, &RunResume},
      {"maintenance", "maintenance POOL on|off [--reason TEXT]", {{"reason"}}, 2, 2,
       &RunMaintenance},
      {"drain", "drain [--reason TEXT]", {{"reason"}}, 0, 0, &RunDrain},
      {"rightsize", "rightsize [--workspace W] [--limit N]", {{"workspace"}, {"limit"}}, 0, 0,
       &RunRightSize},
      {"backup", "backup NAME   (writes <berthd's --backup_root>/NAME)", {}, 1, 1, &RunBackup},
  };
  return *commands;
}

}  // namespace ctl
}  // namespace berth
