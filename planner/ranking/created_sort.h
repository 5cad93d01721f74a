// Sorting jobs in the order every ranking reads them within a group: by
// created_at (Unix ns, saturated), then id. Shared by the whole-queue
// ranking ("drf", per workspace and level) and by the incremental planner
// and the forecast, which index a whole queue in that order (their sets
// then grow at their ends). Internal to planner/.
//
// T is any element with an `int64_t created_ns` member; the sorts move whole
// elements, so small ones (a key and an index) sort fastest.
#ifndef BERTH_PLANNER_RANKING_CREATED_SORT_H_
#define BERTH_PLANNER_RANKING_CREATED_SORT_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace berth::planner::internal {

// Sorts a[0, n) by created_ns, stably: an LSD radix sort on the bits that
// vary (11-bit digits), which avoids the branch mispredictions of a
// comparison sort on random keys. `tmp` holds n elements.
template <typename T>
void RadixSortByCreated(T* a, T* tmp, size_t n) {
  if (n < 2) return;
  int64_t lo = a[0].created_ns, hi = lo;
  for (size_t i = 1; i < n; ++i) {
    lo = std::min(lo, a[i].created_ns);
    hi = std::max(hi, a[i].created_ns);
  }
  const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  constexpr int kBits = 11;
  constexpr uint32_t kDigits = 1u << kBits;
  const int bits = range == 0 ? 0 : 64 - __builtin_clzll(range);
  uint32_t count[kDigits];
  T* src = a;
  T* dst = tmp;
  for (int shift = 0; shift < bits; shift += kBits) {
    auto digit = [&](const T& e) {
      return static_cast<uint32_t>(
          ((static_cast<uint64_t>(e.created_ns) - static_cast<uint64_t>(lo)) >> shift) &
          (kDigits - 1));
    };
    std::fill(count, count + kDigits, 0u);
    for (size_t i = 0; i < n; ++i) ++count[digit(src[i])];
    uint32_t sum = 0;
    for (uint32_t d = 0; d < kDigits; ++d) {
      const uint32_t c = count[d];
      count[d] = sum;
      sum += c;
    }
    for (size_t i = 0; i < n; ++i) dst[count[digit(src[i])]++] = src[i];
    std::swap(src, dst);
  }
  if (src != a) std::copy(src, src + n, a);
}

// Sorts a[0, n), whose created_ns are all equal, by id_of(element) (a
// const std::string&), then by `less` (a full tie-break, called only for
// equal keys below). Ids in such a run often share a long prefix
// ("ws-012.extract-00"): the eight bytes after the run's common prefix,
// big-endian, become a temporary integer key held in created_ns, so that
// most comparisons are one integer compare instead of two pointer chases and
// a string compare. created_ns is restored.
template <typename T, typename IdOf, typename Less>
void SortTiesById(T* a, size_t n, IdOf id_of, Less less) {
  if (n < 2) return;
  const int64_t created = a[0].created_ns;
  const std::string& first = id_of(a[0]);
  size_t lcp = first.size();
  for (size_t i = 1; i < n && lcp > 0; ++i) {
    const std::string& id = id_of(a[i]);
    size_t k = 0;
    const size_t m = std::min(lcp, id.size());
    while (k < m && id[k] == first[k]) ++k;
    lcp = k;
  }
  for (size_t i = 0; i < n; ++i) {
    const std::string& id = id_of(a[i]);
    uint64_t key = 0;
    for (size_t k = 0; k < 8; ++k) {
      const size_t at = lcp + k;
      key = (key << 8) | (at < id.size() ? static_cast<unsigned char>(id[at]) : 0u);
    }
    std::memcpy(&a[i].created_ns, &key, sizeof key);
  }
  std::sort(a, a + n, [&less](const T& x, const T& y) {
    uint64_t kx, ky;
    std::memcpy(&kx, &x.created_ns, sizeof kx);
    std::memcpy(&ky, &y.created_ns, sizeof ky);
    if (kx != ky) return kx < ky;
    return less(x, y);
  });
  for (size_t i = 0; i < n; ++i) a[i].created_ns = created;
}

// Sorts a[0, n) by (created_ns, id_of, less): `less` orders elements whose
// created_ns and ids are equal. `tmp` holds n elements.
template <typename T, typename IdOf, typename Less>
void SortByCreatedThenId(T* a, T* tmp, size_t n, IdOf id_of, Less less) {
  if (n < 256) {
    std::sort(a, a + n, [&](const T& x, const T& y) {
      if (x.created_ns != y.created_ns) return x.created_ns < y.created_ns;
      if (const int c = id_of(x).compare(id_of(y)); c != 0) return c < 0;
      return less(x, y);
    });
    return;
  }
  RadixSortByCreated(a, tmp, n);
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && a[j].created_ns == a[i].created_ns) ++j;
    if (j - i > 1) {
      SortTiesById(a + i, j - i, id_of, [&](const T& x, const T& y) {
        if (const int c = id_of(x).compare(id_of(y)); c != 0) return c < 0;
        return less(x, y);
      });
    }
    i = j;
  }
}

// The permutation of [0, n) that orders n items by (created_ns(i), id(i),
// i): created_ns(i) an int64_t (Unix ns, saturated), id(i) a
// const std::string&.
template <typename CreatedOf, typename IdOf>
std::vector<uint32_t> CreationOrder(size_t n, CreatedOf created_ns, IdOf id) {
  struct Key {
    int64_t created_ns;
    uint32_t i;
  };
  std::vector<Key> keys(n);
  for (size_t i = 0; i < n; ++i) keys[i] = Key{created_ns(i), static_cast<uint32_t>(i)};
  {
    std::vector<Key> tmp(n);
    SortByCreatedThenId(
        keys.data(), tmp.data(), n, [&id](const Key& k) -> const std::string& { return id(k.i); },
        [](const Key& a, const Key& b) { return a.i < b.i; });
  }
  std::vector<uint32_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = keys[i].i;
  return order;
}

}  // namespace berth::planner::internal

#endif  // BERTH_PLANNER_RANKING_CREATED_SORT_H_
