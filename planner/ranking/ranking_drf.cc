// "drf": effective priority desc, and within one, the jobs whose own
// priority it is before those aged to it (a level of its own, whose jobs
// rank by when they reached the level whatever their workspace — one run,
// no fair share: the wait is what aging bounds — then by their own priority,
// then created_at); within a level of jobs at their own priority, the
// workspace with the smallest dominant resource share goes next (progressive
// filling, counting running jobs and the jobs ranked so far); on equal
// shares, the workspace whose next job was queued first, then the one
// admitted least recently (fair turns, State::workspace_turns) — never the
// one whose jobs were created first;
// within a workspace created_at, then id.
//
// O(n log n): group the jobs by (priority, workspace) — a counting sort when
// there are few distinct priorities, a comparison sort otherwise — sort each
// group by (created_at, id), then merge the workspaces' groups of one
// priority with a heap keyed by (dominant share, when the workspace's next
// job was queued, its last turn,
// a hash of it and its next job's created_at, workspace name).
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "planner/model/saturating.h"
#include "planner/ranking/created_sort.h"
#include "planner/ranking/drf_keys.h"
#include "planner/ranking/ranking.h"
#include "planner/ranking/ranking_trace.h"

namespace berth::planner {
namespace {

using internal::KeyTrace;
using internal::SatAdd;

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
  // patterns), then how long its next job has waited in Berth
  // (JobRecord::waiting_since_ns: the workspace whose next job was queued
  // first goes first, so a workspace that fell behind catches up), then
  // the workspace's last turn (least recently admitted first: workspaces of
  // equal share whose jobs were queued together take turns across plans,
  // whatever their jobs' created_at says — created_at only orders jobs
  // within a workspace), then a hash of (workspace, its next job's
  // created_at) — so that workspaces never admitted do not always lose to
  // the first name — then the workspace's name rank.
  uint32_t share;
  uint32_t ws;
  int64_t since_ns;
  int64_t created_ns;
  uint64_t turn;
  uint64_t salt;
  uint32_t pos;
  uint32_t end;
  uint32_t workspace() const { return ws; }
};




bool After(const Run& a, const Run& b) {
  if (a.share != b.share) return a.share > b.share;
  if (a.since_ns != b.since_ns) return a.since_ns > b.since_ns;
  if (a.turn != b.turn) return a.turn > b.turn;
  if (a.salt != b.salt) return a.salt > b.salt;
  return a.ws > b.ws;
}

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


// Among aged jobs whose keys (the instant they reached their level) are
// equal: the higher own priority (fewer levels risen) first, then the older
// created_at, then TieBreakLess.
bool AgedTieLess(const State& state, absl::Span<const JobRecord> jobs, uint32_t a,
                 uint32_t b) {
  const JobRecord& x = jobs[a];
  const JobRecord& y = jobs[b];
  if (x.aged_levels != y.aged_levels) return x.aged_levels < y.aged_levels;
  if (x.created_ns != y.created_ns) return x.created_ns < y.created_ns;
  return TieBreakLess(state, a, b);
}

// Sorts a[0, n) by (created_ns, TieBreakLess) — or, for a level's aged jobs
// (`aged`), by (key, AgedTieLess): a radix sort on created_ns, then equal
// created_ns runs by id (created_sort.h). `tmp` holds n elements.
void SortByCreated(const State& state, absl::Span<const JobRecord> jobs, bool aged,
                   Elem* a, Elem* tmp, size_t n) {
  auto less = [&](const Elem& x, const Elem& y) {
    if (x.created_ns != y.created_ns) return x.created_ns < y.created_ns;
    if (aged) return AgedTieLess(state, jobs, x.job, y.job);
    return TieBreakLess(state, x.job, y.job);
  };
  if (n < 256) {
    std::sort(a, a + n, less);
    return;
  }
  internal::RadixSortByCreated(a, tmp, n);
  // Equal created_ns: by id.
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && a[j].created_ns == a[i].created_ns) ++j;
    if (j - i > 1) {
      if (aged) {
        std::sort(a + i, a + j, less);
      } else {
        internal::SortTiesById(
            a + i, j - i, [&state](const Elem& e) -> const std::string& { return state.queued[e.job].id; },
            [&state](const Elem& x, const Elem& y) { return TieBreakLess(state, x.job, y.job); });
      }
    }
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
    const int64_t interval_ns = std::max<int64_t>(0, input.aging_interval_ns);
    auto elem = [&](uint32_t i) {
      const JobRecord& j = input.jobs[i];
      // Aged jobs of one level: by the instant they reached it (first come,
      // first served within the level, so that of two jobs that waited as
      // long the higher own priority goes first); natives by created_at.
      const int64_t key =
          j.aged_levels == 0
              ? j.created_ns
              : SatAdd(j.waiting_since_ns, internal::SatMul(interval_ns, j.aged_levels));
      return Elem{key, i, weight(j.share_memory(), inv_mem),
                  weight(j.share_cpu(), inv_cpu)};
    };
    auto aged = [](const JobRecord& j) -> uint64_t { return j.aged_levels > 0 ? 1 : 0; };
    auto by_created = [&](const Elem& a, const Elem& b) {
      if (a.created_ns != b.created_ns) return a.created_ns < b.created_ns;
      if (aged(input.jobs[a.job])) return AgedTieLess(state, input.jobs, a.job, b.job);
      return TieBreakLess(state, a.job, b.job);
    };

