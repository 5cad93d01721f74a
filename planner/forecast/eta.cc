#include "planner/forecast/eta.h"

namespace berth::planner {

absl::string_view EtaKindName(EtaKind k) {
  switch (k) {
    case EtaKind::kUnknown: return "unknown";
    case EtaKind::kNow: return "now";
    case EtaKind::kReserved: return "reserved";
    case EtaKind::kIfEstimatesHold: return "if_estimates_hold";
    case EtaKind::kBeyondForecast: return "beyond_forecast";
  }
  return "unknown";
}

StartEstimateTable::StartEstimateTable(const State& state, const Budgets& budgets,
                                       const Policy& policy, const PlanResult& result,
                                       const ForecastOptions& options)
    : now_(result.now) {
  Forecast f = ForecastStarts(state, budgets, policy, result, options);
  bounded_ = f.bounded;
  covered_ = f.covered;
  packed_.resize(f.starts.size());
  for (size_t k = 0; k < f.starts.size(); ++k) {
    const StartEstimate& e = f.starts[k];
    Packed& p = packed_[k];
    p.node = e.node;
    p.kind = e.kind;
    if (e.time == absl::InfiniteFuture()) {
      p.offset_ns = kInfinite;
      continue;
    }
    const int64_t ns = absl::ToInt64Nanoseconds(e.time - now_);
    if (ns != kInfinite && ns != kInexact && now_ + absl::Nanoseconds(ns) == e.time) {
      p.offset_ns = ns;
    } else {
      p.offset_ns = kInexact;
      inexact_.emplace(static_cast<uint32_t>(k), e.time);
    }
  }
}

StartEstimate StartEstimateTable::operator[](size_t k) const {
  const Packed& p = packed_[k];
  StartEstimate e;
  e.kind = p.kind;
  e.node = p.node;
  if (p.offset_ns == kInexact) {
    e.time = inexact_.at(static_cast<uint32_t>(k));
  } else if (p.offset_ns != kInfinite) {
    e.time = now_ + absl::Nanoseconds(p.offset_ns);
  }  // else InfiniteFuture(), the default
  return e;
}

}  // namespace berth::planner
