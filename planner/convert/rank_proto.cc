#include "planner/convert/rank_proto.h"

#include "planner/convert/convert.h"

namespace berth::planner {

v1::RankArithmetic ToProtoRank(const RankArithmetic& r) {
  v1::RankArithmetic out;
  auto set_time = [](absl::Time t, google::protobuf::Timestamp* ts) {
    if (t != absl::InfinitePast()) *ts = ToProtoTimestamp(t);
  };
  out.set_policy(r.policy);
  out.set_priority(r.priority);
  out.set_effective_priority(r.effective_priority);
  out.set_aged_levels(r.aged_levels);
  if (r.waiting_since != absl::InfinitePast()) {
    set_time(r.waiting_since, out.mutable_waiting_since());
    out.set_aging_interval_seconds(absl::ToInt64Seconds(r.aging_interval));
    out.set_aging_ceiling(r.aging_ceiling);
  }
  set_time(r.reached_level_at, out.mutable_reached_level_at());
  out.set_workspace(r.workspace);
  out.set_memory_share(r.memory_share);
  out.set_cpu_share(r.cpu_share);
  out.set_memory_budget_bytes(r.memory_budget);
  out.set_cpu_budget_millis(r.cpu_budget);
  out.set_dominant_share(r.dominant_share);
  set_time(r.next_queued_at, out.mutable_next_queued_at());
  out.set_turn(r.turn);
  out.set_position(r.position);
  out.set_holds_reservation(r.holds_reservation);
  for (const auto& row : r.ahead_by_reason) {
    v1::RankArithmetic::AheadCount* c = out.add_ahead_by_reason();
    c->set_reason(AheadReasonText(row.reason));
    c->set_count(row.count);
  }
  for (const auto& job : r.first_ahead) {
    v1::RankArithmetic::AheadJob* a = out.add_first_ahead();
    a->set_job_id(job.job_id);
    a->set_reason(AheadReasonText(job.reason));
  }
  return out;
}

}  // namespace berth::planner
