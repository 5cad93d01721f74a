// planner::RankArithmetic -> berth.v1.RankArithmetic (ExplainJob), at the
// edge so the planner never depends on protobuf.
#ifndef BERTH_PLANNER_CONVERT_RANK_PROTO_H_
#define BERTH_PLANNER_CONVERT_RANK_PROTO_H_

#include "berth/v1/plan.pb.h"
#include "planner/explain/rank_arithmetic.h"

namespace berth::planner {

// Times that are InfinitePast (none) are left unset; reasons are
// AheadReasonText.
v1::RankArithmetic ToProtoRank(const RankArithmetic& r);

}  // namespace berth::planner

#endif  // BERTH_PLANNER_CONVERT_RANK_PROTO_H_
