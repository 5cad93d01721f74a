// Per-job validation of a received snapshot (DESIGN.md: "per-job problems do
// not sink the snapshot"). A job that fails becomes REJECTED with a reason,
// the offending field and a message naming the problem.
//
// Checks, in order (the first failure wins):
//   id           1-128 of [A-Za-z0-9._-]                      INVALID_ID
//   workspace    1-128 of [A-Za-z0-9._-]                      INVALID_FIELD
//   action       <= 128 characters                            INVALID_FIELD
//   image        non-empty, allowed by the image predicate    INVALID_FIELD / IMAGE_NOT_ALLOWED
//   argv, env    no NUL bytes; env keys [A-Za-z_][A-Za-z0-9_]* INVALID_FIELD
//   resources    cpu_millis > 0, memory_bytes > 0             INVALID_RESOURCES
//   pool         "" (= "default") or a known pool             UNKNOWN_POOL
//   durations    expected/max_duration > 0 when set           INVALID_FIELD
//   labels       keys/values <= 256 characters                INVALID_FIELD
//   budget       memory/cpu within the whole budget           NEVER_FITS
//   depends_on   valid ids, not itself                        INVALID_FIELD / DEPENDENCY_CYCLE
// Then across jobs: unknown dependency (neither in the snapshot nor known to
// the store) -> UNKNOWN_DEPENDENCY; cycles -> DEPENDENCY_CYCLE for every job
// on a cycle; depending (transitively) on a rejected job -> DEPENDENCY_REJECTED.
// Thread-compatible; pure (no I/O).
#ifndef BERTH_SERVER_JOB_VALIDATION_H_
#define BERTH_SERVER_JOB_VALIDATION_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "berth/v1/budgets.pb.h"
#include "berth/v1/executor.pb.h"
#include "berth/v1/job.pb.h"

namespace berth {

struct ValidationConfig {
  // True if the image may run here (the runtime's allow-list). Required.
  std::function<bool(absl::string_view image)> image_allowed;
  // Pools jobs may name, besides "default".
  absl::flat_hash_set<std::string> known_pools;
  // Totals a job must fit in; <= 0 means "no such limit".
  int64_t memory_bytes = 0;
  int64_t cpu_millis = 0;
};

// True if `id` is 1-128 characters of [A-Za-z0-9._-].
bool IsValidId(absl::string_view id);

// Checks one job on its own (everything but cross-job dependencies). Returns
// the rejection, or nullopt if the job is acceptable.
std::optional<v1::JobRejection> ValidateJob(const v1::JobSpec& job,
                                            const ValidationConfig& config);

// The result of validating a whole snapshot.
struct ValidatedJobs {
  // Jobs that passed, in input order.
  std::vector<v1::JobSpec> accepted;
  // accepted_from[i] is accepted[i]'s index in the input.
  std::vector<size_t> accepted_from;
  // Jobs that did not, with their rejection (same index in both vectors).
  std::vector<v1::JobSpec> rejected;
  std::vector<v1::JobRejection> rejections;
};

// Validates every job of a snapshot, including dependencies across jobs.
// `known_job` says whether an id outside the snapshot is known to Berth (a
// dependency on it is allowed). REQUIRES: ids in `jobs` are unique.
ValidatedJobs ValidateJobs(std::vector<v1::JobSpec> jobs,
                           const ValidationConfig& config,
                           const std::function<bool(const std::string&)>& known_job);

}  // namespace berth

#endif  // BERTH_SERVER_JOB_VALIDATION_H_
