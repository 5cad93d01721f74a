#include "tools/fidelity/compare.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "planner/base/status_macros.h"
#include "planner/convert/convert.h"
#include "tools/fidelity/measures.h"

namespace berth::fidelity {
namespace {

// The id without the run's tag: "<workspace>.<index>".
std::string BaseId(const std::string& id) {
  const std::vector<std::string> parts = absl::StrSplit(id, '.');
  return parts.size() < 2 ? id : absl::StrCat(parts[0], ".", parts[1]);
}

std::vector<double> Values(const std::vector<std::string>& ids,
                           const std::map<std::string, double>& by_id) {
  std::vector<double> values;
  values.reserve(ids.size());
  for (const std::string& id : ids) values.push_back(by_id.at(id));
  return values;
}

}  // namespace

absl::StatusOr<RealMeasures> MeasureReal(const KeptRun& run, int expected_jobs,
                                         int parallelism) {
  RealMeasures real;
  std::vector<std::string> failed;
  for (const auto& [id, job] : run.jobs) {
    real.ids.push_back(id);
    if (job.state() != v1::JOB_STATE_SUCCEEDED) failed.push_back(absl::StrCat("'", id, "'"));
  }
  if (!failed.empty() || static_cast<int>(real.ids.size()) != expected_jobs) {
    const size_t shown = std::min<size_t>(failed.size(), 5);
    return absl::FailedPreconditionError(
        absl::StrCat(failed.size(), " jobs did not succeed: [",
                     absl::StrJoin(failed.begin(), failed.begin() + shown, ", "), "]"));
  }
  std::vector<std::pair<double, double>> spans;
  real.makespan_s = -INFINITY;
  for (const std::string& id : real.ids) {
    const v1::Job& job = run.jobs.at(id);
    const double admitted = Seconds(job.admitted_at());
    const double started = Seconds(job.started_at());
    const double finished = Seconds(job.finished_at());
    real.admitted[id] = admitted - run.t0;
    real.start_latency.push_back(started - admitted);
    spans.emplace_back(admitted, started);
    auto died = run.died.find(id);
    if (died != run.died.end()) real.held.push_back(finished - died->second);
    if (died != run.died.end() && job.spec().has_expected_duration()) {
      real.after_run.push_back(
          died->second - started -
          absl::ToDoubleSeconds(planner::FromProto(job.spec().expected_duration())));
    }
    real.makespan_s = std::max(real.makespan_s, finished - run.t0);
  }
  real.start_levels = StartLevels(spans, parallelism);
  return real;
}

double CalibratedFinishLatency(const RealMeasures& real) {
  return Quantile(real.after_run.empty() ? real.held : real.after_run, 0.5);
}

planner::StartFit CalibratedStartModel(const RealMeasures& real) {
  if (real.start_levels.empty()) return {absl::Seconds(Quantile(real.start_latency, 0.5)), {}};
  return planner::FitStarts(real.start_levels);
}

absl::StatusOr<std::map<std::string, double>> Admissions(const RealMeasures& real,
                                                         const Simulation& simulation) {
  std::map<std::string, double> admitted;
  for (const std::string& id : real.ids) {
    auto it = simulation.jobs.find(id);
    if (it == simulation.jobs.end()) {
      return absl::NotFoundError(absl::StrCat("job '", id, "' is not in the simulation"));
    }
    admitted[id] = it->second.admitted_s;
  }
  return admitted;
}

absl::StatusOr<SimulationScore> Score(const RealMeasures& real, const Simulation& simulation) {
  ASSIGN_OR_RETURN(auto admitted, Admissions(real, simulation));
  SimulationScore score;
  score.start_latency_s = simulation.start_latency_s;
  score.start_contention_s = simulation.start_contention_s;
  score.finish_latency_s = simulation.finish_latency_s;
  double last_finish = -INFINITY;
  for (const auto& [id, job] : simulation.jobs) last_finish = std::max(last_finish, job.finished_s);
  score.makespan_s = last_finish + simulation.finish_latency_s;
  score.makespan_error = (score.makespan_s - real.makespan_s) / real.makespan_s;
  score.tau = TauB(Values(real.ids, real.admitted), Values(real.ids, admitted));
  std::vector<double> error;
  for (const std::string& id : real.ids) {
    error.push_back(std::fabs(real.admitted.at(id) - admitted.at(id)));
  }
  score.start_error_median_s = Quantile(error, 0.5);
  score.start_error_p95_s = Quantile(error, 0.95);
  return score;
}

double StartNoise(const RealMeasures& real) {
  double weighted = 0;
  int64_t count = 0;
  for (const planner::StartLevel& level : real.start_levels) {
    weighted += level.spread_s * static_cast<double>(level.count);
    count += level.count;
  }
  if (count > 0) return weighted / static_cast<double>(count);
  // No level qualified: all starts about their median.
  return real.start_latency.empty() ? 0 : MedianDeviation(real.start_latency);
}

absl::StatusOr<std::vector<double>> RepeatTaus(const RealMeasures& real,
                                               const Simulation& calibrated,
                                               const std::vector<Simulation>& jittered) {
  ASSIGN_OR_RETURN(auto base, Admissions(real, calibrated));
  std::vector<double> taus;
  for (const Simulation& other : jittered) {
    ASSIGN_OR_RETURN(auto moved, Admissions(real, other));
    taus.push_back(TauB(Values(real.ids, base), Values(real.ids, moved)));
  }
  return taus;
}

absl::StatusOr<AgainstReal> CompareAgainst(const RealMeasures& real, const KeptRun& other,
                                           const std::string& other_dir) {
  std::map<std::string, const v1::Job*> theirs;
  for (const auto& [id, job] : other.jobs) theirs[BaseId(id)] = &job;
  std::vector<std::string> ours;
  for (const std::string& id : real.ids) ours.push_back(BaseId(id));
  std::sort(ours.begin(), ours.end());
  std::vector<std::string> their_ids;
  for (const auto& [base, job] : theirs) their_ids.push_back(base);
  if (ours != their_ids) {
    return absl::InvalidArgumentError(
        absl::StrCat("--against ", other_dir, ": not the same workload"));
  }
  std::map<std::string, double> other_admitted;
  for (const std::string& id : real.ids) {
    other_admitted[id] = Seconds(theirs.at(BaseId(id))->admitted_at()) - other.t0;
  }
  AgainstReal against;
  against.dir = other_dir;
  against.makespan_s = -INFINITY;
  for (const auto& [base, job] : theirs) {
    against.makespan_s = std::max(against.makespan_s, Seconds(job->finished_at()) - other.t0);
  }
  against.makespan_difference = (against.makespan_s - real.makespan_s) / real.makespan_s;
  against.tau = TauB(Values(real.ids, real.admitted), Values(real.ids, other_admitted));
  return against;
}

const SimulationScore* FidelityResult::Find(const std::string& name) const {
  for (const auto& [n, score] : simulations) {
    if (n == name) return &score;
  }
  return nullptr;
}

FidelityResult RealResult(const RealMeasures& real, const KeptRun& run) {
  FidelityResult r;
  r.jobs = static_cast<int>(real.ids.size());
  r.scale_s_per_min = run.scale;
  r.seed = run.seed;
  r.load_average = run.load_average;
  r.real_makespan_s = real.makespan_s;
  r.start_latency_median_s = Quantile(real.start_latency, 0.5);
  r.start_latency_p95_s = Quantile(real.start_latency, 0.95);
  r.held_beyond_run_median_s = Quantile(real.held, 0.5);
  r.held_beyond_run_p95_s = Quantile(real.held, 0.95);
  return r;
}

}  // namespace berth::fidelity
