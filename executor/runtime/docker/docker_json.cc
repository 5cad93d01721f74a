#include "executor/runtime/docker/docker_json.h"

#include "executor/runtime/container_names.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace berth {

using nlohmann::json;

namespace {

using engine_json::Bool;
using engine_json::Field;
using engine_json::Int;
using engine_json::Str;

std::string Label(const json& labels, const char* key) {
  return Str(labels, key);
}

absl::StatusOr<json> Parse(absl::string_view body, absl::string_view what) {
  return engine_json::Parse(body, "docker API", what);
}

}  // namespace

absl::StatusOr<std::string> ParseCreateResponse(absl::string_view body) {
  absl::StatusOr<json> j = Parse(body, "create");
  if (!j.ok()) return j.status();
  std::string id = Str(*j, "Id");
  if (id.empty()) return absl::InternalError("docker API: create answer has no Id");
  return id;
}

absl::StatusOr<ContainerList> ParseContainerList(absl::string_view body,
                                                 absl::string_view instance,
                                                 std::set<std::string>* legacy_jobs) {
  absl::StatusOr<json> j = Parse(body, "list");
  if (!j.ok()) return j.status();
  if (!j->is_array()) {
    return absl::InternalError("docker API: list answer is not an array");
  }
  ContainerList out;
  for (const json& row : *j) {
    const json* labels = Field(row, "Labels");
    if (labels == nullptr) continue;
    const std::string job = Label(*labels, "berth.job");
    if (job.empty() || Label(*labels, "berth.instance") != instance) continue;
    // Docker lists names with a leading '/'.
    bool legacy = false;
    if (const json* names = Field(row, "Names"); names != nullptr && names->is_array()) {
      const std::string old_name = "/" + LegacyContainerName(job);
      for (const json& n : *names) {
        if (n.is_string() && n.get<std::string>() == old_name) legacy = true;
      }
    }
    if (legacy && out.count(job) > 0 &&
        (legacy_jobs == nullptr || legacy_jobs->count(job) == 0)) {
      continue;  // the instance-qualified container of the job wins
    }
    ContainerSummary s;
    s.job_id = job;
    s.container_id = Str(row, "Id");
    s.state = ParseContainerState(Str(row, "State"));
    s.attempt = ParseAttemptLabel(Label(*labels, kAttemptLabel), Label(*labels, kAttemptBaseLabel));
    out[job] = std::move(s);
    if (legacy_jobs != nullptr) {
      if (legacy) {
        legacy_jobs->insert(job);
      } else {
        legacy_jobs->erase(job);
      }
    }
  }
  return out;
}

absl::StatusOr<ContainerObservation> ParseInspect(absl::string_view body,
                                                  std::string* instance) {
  absl::StatusOr<json> j = Parse(body, "inspect");
  if (!j.ok()) return j.status();
  ContainerObservation obs;
  obs.container_id = Str(*j, "Id");
  obs.image_id = Str(*j, "Image");  // "sha256:...", whatever tag it was started by
  if (obs.container_id.empty()) {
    return absl::InternalError("docker API: inspect answer has no Id");
  }
  instance->clear();
  if (const json* config = Field(*j, "Config")) {
    if (const json* labels = Field(*config, "Labels")) {
      obs.job_id = Label(*labels, "berth.job");
      *instance = Label(*labels, "berth.instance");
    }
  }
  if (const json* state = Field(*j, "State")) {
    obs.state = ParseContainerState(Str(*state, "Status"));
    obs.exit_code = static_cast<int>(Int(*state, "ExitCode"));
    obs.oom_killed = Bool(*state, "OOMKilled");
    obs.started_at = ParseDockerTime(Str(*state, "StartedAt"));
    obs.finished_at = ParseDockerTime(Str(*state, "FinishedAt"));
    obs.error = Str(*state, "Error");
  }
  return obs;
}

absl::StatusOr<HostInfo> ParseHostInfo(absl::string_view body) {
  absl::StatusOr<json> j = Parse(body, "info");
  if (!j.ok()) return j.status();
  HostInfo info;
  info.ncpu = static_cast<int>(Int(*j, "NCPU"));
  info.mem_total_bytes = Int(*j, "MemTotal");
  info.server_version = Str(*j, "ServerVersion");
  info.live_restore = Bool(*j, "LiveRestoreEnabled");
  info.cgroup_driver = Str(*j, "CgroupDriver");
  if (info.ncpu <= 0 || info.mem_total_bytes <= 0) {
    return absl::InternalError("docker API: info answer lacks NCPU/MemTotal");
  }
  return info;
}

std::optional<ParsedEvent> ParseEventLine(absl::string_view line) {
  json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || Str(j, "Type") != "container") return std::nullopt;
  const json* actor = Field(j, "Actor");
  if (actor == nullptr) return std::nullopt;
  const json* attrs = Field(*actor, "Attributes");
  if (attrs == nullptr) return std::nullopt;
  ParsedEvent e;
  e.event.job_id = Str(*attrs, "berth.job");
  e.event.action = Str(j, "Action");
  e.time_nanos = Int(j, "timeNano");
  if (e.event.job_id.empty() || e.event.action.empty()) return std::nullopt;
  e.event.container_id = Str(*actor, "ID");
  if (e.time_nanos > 0) e.event.time = absl::FromUnixNanos(e.time_nanos);
  if (e.event.action == "die") {
    // Docker sends the exit code as a string attribute ("exitCode": "137").
    int code = 0;
    if (absl::SimpleAtoi(Str(*attrs, "exitCode"), &code)) e.event.exit_code = code;
  }
  return e;
}

}  // namespace berth
