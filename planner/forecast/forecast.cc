// The forward forecast behind every ETA (eta.h, forward.h): the planner
// playing the current state forward with no arrivals and exact estimates.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "planner/forecast/eta.h"
#include "planner/forecast/forward.h"
#include "planner/plan/prepare.h"

namespace berth::planner {
namespace internal {
namespace {

absl::Duration RunOf(absl::Duration estimate, absl::Duration fallback) {
  return estimate > absl::ZeroDuration() ? estimate : fallback;
}

int32_t NodeOf(const PlanResult& plan, size_t k) {
  return k < plan.placements.size() ? plan.placements[k].node : -1;
}

}  // namespace

Forward::Forward(const State& state, const Budgets& budgets, const Policy& policy,
                 const PlanResult& result, const ForecastOptions& options, Sink sink)
    : state_(state),
      budgets_(budgets),
      policy_(policy),
      result_(result),
      options_(options),
      sink_(std::move(sink)),
      last_(options.horizon > absl::ZeroDuration() ? result.now + options.horizon
                                                   : result.now),
      covered_(result.now),  // the given plan's instant
      last_plan_(result.now) {
  Setup();
  if (s_.queued.empty()) Finish();
}

bool Forward::Step() {
  if (done_) return false;
  for (;;) {
    const absl::Time next_end = ends_.empty() ? absl::InfiniteFuture() : ends_.top().at;
    const absl::Time wake = NextWakeup();
    if (const absl::Time s = NextStartEvent();
        s != absl::InfiniteFuture() && s <= std::min(next_end, wake)) {
      AdvanceStarts(s);  // may schedule an end or a plan at a container start
      continue;
    }
    if (next_end == absl::InfiniteFuture() && wake == absl::InfiniteFuture()) {
      Finish();  // nothing changes any more: no start exists
      return false;
    }
    const bool at_start = wake < next_end;
    const absl::Time t = std::max(at_start ? wake : next_end, result_.now);
    if (at_start && !s_.reservation_holder.empty() && t <= last_ && Exhausted()) {
      last_plan_ = t;  // a container started, and nothing could be admitted
      continue;
    }
    const int64_t cost = static_cast<int64_t>(s_.queued.size());
    if (t > last_ || t == absl::InfiniteFuture() ||
        planned_jobs_ + cost > options_.max_planned_jobs) {
      bounded_ = true;
      Finish();
      return false;
    }
    while (!ends_.empty() && ends_.top().at <= t) {
      Complete(ends_.top().slot);
      ends_.pop();
    }
    planner_.Plan(s_, budgets_, policy_, t, plan_);
    ++plans_;
    planned_jobs_ += cost;
    covered_ = t;
    last_plan_ = t;
    CarryReservation(s_, plan_, s_);
    Apply(plan_, t);
    if (s_.queued.empty()) {
      Finish();
      return false;
    }
    return true;
  }
}

// Every decision still open gets its final estimate: reserved or beyond the
// forecast if a bound stopped it, else unknown (no start exists).
void Forward::Finish() {
  done_ = true;
  for (size_t k = 0; k < s_.queued.size(); ++k) {
    const uint32_t index = decision_of_[k];
    StartEstimate e;  // unknown
    if (bounded_) {
      e = result_.decisions[index].reserved
              ? StartEstimate{EtaKind::kReserved, result_.reservation_start}
              : StartEstimate{EtaKind::kBeyondForecast, covered_};
    }
    sink_(index, e);
  }
  // The copies are no longer needed; the counters and bounds stay.
  s_ = State();
  decision_of_ = {};
  running_slot_ = {};
  slot_pos_ = {};
  ends_ = {};
  depended_ = {};
  keep_ = {};
  plan_ = PlanResult();
  start_queue_ = {};
  starting_ = {};
  start_slots_ = {};
  wakeups_ = {};
}

void Forward::Setup() {
  s_.running = state_.running;
  s_.finished = state_.finished;
  s_.paused = state_.paused;
  s_.pause_reason = state_.pause_reason;
  s_.pools_in_maintenance = state_.pools_in_maintenance;
  s_.maintenance_reasons = state_.maintenance_reasons;
  // The reservation and the fair turns as the next plan would get them.
  CarryReservation(state_, result_, s_);
  for (const QueuedJob& q : state_.queued) {
    for (const std::string& d : q.depends_on) depended_.insert(d);
  }
  const absl::Duration fallback = result_.default_duration;
  for (const RunningJob& r : s_.running) {
    // The planner's own expected end (its overrun rule for jobs past their
    // estimate).
    Track(internal::ExpectedEnd(r.started_at, RunOf(r.expected_duration, fallback),
                                result_.now));
  }
  // The plan given is the forecast's first.
  ApplyFirst();
}

// A running entry was appended to s_.running: its end is tracked.
void Forward::Track(absl::Time end) { EndAt(NewSlot(), end); }

size_t Forward::NewSlot() {
  const size_t slot = slot_pos_.size();
  slot_pos_.push_back(running_slot_.size());
  running_slot_.push_back(slot);
  return slot;
}

void Forward::EndAt(size_t slot, absl::Time end) { ends_.push(End{end, seq_++, slot}); }

void Forward::Complete(size_t slot) {
  const size_t pos = slot_pos_[slot];
  RunningJob& r = s_.running[pos];
  if (depended_.contains(r.id)) s_.finished[r.id] = DependencyOutcome::kSucceeded;
  const size_t last = s_.running.size() - 1;
  if (pos != last) {
    s_.running[pos] = std::move(s_.running[last]);
    running_slot_[pos] = running_slot_[last];
    slot_pos_[running_slot_[pos]] = pos;
  }
  s_.running.pop_back();
  running_slot_.pop_back();
}

// Starts `job` at `t` on `node` (-1: none) of `plan`.
void Forward::Start(const QueuedJob& job, absl::Time t, int32_t node, const PlanResult& plan) {
  RunningJob r;
  r.id = job.id;
  r.workspace = job.workspace;
  r.pool = job.pool;
  r.resources = job.resources;
  r.started_at = t;
  r.expected_duration = job.expected_duration;
  if (node >= 0) r.node = plan.nodes[node];
  s_.running.push_back(std::move(r));
  Launch(NewSlot(), t, RunOf(job.expected_duration, result_.default_duration));
}

void Forward::Leave(const QueuedJob& job) {
  if (depended_.contains(job.id)) s_.finished[job.id] = DependencyOutcome::kFailed;
}

void Forward::ApplyFirst() {
  const PlanResult& r = result_;
  s_.queued.reserve(r.decisions.size());
  for (size_t k = 0; k < r.decisions.size(); ++k) {
    const Decision& d = r.decisions[k];
    const QueuedJob& job = state_.queued[d.job];
    if (d.verdict == Verdict::kAdmit) {
      sink_(k, {EtaKind::kNow, r.now, NodeOf(r, k)});
      Start(job, r.now, NodeOf(r, k), r);
    } else if (d.verdict == Verdict::kReject) {
      sink_(k, StartEstimate{});  // unknown
      Leave(job);
    } else {
      s_.queued.push_back(job);
      decision_of_.push_back(static_cast<uint32_t>(k));
    }
  }
}

void Forward::Apply(const PlanResult& plan, absl::Time t) {
  keep_.assign(s_.queued.size(), 1);
  for (size_t k = 0; k < plan.decisions.size(); ++k) {
    const Decision& d = plan.decisions[k];
    if (d.verdict == Verdict::kWait) continue;
    keep_[d.job] = 0;
    const QueuedJob& job = s_.queued[d.job];
    const uint32_t index = decision_of_[d.job];
    if (d.verdict == Verdict::kAdmit) {
      const bool held = result_.decisions[index].reserved;
      sink_(index, {held ? EtaKind::kReserved : EtaKind::kIfEstimatesHold, t, NodeOf(plan, k)});
      Start(job, t, NodeOf(plan, k), plan);
    } else {
      sink_(index, StartEstimate{});  // rejected later (a dependency failed): unknown
      Leave(job);
    }
  }
  size_t w = 0;
  for (size_t k = 0; k < s_.queued.size(); ++k) {
    if (!keep_[k]) continue;
    if (w != k) {
      s_.queued[w] = std::move(s_.queued[k]);
      decision_of_[w] = decision_of_[k];
    }
    ++w;
  }
  s_.queued.resize(w);
  decision_of_.resize(w);
}

}  // namespace internal

Forecast ForecastStarts(const State& state, const Budgets& budgets, const Policy& policy,
                        const PlanResult& result, const ForecastOptions& options) {
  Forecast out;
  out.starts.resize(result.decisions.size());
  internal::Forward forward(state, budgets, policy, result, options,
                            [&out](size_t k, const StartEstimate& e) { out.starts[k] = e; });
  while (forward.Step()) {
  }
  out.plans = forward.plans();
  out.planned_jobs = forward.planned_jobs();
  out.bounded = forward.bounded();
  out.covered = forward.covered();
  return out;
}

std::vector<StartEstimate> EstimateStarts(const State& state, const Budgets& budgets,
                                          const Policy& policy, const PlanResult& result,
                                          const ForecastOptions& options) {
  return ForecastStarts(state, budgets, policy, result, options).starts;
}

}  // namespace berth::planner
