// Per-job validation of a received snapshot (DESIGN.md: "per-job problems do
// not sink the snapshot"). A job that fails becomes REJECTED with a reason,
// the offending field and a message naming the problem.
//
// Checks, in order (the first failure wins). The runtime's own limits come
// from executor/runtime_limits.h, the one declaration shared with the Docker
// runtime, so what ingest accepts can run:
//   id           1-128 of [A-Za-z0-9._-], not "." or ".."       INVALID_ID
//   workspace    same                                           INVALID_FIELD
//   action       <= 128 characters, no NUL                      INVALID_FIELD
//   image        a valid image reference (<= 512 bytes), then
//                allowed by the image predicate, then not known
//                missing from the engine                        INVALID_FIELD / IMAGE_NOT_ALLOWED
//                                                               / IMAGE_NOT_FOUND
//   argv, env    argv[0] not empty; no NUL; env keys [A-Za-z_][A-Za-z0-9_]*; each
//                string <= 128 KiB - 1; <= 4096 argv, <= 1024
//                env; all together <= 1 MiB                     INVALID_FIELD
//   resources    cpu_millis 10..1,000,000; memory_bytes >= 6 MiB;
//                both unset: field "resources" names both       INVALID_RESOURCES
//   pool         "" (= "default") or a known pool               UNKNOWN_POOL
//   durations    expected/max_duration in (0, 366 days]         INVALID_FIELD
//   created_at   within 0001-01-01..9999-12-31                  INVALID_FIELD
//   labels       <= 64; keys 1-256, values <= 256 characters    INVALID_FIELD
//   budget       memory/cpu within the whole budget, cpu within
//                the engine's cores                             NEVER_FITS
//   depends_on   <= 1024 valid ids, not itself                  INVALID_FIELD / DEPENDENCY_CYCLE
//   workspace    has a directory (when workspace_exists is set)  WORKSPACE_NOT_FOUND
// Then across jobs: unknown dependency (neither in the snapshot nor known to
// the store) -> UNKNOWN_DEPENDENCY; cycles -> DEPENDENCY_CYCLE for every job
// on a cycle; depending (transitively) on a rejected job -> DEPENDENCY_REJECTED.
// Thread-compatible; no I/O except through the config's predicates.
#ifndef BERTH_SERVER_INGEST_JOB_VALIDATION_H_
#define BERTH_SERVER_INGEST_JOB_VALIDATION_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "berth/v1/budgets.pb.h"
#include "berth/v1/executor.pb.h"
#include "berth/v1/job.pb.h"
#include "server/ingest/node_fit.h"

