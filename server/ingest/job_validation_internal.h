// Helpers shared by job_validation.cc and validate_jobs.cc (building a
// rejection, quoting a value in its message). Private to :job_validation.
#ifndef BERTH_SERVER_INGEST_JOB_VALIDATION_INTERNAL_H_
#define BERTH_SERVER_INGEST_JOB_VALIDATION_INTERNAL_H_

#include <string>

#include "absl/strings/string_view.h"
#include "berth/v1/executor.pb.h"
#include "berth/v1/job.pb.h"

namespace berth::validation_internal {

// A rejection of `job` for `reason`, naming `field` and saying `message`.
v1::JobRejection Reject(const v1::JobSpec& job, v1::RejectReason reason,
                        std::string field, std::string message);

// `s` quoted for a rejection message (runtime_limits.h QuoteForMessage).
std::string Quote(absl::string_view s);

}  // namespace berth::validation_internal

#endif  // BERTH_SERVER_INGEST_JOB_VALIDATION_INTERNAL_H_
