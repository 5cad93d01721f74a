// Reading and writing protobuf messages as proto3 JSON files (Berth's file
// formats: snapshots, workloads, budgets, token files). Generic over
// google::protobuf::Message; the typed readers of berth.v1 files are in
// tools/files/snapshot_files.h.
//
// Parsing is strict: unknown fields and values of the wrong type are errors.
// Errors are INVALID_ARGUMENT and name the file, the field path and, for a
// field inside jobs[N], the job's id, e.g.
//   examples/burst.json: job 'ws1-7' (jobs[6].resources.memory_bytes):
//   invalid value "lots" for type TYPE_INT64
// A missing or unreadable file is NOT_FOUND / PERMISSION_DENIED.
// All functions are thread-compatible (no shared state).
#ifndef BERTH_PLANNER_BASE_PROTO_JSON_H_
#define BERTH_PLANNER_BASE_PROTO_JSON_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"

namespace berth {

// Parses `json` into `*message` (cleared first). `source` names the input in
// errors (a file path, "<stdin>", ...).
[[nodiscard]] absl::Status ParseJsonMessage(absl::string_view json,
                                            absl::string_view source,
                                            google::protobuf::Message* message);

// Serialises `message` as pretty-printed proto3 JSON (field names in
// lowerCamelCase, as the JSON mapping prescribes).
[[nodiscard]] absl::StatusOr<std::string> ToJson(
    const google::protobuf::Message& message);

// Reads a whole file. NOT_FOUND if missing; PERMISSION_DENIED if unreadable.
[[nodiscard]] absl::StatusOr<std::string> ReadFileToString(
    const std::string& path);

// Writes `contents` to `path` atomically: a temporary file in the same
// directory, fsync, rename. On error no partial file is left behind.
[[nodiscard]] absl::Status WriteFileAtomically(const std::string& path,
                                               absl::string_view contents);

// Reads and strictly parses a whole file into a message of type T.
template <typename T>
[[nodiscard]] absl::StatusOr<T> ReadJsonFile(const std::string& path) {
  absl::StatusOr<std::string> json = ReadFileToString(path);
  if (!json.ok()) return json.status();
  T message;
  absl::Status parsed = ParseJsonMessage(*json, path, &message);
  if (!parsed.ok()) return parsed;
  return message;
}

}  // namespace berth

#endif  // BERTH_PLANNER_BASE_PROTO_JSON_H_