namespace berth {

inline constexpr size_t kMaxActionBytes = 128;
inline constexpr size_t kMaxLabels = 64;
inline constexpr size_t kMaxLabelBytes = 256;
inline constexpr size_t kMaxDependencies = 1024;
inline constexpr int64_t kMaxJobDurationSeconds = int64_t{366} * 24 * 3600;

struct ValidationConfig {
  // True if the image may run here (the runtime's allow-list). Required.
  std::function<bool(absl::string_view image)> image_allowed;
  // True only if the engine is known not to hold the image (an image list
  // taken at sync time does not name it: executor/runtime/image_catalog.h);
  // false when it holds it or when that is unknown (the engine did not
  // answer: an outage never rejects jobs). Empty: not checked.
  std::function<bool(absl::string_view image)> image_missing;
  // True if the workspace has its directory (under berthd's workspaces
  // root). Empty: not checked (no workspaces root configured).
  std::function<bool(absl::string_view workspace)> workspace_exists;
  // Pools jobs may name, besides "default".
  absl::flat_hash_set<std::string> known_pools;
  // Totals a job must fit in; <= 0 means "no such limit".
  int64_t memory_bytes = 0;
  int64_t cpu_millis = 0;
  // The one engine's cores (docker info NCPU), in millicores. A CPU budget
  // may overcommit them (jobs then share the CPUs), but one container can
  // never be given more CPUs than its host has (Docker refuses the create),
  // so a job asking more is NEVER_FITS. <= 0: not checked (a Swarm, whose
  // nodes are checked instead, or an engine that did not answer).
  int64_t host_cpu_millis = 0;
  // The budgets' node inventory (multi-node runtimes); empty on one host. A
  // job must fit one node that may run its pool (planner/model/model.h kPoolLabel):
  // else NEVER_FITS, naming the largest such node (server/ingest/node_fit.h).
  std::vector<v1::Node> nodes;
  // `nodes` indexed (ValidateJobs sets it once per snapshot: O(1) or
  // O(log nodes) per job); null: ValidateJob indexes `nodes` per call.
  const NodeFit* node_fit = nullptr;
};

// True if `id` is 1-128 characters of [A-Za-z0-9._-], not "." or ".."
// (executor/runtime_limits.h IsValidName).
bool IsValidId(absl::string_view id);

// Clears the fields of `job` that proto3 JSON cannot render (a created_at
// outside 0001-01-01..9999-12-31, a duration beyond +-10,000 years or with
// nanos of the other sign), which the binary wire format carries. Such a job
// is rejected, and its spec is stored and listed: one such field would make
// every JSON reader of ListJobs/GetJob/WatchEvents (grpcurl, berthctl --json)
// fail on the whole answer. Returns the names of the fields cleared; the
// rejection's message still says what was wrong. ValidateJobs does it for
// every rejected job.
std::vector<std::string> ClearUnrenderableFields(v1::JobSpec* job);

// Checks one job on its own (everything but cross-job dependencies). Returns
// the rejection, or nullopt if the job is acceptable.
std::optional<v1::JobRejection> ValidateJob(const v1::JobSpec& job,
                                            const ValidationConfig& config);

// Checks jobs one at a time like ValidateJob, but asks the config's
// predicates (image reference, allow-list, image presence, workspace
// directory) once per
// distinct value and indexes the node inventory once. For checking a
// snapshot's jobs as they arrive (server/ingest/stored_spec_filter.h) and for
// ValidateJobs. `config` must outlive the checker. Not thread-safe.
class JobChecker {
 public:
  explicit JobChecker(const ValidationConfig& config);
  ~JobChecker();
  JobChecker(const JobChecker&) = delete;
  JobChecker& operator=(const JobChecker&) = delete;

  // The rejection of `job` on its own, or nullopt: ValidateJob's answer.
  std::optional<v1::JobRejection> Check(const v1::JobSpec& job);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

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

// A snapshot's job ids -> their positions in its job list. The keys view the
// specs' own id strings: protobuf keeps a string field's std::string where it
// is while the message is moved (only the pointer moves), so the views stay
// valid as long as the specs live, wherever the specs are moved.
// A value with kUnkeptJob set names a job whose spec was not kept (it was
// found stored unchanged and valid as it arrived: ReceivedSnapshot::unchanged
// [value & ~kUnkeptJob]); such a job has no dependencies, so it is accepted,
// and it only answers "is this id in the snapshot".
using JobIdIndex = absl::flat_hash_map<absl::string_view, uint32_t>;
inline constexpr uint32_t kUnkeptJob = uint32_t{1} << 31;

// Validates every job of a snapshot, including dependencies across jobs.
// Rejected specs come back with ClearUnrenderableFields applied.
// `known_job` says whether an id outside the snapshot is known to Berth (a
// dependency on it is allowed). `index` (may be null: built here) is the
// caller's index of `jobs`' ids (SnapshotAssembler builds it as the stream
// arrives): every valid id maps to its position in `jobs`, or to a job not
// kept (kUnkeptJob). REQUIRES: ids in `jobs` are unique.
ValidatedJobs ValidateJobs(std::vector<v1::JobSpec> jobs,
                           const ValidationConfig& config,
                           const std::function<bool(const std::string&)>& known_job,
                           const JobIdIndex* index = nullptr);

}  // namespace berth

#endif  // BERTH_SERVER_INGEST_JOB_VALIDATION_H_
