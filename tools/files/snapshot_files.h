// Typed readers of Berth's two input files: the proto3 JSON mapping of
// berth.v1.Snapshot and berth.v1.Workload (examples/*.json). Parsing is the
// foundation's strict proto3 JSON (planner/base/proto_json.h): errors name
// the file, the field path and the job. Thread-compatible.
#ifndef BERTH_TOOLS_FILES_SNAPSHOT_FILES_H_
#define BERTH_TOOLS_FILES_SNAPSHOT_FILES_H_

#include <string>

#include "absl/status/statusor.h"
#include "berth/v1/files.pb.h"
#include "planner/base/proto_json.h"

namespace berth {

[[nodiscard]] absl::StatusOr<v1::Snapshot> ReadSnapshotFile(
    const std::string& path);
[[nodiscard]] absl::StatusOr<v1::Workload> ReadWorkloadFile(
    const std::string& path);

}  // namespace berth

#endif  // BERTH_TOOLS_FILES_SNAPSHOT_FILES_H_
