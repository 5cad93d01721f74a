// The engine-side names of a Berth instance's jobs, shared by the Docker and
// the Swarm runtimes so that two instances on one engine never collide.
//
// Every name of instance I starts with InstanceNamePrefix(I) =
// "berth-<8 hex>-", the 8 hex digits being the top 32 bits of FNV-1a(I):
// fixed width, so the prefix ends unambiguously whatever the job id (ids and
// instances may both contain '-'), and any instance name keeps working. Two
// instances share a prefix with probability 2^-32; the berth.instance label
// check still keeps them apart then (a clash is refused, never adopted).
//
// Pure functions; thread-safe.
#ifndef BERTH_EXECUTOR_RUNTIME_CONTAINER_NAMES_H_
#define BERTH_EXECUTOR_RUNTIME_CONTAINER_NAMES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace berth {

// FNV-1a, 64 bits, of `a` (and "\0" + `b` when `b` is not empty): stable
// across processes and builds (absl::Hash is not).
uint64_t NameHash(absl::string_view a, absl::string_view b = {});

// "berth-<8 hex of the instance>-".
std::string InstanceNamePrefix(absl::string_view instance);

// A job's Docker container: InstanceNamePrefix(instance) + job id.
std::string ContainerName(absl::string_view instance, absl::string_view job_id);

// The name containers had before instances were part of it:
// "berth-<job id>". The Docker runtime adopts such containers (found by
// their labels) across an upgrade; it never creates one.
std::string LegacyContainerName(absl::string_view job_id);

// The attempt labels of a run (ContainerSpec::attempt, 0-based inside the
// executor): `berth.attempt` counts from 1 as the API's Job.attempt does,
// and `berth.attempt_base` = "1" says so. Labels written before that counted
// from 0 and had no base label; both read back as the 0-based attempt.
inline constexpr char kAttemptLabel[] = "berth.attempt";
inline constexpr char kAttemptBaseLabel[] = "berth.attempt_base";
std::map<std::string, std::string> AttemptLabels(int attempt);
// The 0-based attempt of a container from its labels' values (`base`: the
// berth.attempt_base value, empty when absent); nullopt when `value` is not
// a number.
std::optional<int> ParseAttemptLabel(absl::string_view value, absl::string_view base);

}  // namespace berth

#endif  // BERTH_EXECUTOR_RUNTIME_CONTAINER_NAMES_H_
