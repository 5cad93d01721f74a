#include "planner/starts/start_fit.h"

#include <algorithm>

namespace berth::planner {

StartFit FitStarts(const std::vector<StartLevel>& levels) {
  double w = 0, sx = 0, sy = 0;
  for (const StartLevel& l : levels) {
    if (l.count <= 0) continue;
    const double c = static_cast<double>(l.count);
    w += c;
    sx += c * (l.starts - 1);
    sy += c * l.median_s;
  }
  StartFit model;
  if (w <= 0) return model;
  const double mx = sx / w, my = sy / w;
  double sxx = 0, sxy = 0;
  for (const StartLevel& l : levels) {
    if (l.count <= 0) continue;
    const double c = static_cast<double>(l.count), dx = (l.starts - 1) - mx;
    sxx += c * dx * dx;
    sxy += c * dx * (l.median_s - my);
  }
  double slope = sxx > 0 ? sxy / sxx : 0;
  double alone = my - slope * mx;
  if (slope < 0 || alone < 0) {  // not the model's shape: no contention
    slope = 0;
    alone = my;
  }
  slope = std::min(slope, alone);
  model.alone = absl::Seconds(std::max(0.0, alone));
  model.contention = absl::Seconds(slope);
  return model;
}

}  // namespace berth::planner
