// The forward forecast behind every ETA (eta.h, forward.h): the planner
// playing the current state forward with no arrivals and exact estimates.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "planner/forecast/eta.h"
#include "planner/forecast/forward.h"
#include "planner/plan/prepare.h"
#include "planner/ranking/created_sort.h"

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
      planner_(std::make_unique<IncrementalPlanner>()),
      last_plan_(result.now),
      starts_({options.executor.start_latency, options.executor.start_contention,
               options.executor.start_parallelism},
              [this](size_t slot, absl::Time admitted, absl::Time at, absl::Duration run) {
                RunContainer(slot, admitted, at, run);
              }) {
  Setup();
  if (planner_->state().queued.empty()) Finish();
}

bool Forward::Step() {
  if (done_) return false;
  for (;;) {
    const absl::Time next_end = ends_.empty() ? absl::InfiniteFuture() : ends_.top().at;
    const absl::Time wake = NextWakeup();
    if (const absl::Time s = starts_.NextEvent();
        s != absl::InfiniteFuture() && s <= std::min(next_end, wake)) {
      starts_.Advance(s);  // may schedule an end or a plan at a container start
      continue;
    }
    if (next_end == absl::InfiniteFuture() && wake == absl::InfiniteFuture()) {
      Finish();  // nothing changes any more: no start exists
      return false;
    }
    const bool at_start = wake < next_end;
    const absl::Time t = std::max(at_start ? wake : next_end, result_.now);
    // What the next plan costs is known only once it is made: a plan that
    // would pass the bound is made but not applied.
    if (t > last_ || t == absl::InfiniteFuture() ||
        planned_jobs_ >= options_.max_planned_jobs) {
      bounded_ = true;
      Finish();
      return false;
    }
    while (!ends_.empty() && ends_.top().at <= t) {
      Complete(ends_.top().slot);
      ends_.pop();
    }
    planner_->Plan(budgets_, policy_, t, IncrementalPlanner::Detail::kAdmissions, plan_);
    const int64_t cost = static_cast<int64_t>(plan_.decisions.size());
    if (planned_jobs_ + cost > options_.max_planned_jobs) {  // not applied
      bounded_ = true;
      Finish();
      return false;
    }
    ++plans_;
    planned_jobs_ += cost;
    covered_ = t;
    last_plan_ = t;
    planner_->Carry(plan_);
    Apply(plan_, t);
    if (planner_->state().queued.empty()) {
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
  for (size_t k = 0; k < decision_of_.size(); ++k) {
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
  planner_.reset();
  decision_of_ = {};
  slot_id_ = {};
  ends_ = {};
  depended_ = {};
  plan_ = PlanResult();
  starts_.Clear();
  wakeups_ = {};
}

void Forward::Setup() {
  // The reservation and the fair turns as the next plan would get them.
  State controls;
  controls.paused = state_.paused;
  controls.pause_reason = state_.pause_reason;
  controls.pools_in_maintenance = state_.pools_in_maintenance;
  controls.maintenance_reasons = state_.maintenance_reasons;
  CarryReservation(state_, result_, controls);
  planner_->SetControls(controls);
  for (const auto& [id, outcome] : state_.finished) planner_->SetFinished(id, outcome);
  for (const QueuedJob& q : state_.queued) {
    for (const std::string& d : q.depends_on) depended_.insert(d);
  }
  const absl::Duration fallback = result_.default_duration;
  for (const RunningJob& r : state_.running) {
    // The planner's own expected end (its overrun rule for jobs past their
    // estimate).
    EndAt(NewSlot(r.id), internal::ExpectedEnd(r.started_at,
                                               RunOf(r.expected_duration, fallback), result_.now));
    planner_->AddRunning(r);
  }
  // The plan given is the forecast's first.
  ApplyFirst();
}

size_t Forward::NewSlot(const std::string& id) {
  slot_id_.push_back(id);
  return slot_id_.size() - 1;
}

void Forward::EndAt(size_t slot, absl::Time end) { ends_.push(End{end, seq_++, slot}); }

void Forward::Complete(size_t slot) {
  const std::string& id = slot_id_[slot];
  planner_->RemoveRunning(id);
  if (depended_.contains(id)) planner_->SetFinished(id, DependencyOutcome::kSucceeded);
}

RunningJob Forward::RunningOf(const QueuedJob& job, absl::Time t, int32_t node,
                              const PlanResult& plan) {
  RunningJob r;
  r.id = job.id;
  r.workspace = job.workspace;
  r.pool = job.pool;
  r.resources = job.resources;
  r.started_at = t;
  r.expected_duration = job.expected_duration;
  if (node >= 0) r.node = plan.nodes[node];
  return r;
}

void Forward::Start(RunningJob r) {
  const size_t slot = NewSlot(r.id);
  const absl::Time t = r.started_at;
  const absl::Duration run = RunOf(r.expected_duration, result_.default_duration);
  planner_->AddRunning(std::move(r));
  Launch(slot, t, run);
}

void Forward::Leave(const QueuedJob& job) {
  if (depended_.contains(job.id)) planner_->SetFinished(job.id, DependencyOutcome::kFailed);
}

void Forward::Dequeue(size_t index) {
  planner_->Dequeue(index);
  decision_of_[index] = decision_of_.back();
  decision_of_.pop_back();
}

void Forward::ApplyFirst() {
  const PlanResult& r = result_;
  std::vector<uint32_t> waiting;  // decisions
  for (size_t k = 0; k < r.decisions.size(); ++k) {
    const Decision& d = r.decisions[k];
    const QueuedJob& job = state_.queued[d.job];
    if (d.verdict == Verdict::kAdmit) {
      sink_(k, {EtaKind::kNow, r.now, NodeOf(r, k)});
      Start(RunningOf(job, r.now, NodeOf(r, k), r));
    } else if (d.verdict == Verdict::kReject) {
      sink_(k, StartEstimate{});  // unknown
      Leave(job);
    } else {
      waiting.push_back(static_cast<uint32_t>(k));
    }
  }
  // The waiting jobs join the forecast's queue at once, in the order the
  // rankings read it (the index's sets then grow at their ends): a whole
  // queue's setup was most of what the first reader of a plan paid. Sorted
  // on keys held beside the decisions' indexes (created_sort.h).
  auto job_of = [&](uint32_t k) -> const QueuedJob& { return state_.queued[r.decisions[k].job]; };
  const std::vector<uint32_t> order = CreationOrder(
      waiting.size(), [&](size_t i) { return absl::ToUnixNanos(job_of(waiting[i]).created_at); },
      [&](size_t i) -> const std::string& { return job_of(waiting[i]).id; });
  std::vector<const QueuedJob*> jobs(order.size());
  std::vector<uint32_t> sorted(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    sorted[i] = waiting[order[i]];
    jobs[i] = &job_of(sorted[i]);
  }
  decision_of_ = std::move(sorted);
  planner_->EnqueueAll(jobs);
}

void Forward::Apply(const PlanResult& plan, absl::Time t) {
  // Decisions beyond an incremental plan's prefix all wait.
  struct Settled {
    uint32_t index;  // into the forecast's queue
    size_t k;        // into plan.decisions
  };
  std::vector<Settled> settled;
  for (size_t k = 0; k < plan.decisions.size(); ++k) {
    const Decision& d = plan.decisions[k];
    if (d.verdict != Verdict::kWait) settled.push_back(Settled{d.job, k});
  }
  for (const Settled& s : settled) {
    const Decision& d = plan.decisions[s.k];
    const QueuedJob& job = planner_->state().queued[s.index];
    const uint32_t index = decision_of_[s.index];
    if (d.verdict == Verdict::kAdmit) {
      const bool held = result_.decisions[index].reserved;
      sink_(index, {held ? EtaKind::kReserved : EtaKind::kIfEstimatesHold, t, NodeOf(plan, s.k)});
    } else {
      sink_(index, StartEstimate{});  // rejected later (a dependency failed): unknown
      Leave(job);
    }
  }
  // The admitted jobs start in the plan's order (the executor model serves
  // starts in admission order), once every settled job has left the queue,
  // from the highest index down (each leaver's index is taken by the last job).
  std::vector<RunningJob> starts;
  for (const Settled& s : settled) {
    if (plan.decisions[s.k].verdict == Verdict::kAdmit)
      starts.push_back(RunningOf(planner_->state().queued[s.index], t, NodeOf(plan, s.k), plan));
  }
  std::sort(settled.begin(), settled.end(),
            [](const Settled& a, const Settled& b) { return a.index > b.index; });
  for (const Settled& s : settled) Dequeue(s.index);
  for (RunningJob& r : starts) Start(std::move(r));
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
