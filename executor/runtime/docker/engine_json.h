// Small helpers for reading the Engine API's JSON answers, shared by the
// Docker (docker_json.h) and Swarm (swarm/swarm_json.h) parsers.
//
// Pure functions, no I/O; accessors never throw: a missing field or one of
// the wrong type reads as absent (nullptr, "", 0, false, {}).
// Thread-safe (stateless).
#ifndef BERTH_EXECUTOR_RUNTIME_DOCKER_ENGINE_JSON_H_
#define BERTH_EXECUTOR_RUNTIME_DOCKER_ENGINE_JSON_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace berth {

// Docker's RFC 3339 times; "0001-01-01T00:00:00Z" (Go's zero time) and
// unparsable text give nullopt.
std::optional<absl::Time> ParseDockerTime(absl::string_view text);

namespace engine_json {

// j[key], or nullptr when j is not an object or has no such key.
const nlohmann::json* Field(const nlohmann::json& j, const char* key);
// j[key] as a string / integer / boolean / object.
std::string Str(const nlohmann::json& j, const char* key);
int64_t Int(const nlohmann::json& j, const char* key);
bool Bool(const nlohmann::json& j, const char* key);
const nlohmann::json& Obj(const nlohmann::json& j, const char* key);

// Parses an answer; INTERNAL "<api>: malformed JSON in <what> answer" when it
// is not JSON (api e.g. "docker API").
absl::StatusOr<nlohmann::json> Parse(absl::string_view body, absl::string_view api,
                                     absl::string_view what);

}  // namespace engine_json
}  // namespace berth

#endif  // BERTH_EXECUTOR_RUNTIME_DOCKER_ENGINE_JSON_H_
