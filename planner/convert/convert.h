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

// A stored job as a queued / running job, at its effective memory.
QueuedJob ToQueuedJob(const v1::Job& job);
RunningJob ToRunningJob(const v1::Job& job, absl::Time started_at);

Budgets FromProto(const v1::Budgets& budgets);
v1::Budgets ToProto(const Budgets& budgets);

v1::Usage ToProto(const Usage& usage);

// The structural part of one decision (verdict, reason, position, expected
// start and its kind, shortfall, reserved); summary text is left to the
// caller (explain). `position` is 1-based; `eta` is the decision's entry of
// EstimateStarts(state, result) (planner/forecast/eta.h).
v1::PlanDecision ToProtoDecision(const PlanResult& result,
                                 const Decision& decision, const State& state,
                                 int32_t position, const StartEstimate& eta);

// The rejection reason the executor records for a planner REJECT.
v1::RejectReason ToRejectReason(Problem problem);

}  // namespace berth::planner

#endif  // BERTH_PLANNER_CONVERT_CONVERT_H_