    ScratchBuffers local;
    ScratchBuffers& scratch = input.scratch != nullptr ? *input.scratch : local;
    // Every element is written before it is read: no zero-filling.
    Elem* elems = scratch.Get<Elem>(0, n);
    std::vector<Segment> segments;
    // Levels: (priority desc, own before aged), two per priority.
    const uint64_t span = 2 * static_cast<uint64_t>(
        static_cast<int64_t>(max_prio) - static_cast<int64_t>(min_prio) + 1);
    const uint64_t buckets = span * num_ws;
    if (span <= 2048 && buckets <= std::max<uint64_t>(4 * n, 1 << 16)) {
      // Counting sort by (level, workspace), then each bucket.
      uint32_t* start = scratch.Get<uint32_t>(1, buckets + 1);
      std::fill(start, start + buckets + 1, 0u);
      // The aged jobs of a level share one bucket (workspace 0): oldest
      // first, whatever their workspace.
      auto bucket_of = [&](const JobRecord& j) {
        return (static_cast<uint64_t>(max_prio - j.priority) * 2 + aged(j)) * num_ws +
               (aged(j) ? 0 : j.workspace);
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
          SortByCreated(state, input.jobs, level % 2 == 1, elems + start[b], tmp,
                        start[b + 1] - start[b]);
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
        if (aged(x) != aged(y)) return aged(x) < aged(y);
        if (!aged(x) && x.workspace != y.workspace) return x.workspace < y.workspace;
        return by_created(a, b);
      });
      for (uint32_t i = 0; i < n;) {
        const JobRecord& head = input.jobs[elems[i].job];
        uint32_t e = i + 1;
        while (e < n && input.jobs[elems[e].job].priority == head.priority &&
               aged(input.jobs[elems[e].job]) == aged(head) &&
               (aged(head) || input.jobs[elems[e].job].workspace == head.workspace))
          ++e;
        const JobRecord* prev = segments.empty()
                                    ? nullptr
                                    : &input.jobs[elems[segments.back().begin].job];
        const bool first = prev == nullptr || prev->priority != head.priority ||
                           aged(*prev) != aged(head);
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
    auto rekey = [&](Run& r) {
      r.share = internal::DrfShareBits(share(r.ws));
      r.created_ns = elems[r.pos].created_ns;
      r.since_ns = input.jobs[elems[r.pos].job].waiting_since_ns;
      r.salt = internal::DrfTieSalt(r.created_ns, r.ws);
    };

    size_t out = 0;
    std::vector<Run> heap;
    KeyTrace trace(input.keys, n, num_ws);
    for (size_t s = 0; s < segments.size();) {
      heap.clear();
      trace.NextLevel();
      do {
        const Segment& g = segments[s];
        const uint64_t turn = g.workspace < input.last_turn_by_workspace.size()
                                  ? input.last_turn_by_workspace[g.workspace]
                                  : 0;
        Run r{0, g.workspace, 0, 0, turn, 0, g.begin, g.end};
        rekey(r);
        heap.push_back(r);
        ++s;
      } while (s < segments.size() && !segments[s].first_of_level);
      std::make_heap(heap.begin(), heap.end(),
                     [](const Run& a, const Run& b) { return After(a, b); });
      while (!heap.empty()) {
        Run& top = heap.front();
        const uint32_t w = top.workspace();
        if (heap.size() == 1) {  // the rest of this run, in order
          // (an aged band's run mixes workspaces: count each job's own)
          for (uint32_t p = top.pos; p < top.end; ++p) {
            const uint32_t jw = input.jobs[elems[p].job].workspace;
            if (trace.on()) {
              const JobRecord& j = input.jobs[elems[p].job];
              trace.Record(elems[p].job, jw, j.aged_levels > 0, elems[p].created_ns,
                           mem[jw], cpu[jw],
                           {internal::DrfShareBits(share(jw)), j.waiting_since_ns, top.turn,
                            internal::DrfTieSalt(elems[p].created_ns, top.ws)});
            }
            order[out++] = elems[p].job;
            mem[jw] += elems[p].memory_weight;
            cpu[jw] += elems[p].cpu_weight;
          }
          break;
        }
        const Elem& e = elems[top.pos];
        // Each workspace's run is a separate stream, more than the hardware
        // prefetcher follows: fetch this run's next lines ahead.
        __builtin_prefetch(&elems[top.pos + 8]);
        if (trace.on()) {
          trace.Record(e.job, w, false, e.created_ns, mem[w], cpu[w],
                       {top.share, top.since_ns, top.turn, top.salt});
        }
        order[out++] = e.job;
        mem[w] += e.memory_weight;
        cpu[w] += e.cpu_weight;
        if (++top.pos == top.end) {
          top = heap.back();
          heap.pop_back();
        } else {
          rekey(top);
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
