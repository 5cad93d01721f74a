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

// Field paths of JobSpec that differ between `a` and `b` ("priority",
// "image", "resources.memory_bytes", ...), in field order. Empty: equal.
std::vector<std::string> DiffJobSpecs(const berth::v1::JobSpec& a,
                                      const berth::v1::JobSpec& b);

}  // namespace berth

#endif  // BERTH_EXECUTOR_STORE_STORE_UTIL_H_
