#include "tools/ctl/format.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/util/json_util.h"
#include "tools/ctl/args.h"
#include "tools/ctl/format_attempts.h"
#include "tools/ctl/format_eta_range.h"
#include "tools/ctl/format_rank.h"
#include "tools/ctl/format_nodes.h"
#include "tools/ctl/format_usage.h"
#include "planner/base/units.h"
#include "planner/convert/convert.h"

namespace berth {
namespace ctl {
namespace {

std::string StripPrefix(const std::string& name, absl::string_view prefix) {
  if (absl::StartsWith(name, prefix)) return name.substr(prefix.size());
  return name;
}

absl::Time ToTime(const google::protobuf::Timestamp& t) {
  return absl::FromUnixSeconds(t.seconds()) + absl::Nanoseconds(t.nanos());
}

bool IsSet(const google::protobuf::Timestamp& t) { return t.seconds() != 0 || t.nanos() != 0; }

std::string Clock(absl::Time t) { return absl::FormatTime("%H:%M:%S UTC", t, absl::UTCTimeZone()); }

std::string DimensionWord(v1::Dimension d) {
  switch (d) {
    case v1::DIMENSION_MEMORY: return "memory";
    case v1::DIMENSION_CPU: return "cpu";
    case v1::DIMENSION_WORKER_SLOTS: return "worker slot(s)";
    case v1::DIMENSION_POOL_SLOTS: return "pool slot(s)";
    case v1::DIMENSION_WORKSPACE_SLOTS: return "workspace slot(s)";
    default: return "?";
  }
}

std::string Ago(absl::Time t, absl::Time now) {
  absl::Duration d = now - t;
  if (d < absl::ZeroDuration()) d = absl::ZeroDuration();
  return FormatHumanDuration(absl::Seconds(absl::ToInt64Seconds(d))) + " ago";
}

void Line(std::ostream& out, absl::string_view key, absl::string_view value) {
  out << key << ":";
  for (size_t i = key.size(); i < 16; ++i) out << ' ';
  out << value << "\n";
}

std::string UsageLine(int64_t used, int64_t planned, int64_t total, bool bytes) {
  auto f = [&](int64_t v) { return bytes ? FormatBytes(v) : FormatCpu(v); };
  return absl::StrCat(f(used), " used, ", f(planned), " after admissions, of ", f(total));
}

}  // namespace

std::string StateName(v1::JobState s) { return StripPrefix(v1::JobState_Name(s), "JOB_STATE_"); }
std::string ReasonName(v1::WaitReason r) {
  if (r == v1::REASON_UNSPECIFIED) return "-";
  return StripPrefix(v1::WaitReason_Name(r), "REASON_");
}
std::string VerdictName(v1::Verdict v) { return StripPrefix(v1::Verdict_Name(v), "VERDICT_"); }
std::string EventTypeName(v1::EventType t) {
  return StripPrefix(v1::EventType_Name(t), "EVENT_TYPE_");
}
std::string FailureCauseName(v1::FailureCause c) {
  return StripPrefix(v1::FailureCause_Name(c), "FAILURE_CAUSE_");
}
std::string RejectReasonName(v1::RejectReason r) {
  return StripPrefix(v1::RejectReason_Name(r), "REJECT_REASON_");
}

absl::StatusOr<v1::JobState> ParseState(const std::string& text) {
  std::string upper = absl::AsciiStrToUpper(text);
  v1::JobState s;
  if ((v1::JobState_Parse(upper, &s) || v1::JobState_Parse("JOB_STATE_" + upper, &s)) &&
      s != v1::JOB_STATE_UNSPECIFIED) {
    return s;
  }
  return UsageError(absl::StrCat("--state: \"", text,
                                 "\": expected one of queued, admitted, running, succeeded, "
                                 "failed, cancelled, rejected"));
}

absl::StatusOr<std::string> CompactJson(const google::protobuf::Message& m) {
  std::string out;
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = false;
  auto status = google::protobuf::util::MessageToJsonString(m, &out, options);
  if (!status.ok()) return absl::InternalError(std::string(status.message()));
  return out;
}

std::string FormatShortfall(const v1::Shortfall& s) {
  switch (s.dimension()) {
    case v1::DIMENSION_UNSPECIFIED:
      return "";
    case v1::DIMENSION_MEMORY:
      return absl::StrCat("needs ", FormatBytes(s.needed()), " memory, ",
                          FormatBytes(s.free()), " free of ",
                          FormatBytes(s.capacity()));
    case v1::DIMENSION_CPU:
      return absl::StrCat("needs ", FormatCpu(s.needed()), ", ", FormatCpu(s.free()),
                          " free of ", FormatCpu(s.capacity()));
    default:
      return absl::StrCat("needs ", s.needed(), " ", DimensionWord(s.dimension()), ", ",
                          s.free(), " free of ", s.capacity());
  }
}

std::string FormatEta(const google::protobuf::Timestamp& t, absl::Time now, bool waiting) {
  if (!IsSet(t)) return "-";
  absl::Time at = ToTime(t);
  absl::Duration d = absl::Seconds(absl::ToInt64Seconds(at - now));
  if (d <= absl::ZeroDuration()) {
    // A job that waits does not start now, whatever was promised.
    return waiting ? absl::StrCat("overdue (was ", Clock(at), ")") : "now";
  }
  return absl::StrCat("in ", FormatHumanDuration(d), " (", Clock(at), ")");
}

std::string FormatSlip(const google::protobuf::Timestamp& first_promised, absl::Time now) {
  if (!IsSet(first_promised)) return "";
  const absl::Time at = ToTime(first_promised);
  return absl::StrCat(at <= now ? ", overdue (was " : ", later than first promised (", Clock(at),
                      ")");
}

std::string FormatStart(const google::protobuf::Timestamp& start, v1::EtaKind kind,
                        const google::protobuf::Timestamp& not_before, absl::Time now,
                        bool waiting) {
  if (kind == v1::ETA_KIND_BEYOND_FORECAST && IsSet(not_before)) {
    const absl::Time at = ToTime(not_before);
    const absl::Duration d = absl::Seconds(absl::ToInt64Seconds(at - now));
    return absl::StrCat("beyond the forecast (after ", Clock(at),
                        d > absl::ZeroDuration() ? absl::StrCat(", in ", FormatHumanDuration(d))
                                                 : "",
                        ")");
  }
  if (kind == v1::ETA_KIND_UNKNOWN) return "unknown";
  return FormatEta(start, now, waiting);
}

std::string FormatTimestamp(const google::protobuf::Timestamp& t) {
  if (!IsSet(t)) return "-";
  return absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", ToTime(t), absl::UTCTimeZone());
}

void Table::Print(std::ostream& out) const {
  std::vector<size_t> width;
  for (const auto& row : rows_) {
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  for (const auto& row : rows_) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(width[i] - row[i].size() + 2, ' ');
    }
    out << line << "\n";
  }
}

namespace {

// "database (db upgrade), gpu": each pool with the operator's reason, if any.
std::string PoolsInMaintenance(
    const google::protobuf::RepeatedPtrField<std::string>& pools,
    const google::protobuf::Map<std::string, std::string>& reasons) {
  std::vector<std::string> parts;
  for (const std::string& pool : pools) {
    auto it = reasons.find(pool);
    parts.push_back(it == reasons.end() || it->second.empty()
                        ? pool
                        : absl::StrCat(pool, " (", it->second, ")"));
  }
  return absl::StrJoin(parts, ", ");
}

}  // namespace

void PrintSync(const v1::SyncSnapshotResponse& r, bool dry_run, std::ostream& out) {
  if (dry_run) {
    out << "dry run of generation " << r.generation() << " (nothing changed): ";
  } else if (r.already_applied()) {
    out << "generation " << r.generation() << " was already applied (nothing changed): ";
  } else {
    out << "generation " << r.generation() << " applied: ";
  }
  out << r.added() << " added, " << r.updated() << " updated, " << r.unchanged()
      << " unchanged, " << r.cancelled() << " cancelled, " << r.rejected() << " rejected, "
      << r.terminal_unchanged() << " finished (not re-run); revision " << r.revision() << "\n";
  if (r.rejections_size() > 0) {
    out << "\nrejected jobs:\n";
    Table t({"JOB", "REASON", "FIELD", "MESSAGE"});
    for (const auto& j : r.rejections()) {
      t.AddRow({j.job_id(), RejectReasonName(j.reason()), j.field().empty() ? "-" : j.field(),
                j.message()});
    }
    t.Print(out);
  }
  if (r.ignored_size() > 0) {
    out << "\nchanges ignored (jobs already running):\n";
    Table t({"JOB", "FIELDS"});
    for (const auto& i : r.ignored()) t.AddRow({i.job_id(), absl::StrJoin(i.fields(), ", ")});
    t.Print(out);
  }
}

void PrintPlan(const v1::Plan& p, absl::Time now, std::ostream& out) {
  Line(out, "revision", absl::StrCat(p.revision()));
  Line(out, "computed", FormatTimestamp(p.computed_at()));
  std::string admission =
      p.paused() ? absl::StrCat("PAUSED", p.pause_reason().empty() ? "" : " (",
                                p.pause_reason(), p.pause_reason().empty() ? "" : ")")
                 : "open";
  if (p.pools_in_maintenance_size() > 0) {
    absl::StrAppend(&admission, "; pools in maintenance: ",
                    PoolsInMaintenance(p.pools_in_maintenance(), p.maintenance_reasons()));
  }
  Line(out, "admission", admission);
  Line(out, "memory", UsageLine(p.used().memory_bytes(), p.planned().memory_bytes(),
                                p.budgets().memory_bytes(), true));
  Line(out, "cpu", UsageLine(p.used().cpu_millis(), p.planned().cpu_millis(),
                             p.budgets().cpu_millis(), false));
  Line(out, "workers", absl::StrCat(p.used().workers(), " used, ", p.planned().workers(),
                                    " after admissions, of ", p.budgets().max_workers()));
  Line(out, "queue", absl::StrCat(p.queued_count(), " queued, ", p.admitted_count(),
                                  " admitted by this plan"));
  if (!p.node_use().empty()) {
    out << "\n";
    PrintNodeUse(p.node_use(), out);
  }
  if (p.decisions_size() == 0) {
    out << "\nno queued jobs\n";
    return;
  }
  out << "\n";
  Table t({"POS", "JOB", "VERDICT", "REASON", "START", "RANGE", "SUMMARY"});
  for (const auto& d : p.decisions()) {
    t.AddRow({absl::StrCat(d.queue_position(), d.reserved() ? "*" : ""), d.job_id(),
              VerdictName(d.verdict()), ReasonName(d.reason()),
              FormatStart(d.estimated_start(), d.eta_kind(), d.not_before(), now,
                          d.verdict() != v1::VERDICT_ADMIT),
              FormatEtaRangeShort(d), d.summary()});
  }
  t.Print(out);
  if (p.decisions_size() < p.queued_count()) {
    out << "(" << p.queued_count() - p.decisions_size()
        << " more queued jobs; raise --limit to see them)\n";
  }
}

void PrintExplanation(const v1::Explanation& e, absl::Time now, std::ostream& out) {
  Line(out, "job", e.job_id());
  Line(out, "state", StateName(e.state()));
  if (e.state() == v1::JOB_STATE_QUEUED) {
    Line(out, "verdict", VerdictName(e.verdict()));
    Line(out, "reason", ReasonName(e.reason()));
    Line(out, "queue position", absl::StrCat(e.queue_position()));
    std::string ahead = absl::StrCat(e.jobs_ahead());
    if (e.ahead_job_ids_size() > 0) {
      absl::StrAppend(&ahead, " (", absl::StrJoin(e.ahead_job_ids(), ", "),
                      e.jobs_ahead() > e.ahead_job_ids_size() ? ", ..." : "", ")");
    }
    Line(out, "jobs ahead", ahead);
    if (e.has_shortfall()) Line(out, "shortfall", FormatShortfall(e.shortfall()));
    if (!e.node().empty()) {
      Line(out, e.verdict() == v1::VERDICT_ADMIT ? "node" : "reserved on", e.node());
    }
    if (e.pending_dependencies_size() > 0) {
      Line(out, "waiting for", absl::StrJoin(e.pending_dependencies(), ", "));
    }
    Line(out, "expected start",
         absl::StrCat(FormatStart(e.estimated_start(), e.eta_kind(), e.not_before(), now,
                                  e.verdict() != v1::VERDICT_ADMIT),
                      FormatSlip(e.first_promised_start(), now)));
    if (e.verdict() == v1::VERDICT_WAIT) Line(out, "range", FormatEtaRangeLong(e));
    if (e.has_smallest_change()) Line(out, "would run if", e.smallest_change().text());
    if (e.has_right_sizing()) Line(out, "right-size", e.right_sizing().text());
    PrintRank(e.rank(), out);
  }
  if (!e.held().empty()) Line(out, "held", e.held());
  Line(out, "summary", e.summary());
  Line(out, "revision", absl::StrCat(e.revision()));
}

void PrintJobs(const std::vector<v1::Job>& jobs, absl::Time now, std::ostream& out) {
  if (jobs.empty()) {
    out << "no jobs\n";
    return;
  }
  Table t({"JOB", "STATE", "WORKSPACE", "POOL", "PRIO", "MEMORY", "CPU", "PEAK", "SINCE",
           "DETAIL"});
  for (const v1::Job& j : jobs) {
    const google::protobuf::Timestamp* since = &j.queued_at();
    for (const auto* ts : {&j.admitted_at(), &j.started_at(), &j.finished_at()}) {
      if (IsSet(*ts)) since = ts;
    }
    std::string detail = j.message();
    if (j.state() == v1::JOB_STATE_FAILED) {
      detail = absl::StrCat(FailureCauseName(j.failure_cause()),
                            detail.empty() ? "" : ": ", detail);
    } else if (j.state() == v1::JOB_STATE_REJECTED) {
      detail = absl::StrCat(RejectReasonName(j.reject_reason()),
                            detail.empty() ? "" : ": ", detail);
    }
    t.AddRow({j.spec().id(), StateName(j.state()), j.spec().workspace(),
              j.spec().pool().empty() ? "default" : j.spec().pool(),
              absl::StrCat(j.spec().priority()),
              // What it reserves: a raise after an OOM kill counts (marked "^").
              planner::EffectiveMemoryBytes(j) != j.spec().resources().memory_bytes()
                  ? absl::StrCat(FormatBytes(planner::EffectiveMemoryBytes(j)), "^")
                  : FormatBytes(j.spec().resources().memory_bytes()),
              FormatCores(j.spec().resources().cpu_millis()), FormatPeak(j),
              IsSet(*since) ? Ago(ToTime(*since), now) : "-", detail});
  }
  t.Print(out);
}

void PrintJob(const v1::Job& j, absl::Time now, std::ostream& out) {
  const v1::JobSpec& s = j.spec();
  Line(out, "job", s.id());
  Line(out, "state", StateName(j.state()));
  if (j.state() == v1::JOB_STATE_FAILED) Line(out, "failure", FailureCauseName(j.failure_cause()));
  if (j.state() == v1::JOB_STATE_REJECTED) Line(out, "rejected", RejectReasonName(j.reject_reason()));
  if (j.has_exit_code()) Line(out, "exit code", absl::StrCat(j.exit_code()));
  if (!j.message().empty()) Line(out, "message", j.message());
  Line(out, "workspace", s.workspace());
  if (!s.action().empty()) Line(out, "action", s.action());
  Line(out, "pool", s.pool().empty() ? "default" : s.pool());
  Line(out, "priority", absl::StrCat(s.priority()));
  const int64_t asked = s.resources().memory_bytes(), limit = planner::EffectiveMemoryBytes(j);
  Line(out, "memory", limit == asked ? FormatBytes(asked)
                                     : absl::StrCat(FormatBytes(limit), " (raised after an OOM kill; asks ",
                                                    FormatBytes(asked), ")"));
  Line(out, "cpu", FormatCpu(s.resources().cpu_millis()));
  Line(out, "image", s.image());
  if (s.argv_size() > 0) Line(out, "argv", absl::StrJoin(s.argv(), " "));
  if (s.depends_on_size() > 0) Line(out, "depends on", absl::StrJoin(s.depends_on(), ", "));
  if (s.has_expected_duration()) {
    Line(out, "expected", FormatHumanDuration(absl::Seconds(s.expected_duration().seconds())));
  }
  if (s.has_max_duration()) {
    Line(out, "max duration", FormatHumanDuration(absl::Seconds(s.max_duration().seconds())));
  }
  for (auto [key, ts] : {std::pair<const char*, const google::protobuf::Timestamp*>{"queued", &j.queued_at()},
                         {"admitted", &j.admitted_at()},
                         {"started", &j.started_at()},
                         {"finished", &j.finished_at()}}) {
    if (IsSet(*ts)) {
      Line(out, key, absl::StrCat(FormatTimestamp(*ts), " (", Ago(ToTime(*ts), now), ")"));
    }
  }
  if (!j.container_id().empty()) Line(out, "container", j.container_id().substr(0, 12));
  if (!j.node().empty()) Line(out, "node", j.node());
  if (!j.workspace_path().empty()) Line(out, "workspace dir", j.workspace_path());
  if (j.has_observed()) Line(out, "used", FormatUsage(j.observed(), limit));
  if (j.requeue_count() > 0) Line(out, "requeued", absl::StrCat(j.requeue_count(), " times"));
  if (j.attempt() > 0) Line(out, "attempt", absl::StrCat(j.attempt()));
  for (const v1::Attempt& a : j.attempts()) {
    Line(out, absl::StrCat("attempt ", a.number()), FormatAttempt(a));
  }
  Line(out, "revision", absl::StrCat(j.revision()));
  Line(out, "generation", absl::StrCat(j.last_seen_generation()));
  if (!j.logs_tail().empty()) {
    out << "logs (tail):\n" << j.logs_tail();
    if (!absl::EndsWith(j.logs_tail(), "\n")) out << "\n";
  }
}

void PrintBudgets(const v1::Budgets& b, std::ostream& out) {
  Line(out, "memory", FormatBytes(b.memory_bytes()));
  Line(out, "cpu", FormatCpu(b.cpu_millis()));
  Line(out, "max workers", absl::StrCat(b.max_workers()));
  std::vector<std::string> pools;
  for (const auto& [name, pb] : b.pools()) {
    pools.push_back(absl::StrCat(name, "=", pb.max_workers()));
  }
  std::sort(pools.begin(), pools.end());
  Line(out, "pool max", pools.empty() ? "-" : absl::StrJoin(pools, ", "));
  Line(out, "workspace max",
       b.workspace_max_workers() == 0 ? "no cap" : absl::StrCat(b.workspace_max_workers()));
  for (const std::string& w : b.warnings()) Line(out, "warning", w);
  if (!b.node_use().empty()) {
    out << "\n";
    PrintNodeUse(b.node_use(), out);
  }
}

void PrintControlState(const v1::ControlState& s, std::ostream& out) {
  Line(out, "admission",
       s.paused() ? absl::StrCat("PAUSED", s.pause_reason().empty() ? "" : " (",
                                 s.pause_reason(), s.pause_reason().empty() ? "" : ")")
                  : "open");
  Line(out, "maintenance",
       s.pools_in_maintenance_size() == 0
           ? "-"
           : PoolsInMaintenance(s.pools_in_maintenance(), s.maintenance_reasons()));
}

void PrintRequeued(const google::protobuf::RepeatedPtrField<std::string>& ids,
                   std::ostream& out) {
  Line(out, "requeued", ids.empty() ? "none" : absl::StrCat(ids.size(), " (", absl::StrJoin(ids, ", "), ")"));
}

}  // namespace ctl
}  // namespace berth
