#include "planner/forecast/eta.h"

#include "absl/time/clock.h"
#include "planner/forecast/forward.h"

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

StartEstimateTable::StartEstimateTable() : now_(absl::UnixEpoch()) {}

StartEstimateTable::StartEstimateTable(const State& state, const Budgets& budgets,
                                       const Policy& policy, const PlanResult& result,
                                       const ForecastOptions& options)
    : budgets_(budgets),
      policy_(policy),
      options_(options),
      now_(result.now),
      size_(result.decisions.size()) {
  absl::MutexLock lock(&mu_);
  packed_.resize(size_);
  // The sink runs inside Forward's calls, all made with mu_ held.
  forward_ = std::make_unique<internal::Forward>(
      state, budgets_, policy_, result, options_,
      [this](size_t k, const StartEstimate& e) ABSL_NO_THREAD_SAFETY_ANALYSIS { Put(k, e); });
  if (forward_->done()) CompleteLocked();
}

StartEstimateTable::~StartEstimateTable() = default;

void StartEstimateTable::Put(size_t k, const StartEstimate& e) const {
  Packed& p = packed_[k];
  p.node = e.node;
  p.kind = e.kind;
  p.final = true;
  if (e.time == absl::InfiniteFuture()) {
    p.offset_ns = kInfinite;
    return;
  }
  const int64_t ns = absl::ToInt64Nanoseconds(e.time - now_);
  if (ns != kInfinite && ns != kInexact && now_ + absl::Nanoseconds(ns) == e.time) {
    p.offset_ns = ns;
  } else {
    p.offset_ns = kInexact;
    inexact_.emplace(static_cast<uint32_t>(k), e.time);
  }
}

// Keeps the walk's results and frees the walk.
void StartEstimateTable::CompleteLocked() const {
  if (forward_ == nullptr) return;
  while (forward_->Step()) {
  }
  bounded_ = forward_->bounded();
  covered_ = forward_->covered();
  plans_ = forward_->plans();
  forward_.reset();
}

StartEstimate StartEstimateTable::operator[](size_t k) const {
  // One forecast plan per hold of the lock, as Complete() does, so that a
  // read of a settled row never waits behind a read that forecasts far.
  for (;;) {
    absl::MutexLock lock(&mu_);
    if (packed_[k].final || forward_ == nullptr) return ReadLocked(k);
    if (!forward_->Step()) CompleteLocked();
  }
}

StartEstimate StartEstimateTable::ReadLocked(size_t k) const {
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

bool StartEstimateTable::bounded() const {
  absl::MutexLock lock(&mu_);
  CompleteLocked();
  return bounded_;
}

absl::Time StartEstimateTable::covered() const {
  absl::MutexLock lock(&mu_);
  CompleteLocked();
  return covered_;
}

bool StartEstimateTable::Complete(absl::Time deadline) const {
  for (;;) {
    absl::MutexLock lock(&mu_);
    if (forward_ == nullptr) return true;
    if (!forward_->Step()) {
      CompleteLocked();
      return true;
    }
    if (deadline != absl::InfiniteFuture() && absl::Now() >= deadline) return false;
  }
}

bool StartEstimateTable::complete() const {
  absl::MutexLock lock(&mu_);
  return forward_ == nullptr;
}

int64_t StartEstimateTable::plans() const {
  absl::MutexLock lock(&mu_);
  return forward_ != nullptr ? forward_->plans() : plans_;
}

}  // namespace berth::planner
