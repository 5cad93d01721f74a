#include "tools/fidelity/report.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "tools/fidelity/measures.h"
#include "tools/fidelity/workload.h"

namespace berth::fidelity {
namespace {

nlohmann::ordered_json Number(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

double Ms(double seconds) { return seconds * 1000; }

// The benchmark's bar for tau: the repeatability line counts the
// jittered simulations that meet it.
constexpr double kBenchmarkTau = 0.99;

// Python's list repr of strings: ['a', 'b'].
std::string IdList(const std::set<std::string>& ids) {
  std::vector<std::string> quoted;
  for (const std::string& id : ids) quoted.push_back(absl::StrCat("'", id, "'"));
  return absl::StrCat("[", absl::StrJoin(quoted, ", "), "]");
}

std::set<std::string> Minus(const std::set<std::string>& a, const std::set<std::string>& b) {
  std::set<std::string> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::inserter(out, out.end()));
  return out;
}

}  // namespace

std::string RenderText(const FidelityResult& r) {
  std::string out = absl::StrFormat(
      "%d jobs, %s s per simulated minute, seed %d, load average %.2f\n", r.jobs,
      PythonFloatRepr(r.scale_s_per_min), r.seed, r.load_average);
  absl::StrAppendFormat(&out,
                        "real: makespan %.2f s; start latency median %.0f ms, p95 %.0f ms; "
                        "capacity held beyond the run median %.0f ms, p95 %.0f ms\n",
                        r.real_makespan_s, Ms(r.start_latency_median_s),
                        Ms(r.start_latency_p95_s), Ms(r.held_beyond_run_median_s),
                        Ms(r.held_beyond_run_p95_s));
  for (const auto& [name, s] : r.simulations) {
    absl::StrAppendFormat(&out,
                          "%s (start %.0f ms + %.0f ms per start with it, finish %.0f ms): "
                          "makespan %.2f s (%+.1f%%), "
                          "tau %.3f, start error median %.0f ms, p95 %.0f ms\n",
                          name, Ms(s.start_latency_s), Ms(s.start_contention_s),
                          Ms(s.finish_latency_s), s.makespan_s,
                          s.makespan_error * 100, s.tau, Ms(s.start_error_median_s),
                          Ms(s.start_error_p95_s));
  }
  if (r.repeat_taus.empty()) {
    out += "repeatability: no start noise measured\n";
  } else {
    const int at_bar = static_cast<int>(std::count_if(
        r.repeat_taus.begin(), r.repeat_taus.end(), [](double t) { return t >= kBenchmarkTau; }));
    absl::StrAppendFormat(
        &out,
        "repeatability: the calibrated simulation with each start moved at random by up to "
        "+-%.0f ms (the run's start noise), %d draws: tau median %.3f, lowest %.3f; %d of %d "
        "at >= %g\n",
        Ms(r.start_jitter_s), static_cast<int>(r.repeat_taus.size()), r.stability_tau,
        *std::min_element(r.repeat_taus.begin(), r.repeat_taus.end()), at_bar,
        static_cast<int>(r.repeat_taus.size()), kBenchmarkTau);
  }
  if (r.against_real.has_value()) {
    const AgainstReal& o = *r.against_real;
    absl::StrAppendFormat(&out, "another real run (%s): makespan %.2f s (%+.1f%%), tau %.3f\n",
                          o.dir, o.makespan_s, o.makespan_difference * 100, o.tau);
  }
  return out;
}

std::string RenderJson(const FidelityResult& r) {
  nlohmann::ordered_json j;
  j["jobs"] = r.jobs;
  j["scale_s_per_min"] = Number(r.scale_s_per_min);
  j["seed"] = r.seed;
  j["load_average"] = Number(r.load_average);
  j["real_makespan_s"] = Number(r.real_makespan_s);
  j["start_latency_median_s"] = Number(r.start_latency_median_s);
  j["start_latency_p95_s"] = Number(r.start_latency_p95_s);
  j["held_beyond_run_median_s"] = Number(r.held_beyond_run_median_s);
  j["held_beyond_run_p95_s"] = Number(r.held_beyond_run_p95_s);
  nlohmann::ordered_json sims = nlohmann::ordered_json::object();
  for (const auto& [name, s] : r.simulations) {
    nlohmann::ordered_json& o = sims[name];
    o["start_latency_s"] = Number(s.start_latency_s);
    o["start_contention_s"] = Number(s.start_contention_s);
    o["finish_latency_s"] = Number(s.finish_latency_s);
    o["makespan_s"] = Number(s.makespan_s);
    o["makespan_error"] = Number(s.makespan_error);
    o["tau"] = Number(s.tau);
    o["start_error_median_s"] = Number(s.start_error_median_s);
    o["start_error_p95_s"] = Number(s.start_error_p95_s);
  }
  j["simulations"] = std::move(sims);
  j["stability_tau"] = Number(r.stability_tau);
  nlohmann::ordered_json taus = nlohmann::ordered_json::array();
  for (double t : r.repeat_taus) taus.push_back(Number(t));
  j["repeatability"] = {{"start_jitter_s", Number(r.start_jitter_s)}, {"taus", std::move(taus)}};
  if (r.against_real.has_value()) {
    const AgainstReal& o = *r.against_real;
    j["against_real"] = {{"dir", o.dir},
                         {"makespan_s", Number(o.makespan_s)},
                         {"makespan_difference", Number(o.makespan_difference)},
                         {"tau", Number(o.tau)}};
  }
  return j.dump(2) + "\n";
}

std::string RenderPasses(const std::map<std::string, double>& real_admitted,
                         const std::map<std::string, double>& simulated_admitted) {
  std::vector<double> real_times, sim_times;
  const std::vector<std::set<std::string>> real = GroupPasses(real_admitted, &real_times);
  const std::vector<std::set<std::string>> sim = GroupPasses(simulated_admitted, &sim_times);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::string out;
  int shown = 0;
  for (size_t k = 0; k < std::max(real.size(), sim.size()); ++k) {
    const std::set<std::string> r = k < real.size() ? real[k] : std::set<std::string>{};
    const std::set<std::string> s = k < sim.size() ? sim[k] : std::set<std::string>{};
    const bool same = r == s;
    if (!same || shown > 0) ++shown;
    absl::StrAppendFormat(&out, "%s pass %d: real %8.2fs %s  sim %8.2fs %s\n",
                          same ? "  " : "!=", k, k < real_times.size() ? real_times[k] : nan,
                          same ? absl::StrCat(r.size()) : IdList(Minus(r, s)),
                          k < sim_times.size() ? sim_times[k] : nan,
                          same ? "" : IdList(Minus(s, r)));
    if (shown > 8) break;
  }
  return out;
}

}  // namespace berth::fidelity
