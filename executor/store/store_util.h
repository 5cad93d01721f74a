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

// The changes of `fields` (DiffJobSpecs(a, b)'s field names, which stay the
// SyncSnapshot ignored.fields contract) as people read them, old -> new, for
// the JOB_SPEC_UPDATED event: "priority 2 -> 5, memory 1 GiB -> 2 GiB,
// image 'x:1' -> 'x:2', argv". priority, cpu, memory, image, pool, action
// and the durations give both values (planner/base/units.h formats); the
// other fields (argv, env, labels, depends_on, workspace, created_at) only
// their name. Pure.
std::string DescribeSpecChanges(const berth::v1::JobSpec& a, const berth::v1::JobSpec& b,
                                const std::vector<std::string>& fields);

}  // namespace berth

#endif  // BERTH_EXECUTOR_STORE_STORE_UTIL_H_
