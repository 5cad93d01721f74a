#include "tools/fidelity/measures.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <utility>

#include "tools/base/quantile.h"

namespace berth::fidelity {
namespace {

int Sign(double a, double b) { return (a > b) - (a < b); }

}  // namespace

double Quantile(std::vector<double> values, double q) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  return berth::Quantile(std::move(values), q);
}

double MedianDeviation(const std::vector<double>& values) {
  const double median = Quantile(values, 0.5);
  std::vector<double> deviations;
  deviations.reserve(values.size());
  for (double v : values) deviations.push_back(std::fabs(v - median));
  return Quantile(std::move(deviations), 0.5);
}

double TauB(const std::vector<double>& x, const std::vector<double>& y) {
  int64_t concordant = 0, discordant = 0, ties_x = 0, ties_y = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    for (size_t j = i + 1; j < x.size(); ++j) {
      const int dx = Sign(x[i], x[j]);
      const int dy = Sign(y[i], y[j]);
      if (dx == 0 && dy == 0) continue;
      if (dx == 0) {
        ++ties_x;
      } else if (dy == 0) {
        ++ties_y;
      } else if (dx == dy) {
        ++concordant;
      } else {
        ++discordant;
      }
    }
  }
  const double denominator =
      std::sqrt(static_cast<double>(concordant + discordant + ties_x) *
                static_cast<double>(concordant + discordant + ties_y));
  if (denominator == 0) return 1.0;
  return static_cast<double>(concordant - discordant) / denominator;
}

std::vector<std::set<std::string>> GroupPasses(const std::map<std::string, double>& times,
                                               std::vector<double>* pass_times) {
  std::map<int64_t, std::set<std::string>> groups;
  for (const auto& [id, t] : times) groups[std::llround(t * 1e6)].insert(id);
  std::vector<std::set<std::string>> passes;
  if (pass_times != nullptr) pass_times->clear();
  for (auto& [micros, ids] : groups) {
    passes.push_back(std::move(ids));
    if (pass_times != nullptr) pass_times->push_back(static_cast<double>(micros) / 1e6);
  }
  return passes;
}

std::vector<planner::StartLevel> StartLevels(const std::vector<std::pair<double, double>>& spans,
                                          int parallelism) {
  std::map<int, std::vector<double>> by_level;
  for (size_t k = 0; k < spans.size(); ++k) {
    const auto [begin, end] = spans[k];
    int in_flight = 0, together = 1;
    for (size_t o = 0; o < spans.size(); ++o) {
      const auto [other_begin, other_end] = spans[o];
      if (o == k || other_end <= begin) continue;
      if (other_begin < begin) ++in_flight;
      if (other_begin <= begin + kSamePass && other_begin < end) ++together;
    }
    if (in_flight < parallelism) {
      by_level[std::min(together, std::max(1, parallelism))].push_back(end - begin);
    }
  }
  std::vector<planner::StartLevel> levels;
  for (auto& [starts, latencies] : by_level) {
    levels.push_back({starts, Quantile(latencies, 0.5), static_cast<int64_t>(latencies.size()),
                      MedianDeviation(latencies)});
  }
  return levels;
}

}  // namespace berth::fidelity
