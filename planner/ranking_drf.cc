// "drf": priority desc; within a priority, the workspace with the smallest
// dominant resource share goes next (progressive filling, counting running
// jobs and the jobs ranked so far); within a workspace created_at, then id.
//
// O(n log n): group the jobs by (priority, workspace) — a counting sort when
// there are few distinct priorities, a comparison sort otherwise — sort each
// group by (created_at, id), then merge the workspaces' groups of one
// priority with a heap keyed by (dominant share, workspace name).
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "planner/ranking.h"

namespace berth::planner {
namespace {

struct Elem {
  int64_t created_ns;
  uint32_t job;
  float memory_weight;  // memory / memory budget (0 for rejected jobs)
  float cpu_weight;     // cpu / cpu budget
};

// A run of one workspace's jobs at one priority, sorted.
struct Segment {
  uint32_t workspace;
  uint32_t begin;
  uint32_t end;
  bool first_of_level;  // starts a new (lower) priority level
};

struct Run {
  // Heap order, smallest first: the workspace's dominant share before its
  // next job (as a float's bits: non-negative floats order like their bit
  // patterns) in the high half, the workspace's name rank in the low half.
  uint64_t key;
  uint32_t pos;
  uint32_t end;
  uint32_t workspace() const { return static_cast<uint32_t>(key); }
};

uint64_t RunKey(double share, uint32_t workspace) {
  const float f = static_cast<float>(share);  // >= 0
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return (uint64_t{bits} << 32) | workspace;
}

bool After(const Run& a, const Run& b) { return a.key > b.key; }

void SiftDown(std::vector<Run>& heap, size_t i) {
  const size_t n = heap.size();
  Run x = heap[i];
  while (true) {
    size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && After(heap[c], heap[c + 1])) ++c;
    if (!After(x, heap[c])) break;
    heap[i] = heap[c];
    i = c;
  }
  heap[i] = x;
}

// Sorts a[0, n) by (created_ns, TieBreakLess): an LSD radix sort on
// created_ns (11-bit digits over the bits that vary), which avoids the
// branch mispredictions of a comparison sort on random keys, then equal
// created_ns runs by id. `tmp` holds n elements.
void SortByCreated(const State& state, Elem* a, Elem* tmp, size_t n) {
  auto less = [&state](const Elem& x, const Elem& y) {
    if (x.created_ns != y.created_ns) return x.created_ns < y.created_ns;
    return TieBreakLess(state, x.job, y.job);
  };
  if (n < 256) {
    std::sort(a, a + n, less);
    return;
  }
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
  Elem* src = a;
  Elem* dst = tmp;
  for (int shift = 0; shift < bits; shift += kBits) {
    auto digit = [&](const Elem& e) {
      return static_cast<uint32_t>(
          ((static_cast<uint64_t>(e.created_ns) - static_cast<uint64_t>(lo)) >>
           shift) & (kDigits - 1));
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
  // Equal created_ns (rare): by id.
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && a[j].created_ns == a[i].created_ns) ++j;
    if (j - i > 1) std::sort(a + i, a + j, less);
    i = j;
  }
}

class DrfPolicy final : public RankingPolicy {
 public:
  absl::string_view name() const override { return "drf"; }

