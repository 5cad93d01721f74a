// Small helpers shared by the Store implementations (internal to executor/).
#ifndef BERTH_EXECUTOR_STORE_STORE_UTIL_H_
#define BERTH_EXECUTOR_STORE_STORE_UTIL_H_

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "berth/v1/job.pb.h"
#include "google/protobuf/timestamp.pb.h"

namespace berth {

google::protobuf::Timestamp ToProtoTime(absl::Time t);
absl::Time FromProtoTime(const google::protobuf::Timestamp& t);

// What differs between JobSpecs `a` (old) and `b` (new), one entry per
// field, in field order: the field path with old and new values for the
// scalar fields ("priority 5 -> 9", "image x:1 -> x:2", "resources.memory_bytes
// 1 GiB -> 2 GiB", "pool default -> gpu", "expected_duration unset -> 1h"), the
// path alone for the others ("argv", "env", "depends_on", "labels", ...).
// Empty: equal.
std::vector<std::string> DiffJobSpecs(const berth::v1::JobSpec& a,
                                      const berth::v1::JobSpec& b);

}  // namespace berth

#endif  // BERTH_EXECUTOR_STORE_STORE_UTIL_H_
