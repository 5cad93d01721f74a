// The forward forecast behind every ETA (eta.h): the planner playing the
// current state forward with no arrivals and exact estimates.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "planner/forecast/eta.h"
#include "planner/plan/prepare.h"

namespace berth::planner {
namespace {

absl::Duration RunOf(absl::Duration estimate, absl::Duration fallback) {
  return estimate > absl::ZeroDuration() ? estimate : fallback;
}

// A job holding resources ends (by its estimate).
struct End {
  absl::Time at;
  uint64_t seq;
  size_t slot;  // index into Forward::slot_pos_
  bool operator>(const End& o) const {
    return at != o.at ? at > o.at : seq > o.seq;
  }
};

// One forecast: the simulation state and the estimates found so far.
class Forward {
 public:
  Forward(const State& state, const Budgets& budgets, const Policy& policy,
          const PlanResult& result, const ForecastOptions& options)
      : state_(state), budgets_(budgets), policy_(policy), result_(result), options_(options) {
    out_.starts.resize(result.decisions.size());
  }

  Forecast Run() {
    Setup();
    const absl::Time last = options_.horizon > absl::ZeroDuration()
                                ? result_.now + options_.horizon
                                : result_.now;
    PlanResult plan;
    out_.covered = result_.now;  // the given plan's instant
    while (!s_.queued.empty()) {
      if (ends_.empty()) break;  // nothing changes any more: no start exists
      const absl::Time t = std::max(ends_.top().at, result_.now);
      const int64_t cost = static_cast<int64_t>(s_.queued.size());
      if (t > last || t == absl::InfiniteFuture() ||
          out_.planned_jobs + cost > options_.max_planned_jobs) {
        out_.bounded = true;
        break;
      }
      while (!ends_.empty() && ends_.top().at <= t) {
        Complete(ends_.top().slot);
        ends_.pop();
      }
      planner_.Plan(s_, budgets_, policy_, t, plan);
      ++out_.plans;
      out_.planned_jobs += cost;
      out_.covered = t;
      CarryReservation(s_, plan, s_);
      Apply(plan, t);
    }
    if (out_.bounded) {
      for (size_t k = 0; k < s_.queued.size(); ++k) {
        StartEstimate& e = out_.starts[decision_of_[k]];
        const Decision& d = result_.decisions[decision_of_[k]];
        e = d.reserved ? StartEstimate{EtaKind::kReserved, result_.reservation_start}
                       : StartEstimate{EtaKind::kBeyondForecast, out_.covered};
      }
    } else {
      out_.covered = absl::InfinitePast();
    }
    return std::move(out_);
  }

 private:
  void Setup() {
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
      // The planner's own expected end (its overrun rule for jobs past
      // their estimate).
      Track(internal::ExpectedEnd(r.started_at, RunOf(r.expected_duration, fallback),
                                  result_.now));
    }
    // The plan given is the forecast's first.
    ApplyFirst();
  }

  // A running entry was appended to s_.running: its end is tracked.
  void Track(absl::Time end) {
    const size_t slot = slot_pos_.size();
    slot_pos_.push_back(running_slot_.size());
    running_slot_.push_back(slot);
    ends_.push(End{end, seq_++, slot});
  }

  void Complete(size_t slot) {
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
  void Start(const QueuedJob& job, absl::Time t, int32_t node, const PlanResult& plan) {
    RunningJob r;
    r.id = job.id;
    r.workspace = job.workspace;
    r.pool = job.pool;
    r.resources = job.resources;
    r.started_at = t;
    r.expected_duration = job.expected_duration;
    if (node >= 0) r.node = plan.nodes[node];
    s_.running.push_back(std::move(r));
    Track(t + RunOf(job.expected_duration, result_.default_duration));
  }

  void Leave(const QueuedJob& job) {
    if (depended_.contains(job.id)) s_.finished[job.id] = DependencyOutcome::kFailed;
  }

  static int32_t NodeOf(const PlanResult& plan, size_t k) {
    return k < plan.placements.size() ? plan.placements[k].node : -1;
  }

  void ApplyFirst() {
    const PlanResult& r = result_;
    s_.queued.reserve(r.decisions.size());
    for (size_t k = 0; k < r.decisions.size(); ++k) {
      const Decision& d = r.decisions[k];
      const QueuedJob& job = state_.queued[d.job];
      if (d.verdict == Verdict::kAdmit) {
        out_.starts[k] = {EtaKind::kNow, r.now, NodeOf(r, k)};
        Start(job, r.now, NodeOf(r, k), r);
      } else if (d.verdict == Verdict::kReject) {
        Leave(job);  // unknown
      } else {
        s_.queued.push_back(job);
        decision_of_.push_back(static_cast<uint32_t>(k));
      }
    }
  }

  void Apply(const PlanResult& plan, absl::Time t) {
    keep_.assign(s_.queued.size(), 1);
    for (size_t k = 0; k < plan.decisions.size(); ++k) {
      const Decision& d = plan.decisions[k];
      if (d.verdict == Verdict::kWait) continue;
      keep_[d.job] = 0;
      const QueuedJob& job = s_.queued[d.job];
      const uint32_t index = decision_of_[d.job];
      if (d.verdict == Verdict::kAdmit) {
        const bool held = result_.decisions[index].reserved;
        out_.starts[index] = {held ? EtaKind::kReserved : EtaKind::kIfEstimatesHold, t,
                              NodeOf(plan, k)};
        Start(job, t, NodeOf(plan, k), plan);
      } else {
        Leave(job);  // rejected later (a dependency failed): unknown
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

  const State& state_;
  const Budgets& budgets_;
  const Policy& policy_;
  const PlanResult& result_;
  const ForecastOptions& options_;

  Forecast out_;
  State s_;
  Planner planner_;
  std::vector<uint32_t> decision_of_;  // parallel to s_.queued
  std::vector<size_t> running_slot_;   // parallel to s_.running
  std::vector<size_t> slot_pos_;       // slot -> index into s_.running
  std::priority_queue<End, std::vector<End>, std::greater<>> ends_;
  absl::flat_hash_set<std::string> depended_;
  std::vector<uint8_t> keep_;
  uint64_t seq_ = 0;
};

}  // namespace

Forecast ForecastStarts(const State& state, const Budgets& budgets, const Policy& policy,
                        const PlanResult& result, const ForecastOptions& options) {
  return Forward(state, budgets, policy, result, options).Run();
}

std::vector<StartEstimate> EstimateStarts(const State& state, const Budgets& budgets,
                                          const Policy& policy, const PlanResult& result,
                                          const ForecastOptions& options) {
  return ForecastStarts(state, budgets, policy, result, options).starts;
}

}  // namespace berth::planner