  void Rank(const RankingInput& input,
            std::vector<uint32_t>& order) const override {
    const size_t n = input.jobs.size();
    order.resize(n);
    if (n == 0) return;
    const State& state = *input.state;
    const double inv_mem = input.memory_capacity > 0
                               ? 1.0 / static_cast<double>(input.memory_capacity)
                               : 0.0;
    const double inv_cpu = input.cpu_capacity > 0
                               ? 1.0 / static_cast<double>(input.cpu_capacity)
                               : 0.0;
    auto weight = [](int64_t v, double inv) {
      return v > 0 ? static_cast<float>(static_cast<double>(v) * inv) : 0.0f;
    };

    const uint32_t num_ws = static_cast<uint32_t>(
        std::max<size_t>({input.num_workspaces,
                          input.running_memory_by_workspace.size(),
                          input.running_cpu_by_workspace.size()}));
    const int32_t min_prio = input.min_priority;
    const int32_t max_prio = input.max_priority;
    auto elem = [&](uint32_t i) {
      const JobRecord& j = input.jobs[i];
      return Elem{j.created_ns, i, weight(j.share_memory(), inv_mem),
                  weight(j.share_cpu(), inv_cpu)};
    };
    auto by_created = [&state](const Elem& a, const Elem& b) {
      if (a.created_ns != b.created_ns) return a.created_ns < b.created_ns;
      return TieBreakLess(state, a.job, b.job);
    };

    ScratchBuffers local;
    ScratchBuffers& scratch = input.scratch != nullptr ? *input.scratch : local;
    // Every element is written before it is read: no zero-filling.
    Elem* elems = scratch.Get<Elem>(0, n);
    std::vector<Segment> segments;
    const uint64_t span = static_cast<uint64_t>(
        static_cast<int64_t>(max_prio) - static_cast<int64_t>(min_prio) + 1);
    const uint64_t buckets = span * num_ws;
    if (span <= 1024 && buckets <= std::max<uint64_t>(4 * n, 1 << 16)) {
      // Counting sort by (priority desc, workspace), then each bucket.
      uint32_t* start = scratch.Get<uint32_t>(1, buckets + 1);
      std::fill(start, start + buckets + 1, 0u);
      auto bucket_of = [&](const JobRecord& j) {
        return static_cast<uint64_t>(max_prio - j.priority) * num_ws + j.workspace;
      };
      for (const JobRecord& j : input.jobs) ++start[bucket_of(j) + 1];
      uint32_t largest = 0;
      for (uint64_t b = 0; b < buckets; ++b) {
        largest = std::max(largest, start[b + 1]);
        start[b + 1] += start[b];
      }
      Elem* tmp = scratch.Get<Elem>(3, largest);
      uint32_t* fill = scratch.Get<uint32_t>(2, buckets);
      std::copy(start, start + buckets, fill);
      for (uint32_t i = 0; i < n; ++i) {
        elems[fill[bucket_of(input.jobs[i])]++] = elem(i);
      }
      for (uint64_t level = 0; level < span; ++level) {
        bool first = true;
        for (uint32_t w = 0; w < num_ws; ++w) {
          const uint64_t b = level * num_ws + w;
          if (start[b] == start[b + 1]) continue;
          SortByCreated(state, elems + start[b], tmp, start[b + 1] - start[b]);
          segments.push_back(Segment{w, start[b], start[b + 1], first});
          first = false;
        }
      }
    } else {
      // Many distinct priorities: one comparison sort.
      for (uint32_t i = 0; i < n; ++i) elems[i] = elem(i);
      std::sort(elems, elems + n, [&](const Elem& a, const Elem& b) {
        const JobRecord& x = input.jobs[a.job];
        const JobRecord& y = input.jobs[b.job];
        if (x.priority != y.priority) return x.priority > y.priority;
        if (x.workspace != y.workspace) return x.workspace < y.workspace;
        return by_created(a, b);
      });
      for (uint32_t i = 0; i < n;) {
        const JobRecord& head = input.jobs[elems[i].job];
        uint32_t e = i + 1;
        while (e < n && input.jobs[elems[e].job].priority == head.priority &&
               input.jobs[elems[e].job].workspace == head.workspace)
          ++e;
        const bool first = segments.empty() ||
                           input.jobs[elems[segments.back().begin].job].priority !=
                               head.priority;
        segments.push_back(Segment{head.workspace, i, e, first});
        i = e;
      }
    }

    // Shares start from running jobs.
    std::vector<double> mem(num_ws, 0.0), cpu(num_ws, 0.0);
    for (size_t w = 0; w < input.running_memory_by_workspace.size(); ++w)
      mem[w] = weight(input.running_memory_by_workspace[w], inv_mem);
    for (size_t w = 0; w < input.running_cpu_by_workspace.size(); ++w)
      cpu[w] = weight(input.running_cpu_by_workspace[w], inv_cpu);
    auto share = [&](uint32_t w) { return std::max(mem[w], cpu[w]); };

    size_t out = 0;
    std::vector<Run> heap;
    for (size_t s = 0; s < segments.size();) {
      heap.clear();
      do {
        const Segment& g = segments[s];
        heap.push_back(Run{RunKey(share(g.workspace), g.workspace), g.begin, g.end});
        ++s;
      } while (s < segments.size() && !segments[s].first_of_level);
      std::make_heap(heap.begin(), heap.end(),
                     [](const Run& a, const Run& b) { return After(a, b); });
      while (!heap.empty()) {
        Run& top = heap.front();
        const uint32_t w = top.workspace();
        if (heap.size() == 1) {  // the rest of this workspace, in order
          for (uint32_t p = top.pos; p < top.end; ++p) {
            order[out++] = elems[p].job;
            mem[w] += elems[p].memory_weight;
            cpu[w] += elems[p].cpu_weight;
          }
          break;
        }
        const Elem& e = elems[top.pos];
        // Each workspace's run is a separate stream, more than the hardware
        // prefetcher follows: fetch this run's next lines ahead.
        __builtin_prefetch(&elems[top.pos + 8]);
        order[out++] = e.job;
        mem[w] += e.memory_weight;
        cpu[w] += e.cpu_weight;
        if (++top.pos == top.end) {
          top = heap.back();
          heap.pop_back();
        } else {
          top.key = RunKey(share(w), w);
        }
        SiftDown(heap, 0);
      }
    }
  }
};

}  // namespace

const RankingPolicy& DrfRanking() {
  static const DrfPolicy* const policy = new DrfPolicy();
  return *policy;
}

}  // namespace berth::planner
