#include "tools/files/snapshot_files.h"

namespace berth {

absl::StatusOr<v1::Snapshot> ReadSnapshotFile(const std::string& path) {
  return ReadJsonFile<v1::Snapshot>(path);
}

absl::StatusOr<v1::Workload> ReadWorkloadFile(const std::string& path) {
  return ReadJsonFile<v1::Workload>(path);
}

}  // namespace berth
