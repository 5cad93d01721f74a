// PyRandom: the pseudo-random numbers of CPython's `random.Random(seed)`
// (Mersenne Twister MT19937 seeded by init_by_array with the seed's 32-bit
// words), for the calls berth-fidelity's workload generator makes. The
// same seed gives the same numbers as Python 3 does, so a workload named by
// its --seed is the one the earlier Python tool generated (docs/BENCHMARKS.md
// quotes seeds).
//
// Not thread-safe (each generator has its own state; use one per thread).
#ifndef BERTH_TOOLS_FIDELITY_PY_RANDOM_H_
#define BERTH_TOOLS_FIDELITY_PY_RANDOM_H_

#include <array>
#include <cstdint>
#include <vector>

namespace berth::fidelity {

class PyRandom {
 public:
  // As random.Random(seed) for a non-negative integer seed.
  explicit PyRandom(uint64_t seed);

  // random.random(): a double in [0, 1) with 53 random bits.
  double Random();
  // random.uniform(a, b): a + (b - a) * Random().
  double Uniform(double a, double b);
  // random.getrandbits(k). REQUIRES: 1 <= k <= 32.
  uint32_t GetRandBits(int k);
  // random.randrange(n) (CPython's _randbelow: rejection sampling on
  // bit_length(n) bits). REQUIRES: n >= 1.
  uint32_t RandBelow(uint32_t n);
  // random.choice(items). REQUIRES: !items.empty().
  template <typename T>
  const T& Choice(const std::vector<T>& items) {
    return items[RandBelow(static_cast<uint32_t>(items.size()))];
  }

  // One raw 32-bit output of the generator.
  uint32_t Next();

 private:
  static constexpr int kN = 624;
  std::array<uint32_t, kN> mt_{};
  int index_ = kN;
};

}  // namespace berth::fidelity

#endif  // BERTH_TOOLS_FIDELITY_PY_RANDOM_H_
