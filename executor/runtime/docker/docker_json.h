// Parsing of the Docker Engine API's JSON answers into Runtime types.
//
// Pure functions, no I/O. Malformed input gives INTERNAL (the engine broke
// its contract); missing optional fields give defaults.
// Thread-safe (stateless).
#ifndef BERTH_EXECUTOR_RUNTIME_DOCKER_DOCKER_JSON_H_
#define BERTH_EXECUTOR_RUNTIME_DOCKER_DOCKER_JSON_H_

#include <optional>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "executor/runtime/docker/engine_json.h"  // ParseDockerTime
#include "executor/runtime/runtime.h"

namespace berth {

// POST /containers/create answer -> the new container's id.
absl::StatusOr<std::string> ParseCreateResponse(absl::string_view body);

// GET /containers/json answer -> job id -> summary. Rows without a berth.job
// label or with a berth.instance other than `instance` are skipped. When
// `legacy_jobs` is not null it gets the jobs whose container is named
// LegacyContainerName(job) ("berth-<job id>", from before names carried the
// instance). If a job has both names, the instance-qualified one is listed.
absl::StatusOr<ContainerList> ParseContainerList(
    absl::string_view body, absl::string_view instance,
    std::set<std::string>* legacy_jobs = nullptr);

// GET /containers/{id}/json answer -> observation; *instance gets the
// berth.instance label ("" if none).
absl::StatusOr<ContainerObservation> ParseInspect(absl::string_view body,
                                                  std::string* instance);

// GET /info answer -> host info.
absl::StatusOr<HostInfo> ParseHostInfo(absl::string_view body);

// One line of GET /events -> the event and its time (timeNano), or nullopt
// for events that are not about a container carrying a berth.job label.
struct ParsedEvent {
  RuntimeEvent event;
  int64_t time_nanos = 0;
};
std::optional<ParsedEvent> ParseEventLine(absl::string_view line);

}  // namespace berth

#endif  // BERTH_EXECUTOR_RUNTIME_DOCKER_DOCKER_JSON_H_
