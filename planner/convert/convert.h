// Conversions between berth.v1 API messages and the planner's domain model.
//
// The planner (//planner) knows nothing of protobuf; berthd, berth-plan and
// berthctl convert here, at the edge, so every tool reads a JobSpec the same
// way. Conversions do not validate (server/ingest/job_validation.h does); they map
// values faithfully, and the planner rejects what is invalid.
// Thread-compatible pure functions.
#ifndef BERTH_PLANNER_CONVERT_CONVERT_H_
#define BERTH_PLANNER_CONVERT_CONVERT_H_

#include <cstdint>

#include "absl/time/time.h"
#include "berth/v1/budgets.pb.h"
#include "berth/v1/job.pb.h"
#include "berth/v1/plan.pb.h"
#include "google/protobuf/duration.pb.h"
#include "google/protobuf/timestamp.pb.h"
#include "planner/forecast/eta.h"
#include "planner/model/model.h"
#include "planner/plan/plan.h"

namespace berth::planner {

// google.protobuf.Timestamp/Duration <-> absl. Unset or out-of-range values
// map to the epoch / zero.
absl::Time FromProto(const google::protobuf::Timestamp& t);
absl::Duration FromProto(const google::protobuf::Duration& d);
google::protobuf::Timestamp ToProtoTimestamp(absl::Time t);
google::protobuf::Duration ToProtoDuration(absl::Duration d);

// A job-server spec as a queued job. Empty pool -> "default"; unset
// expected_duration -> zero (the policy's default applies).
QueuedJob ToQueuedJob(const v1::JobSpec& spec);

// A spec as a running job started at `started_at`.
RunningJob ToRunningJob(const v1::JobSpec& spec, absl::Time started_at);

// The memory a stored job is planned and limited at: its estimate, or the
// reservation Berth raised it to after an OOM kill if larger
// (v1::Job.raised_memory_bytes).
int64_t EffectiveMemoryBytes(const v1::Job& job);
// The same rule on the two amounts: max(estimate, raised).
inline int64_t EffectiveMemoryBytes(int64_t estimate_bytes, int64_t raised_bytes) {
  return estimate_bytes > raised_bytes ? estimate_bytes : raised_bytes;
}

// When a stored job dates from for the planner (FIFO order, aging):
// spec.created_at; without one, when Berth first queued it (queued_at);
// else the Unix epoch.
absl::Time PlanningCreatedAt(const v1::Job& job);

// A stored job as a queued / running job, at its effective memory.
QueuedJob ToQueuedJob(const v1::Job& job);
RunningJob ToRunningJob(const v1::Job& job, absl::Time started_at);

// The one mapping of a job's fields onto the planner's queued and running
// job, whatever holds them. `J` has these accessors, read as the planner
// reads them: id(), workspace(), pool() (empty = the default pool),
// priority(), cpu_millis(), effective_memory_bytes(), created_at() (the
// epoch when absent), queued_at() (the epoch when absent: aging then counts
// from created_at), expected_duration() (zero when absent), depends_on()
// and node() (empty when not placed). SpecFields adapts the messages; the
// store's compact record (executor/store/job_record.h) has them itself.
template <typename J>
QueuedJob QueuedJobFrom(const J& job) {
  QueuedJob q;
  // std::string(...): the accessors return strings or string views.
  q.id = std::string(job.id());
  q.workspace = std::string(job.workspace());
  if (!job.pool().empty()) q.pool = std::string(job.pool());
  q.priority = job.priority();
  q.resources.cpu_millis = job.cpu_millis();
  q.resources.memory_bytes = job.effective_memory_bytes();
  q.created_at = job.created_at();
  q.queued_at = job.queued_at();
  q.expected_duration = job.expected_duration();
  q.depends_on.assign(job.depends_on().begin(), job.depends_on().end());
  return q;
}
template <typename J>
RunningJob RunningJobFrom(const J& job, absl::Time started_at) {
  RunningJob r;
  r.id = std::string(job.id());
  r.workspace = std::string(job.workspace());
  if (!job.pool().empty()) r.pool = std::string(job.pool());
  r.resources.cpu_millis = job.cpu_millis();
  r.resources.memory_bytes = job.effective_memory_bytes();
  r.started_at = started_at;
  r.expected_duration = job.expected_duration();
  r.node = std::string(job.node());
  return r;
}

// A v1::JobSpec, or a stored v1::Job (its raised memory and node too), seen
// through the accessors QueuedJobFrom reads. Views the message, which must
// outlive it.
class SpecFields {
 public:
  explicit SpecFields(const v1::JobSpec& spec) : spec_(spec) {}
  explicit SpecFields(const v1::Job& job) : spec_(job.spec()), job_(&job) {}

  const std::string& id() const { return spec_.id(); }
  const std::string& workspace() const { return spec_.workspace(); }
  const std::string& pool() const { return spec_.pool(); }
  int32_t priority() const { return spec_.priority(); }
  int64_t cpu_millis() const { return spec_.resources().cpu_millis(); }
  int64_t effective_memory_bytes() const {
    return job_ == nullptr ? spec_.resources().memory_bytes() : EffectiveMemoryBytes(*job_);
  }
  absl::Time created_at() const {
    return job_ == nullptr ? FromProto(spec_.created_at()) : PlanningCreatedAt(*job_);
  }
  // Job.queued_at (the epoch for a bare spec or a job never queued).
  absl::Time queued_at() const {
    return job_ != nullptr && job_->has_queued_at() ? FromProto(job_->queued_at())
                                                    : absl::UnixEpoch();
  }
  absl::Duration expected_duration() const { return FromProto(spec_.expected_duration()); }
  const google::protobuf::RepeatedPtrField<std::string>& depends_on() const {
    return spec_.depends_on();
  }
  const std::string& node() const { return job_ == nullptr ? kNoNode : job_->node(); }

 private:
  static inline const std::string kNoNode;
  const v1::JobSpec& spec_;
  const v1::Job* job_ = nullptr;
};

Budgets FromProto(const v1::Budgets& budgets);
v1::Budgets ToProto(const Budgets& budgets);

v1::Usage ToProto(const Usage& usage);

// The structural part of one decision (verdict, reason, position, expected
// start and its kind, shortfall, reserved); summary text is left to the
// caller (explain). `position` is 1-based; `eta` is the decision's entry of
// EstimateStarts(state, budgets, policy, result) (planner/forecast/eta.h).
v1::PlanDecision ToProtoDecision(const PlanResult& result,
                                 const Decision& decision, const State& state,
                                 int32_t position, const StartEstimate& eta);

// The rejection reason the executor records for a planner REJECT.
v1::RejectReason ToRejectReason(Problem problem);

}  // namespace berth::planner

#endif  // BERTH_PLANNER_CONVERT_CONVERT_H_
