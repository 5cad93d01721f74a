// The one quantile definition of the tools' reports (berth-plan's waits,
// berth-load's latencies, berth-fidelity's errors and spreads): the value of
// rank floor(q * n) + 1 in sorted order (capped at n). It is always one of
// the values (no interpolation), so a p95 of waits is a wait that happened;
// it is never below the textbook nearest rank (ceil(q * n)) and takes the
// upper median of an even count, so the spread of two values is not zero.
// Thread-safe pure function.
#ifndef BERTH_TOOLS_BASE_QUANTILE_H_
#define BERTH_TOOLS_BASE_QUANTILE_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace berth {

// The q-quantile of `values`: the element at index min(n - 1, floor(q * n))
// of the sorted values (q = 0 gives the minimum, q = 0.5 of an even count
// the upper median, q = 1 the maximum).
// REQUIRES: !values.empty(), 0 <= q <= 1.
template <typename T>
T Quantile(std::vector<T> values, double q) {
  const size_t n = values.size();
  const size_t index =
      std::min(n - 1, static_cast<size_t>(std::floor(q * static_cast<double>(n))));
  std::nth_element(values.begin(), values.begin() + index, values.end());
  return values[index];
}

}  // namespace berth

#endif  // BERTH_TOOLS_BASE_QUANTILE_H_
