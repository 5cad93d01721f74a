// The IncrementalPlanner's index of its queue (incremental.h): every queued
// job's entry, the queue sorted the ways the rankings read it, the names'
// numbering, dependency status and the counts that decide whether a plan can
// be incremental. Internal to planner/plan.
#ifndef BERTH_PLANNER_PLAN_INCREMENTAL_INDEX_H_
#define BERTH_PLANNER_PLAN_INCREMENTAL_INDEX_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/strings/string_view.h"
#include "planner/model/model.h"
#include "planner/plan/incremental.h"
#include "planner/plan/incremental_fit.h"
#include "planner/plan/incremental_share.h"
#include "planner/plan/min_multiset.h"

namespace berth::planner {

// A queued job in sorted order: created_at (Unix ns), then id (then the
// handle, only for duplicate ids, which are planned by the fallback).
// `since` (where aging counts its wait from, Unix ns) rides along unsorted.
struct RankKey {
  int64_t created;
  const std::string* id;
  uint32_t handle;
  int64_t since = 0;
};
struct RankKeyLess {
  bool operator()(const RankKey& a, const RankKey& b) const {
    if (a.created != b.created) return a.created < b.created;
    if (const int c = a.id->compare(*b.id); c != 0) return c < 0;
    return a.handle < b.handle;
  }
};
using RankSet = absl::btree_set<RankKey, RankKeyLess>;

// The same jobs in the order aged jobs of one priority rank within a level:
// by when they were queued (JobRecord::waiting_since_ns, so by when they
// reached the level), then created_at, then id.
struct AgedKeyLess {
  bool operator()(const RankKey& a, const RankKey& b) const {
    if (a.since != b.since) return a.since < b.since;
    return RankKeyLess()(a, b);
  }
};
using AgedSet = absl::btree_set<RankKey, AgedKeyLess>;

// Names numbered stably; ranks (the position among the live names, sorted)
// recomputed only when the set of live names changes.
class NameTable {
 public:
  uint32_t Ref(absl::string_view name);
  void Unref(uint32_t id);
  // The id of `name`, or -1 if it was never seen.
  int64_t Find(absl::string_view name) const;
  // Sorted live names, and each id's rank among them (valid for live ids).
  void Refresh();
  const std::vector<absl::string_view>& sorted() const { return sorted_; }
  uint32_t rank(uint32_t id) const { return rank_[id]; }
  // Changes whenever Refresh() may change sorted() (never the same twice).
  uint64_t generation() const { return generation_; }

 private:
  absl::flat_hash_map<std::string, uint32_t> ids_;
  std::deque<std::string> names_;  // stable addresses
  std::vector<int64_t> refs_;
  std::vector<uint32_t> rank_;
  std::vector<absl::string_view> sorted_;
  bool changed_ = true;
  uint64_t generation_ = 0;
};

struct IncrementalPlanner::Index {
  Index() = default;
  // Not copied: queued_ids' hash and equality point at `entries`.
  Index(const Index&) = delete;
  Index& operator=(const Index&) = delete;

  // What a plan reads of a queued job sits here, first, so that drawing
  // and deciding a job touches its entry only, not its QueuedJob (a random
  // access per decided job that dominated a plan's cost).
  struct Entry {
    uint32_t pos = 0;  // index into State::queued
    int32_t priority = 0;
    uint32_t workspace = 0;  // NameTable ids
    uint32_t pool = 0;
    int64_t created = 0;  // Unix ns, saturated
    int64_t since = 0;    // JobRecord::waiting_since_ns
    int64_t memory = 0;   // the QueuedJob's resources, as given
    int64_t cpu = 0;
    int64_t duration = 0;   // expected duration in ns, 0 if unknown (the default)
    uint32_t waiting = 0;   // dependencies queued or running
    uint32_t bad_deps = 0;  // dependencies failed or unknown
    bool static_problem = false;  // invalid, unknown pool, over a budget
    bool live = false;
    bool odd = false;  // queued at another time than its created_at
    std::string id;
  };
  // The queued jobs of one priority: all (kept with `fifo`), by when they
  // were queued (aging), and per workspace.
  struct Level {
    RankSet all;
    AgedSet aged;
    // How many jobs were queued at another time than their created_at
    // (WaitingSince differs; Entry::odd): the only ones of a level that can
    // have reached it after a job ranked behind them. A count, not a set:
    // in berthd every job is queued after its creation.
    size_t odd = 0;
    absl::flat_hash_map<uint32_t, RankSet> by_workspace;
  };

  std::deque<Entry> entries;  // by handle; stable addresses
  // Each entry's address by handle, for a plan's reads per job it draws
  // (EntryAt): a lookup through the deque was ~20 instructions, a third of
  // adding a drawn job's share. Brought up to date at a plan's start
  // (SyncEntryAddresses); valid until `entries` next grows.
  std::vector<const Entry*> entry_addresses;
  void SyncEntryAddresses() {
    // Rebuilt whole if the first entry moved (it never does in a deque).
    if (!entry_addresses.empty() && (entries.empty() || entry_addresses[0] != &entries[0]))
      entry_addresses.clear();
    for (size_t h = entry_addresses.size(); h < entries.size(); ++h)
      entry_addresses.push_back(&entries[h]);
  }
  // REQUIRES: SyncEntryAddresses() since `entries` last grew.
  const Entry& EntryAt(uint32_t h) const { return *entry_addresses[h]; }
  std::vector<uint32_t> free_handles;
  std::vector<uint32_t> handle_of;  // parallel to State::queued
  std::map<int32_t, Level, std::greater<int32_t>> levels;  // priority desc
  // The fifo order (every queued job, and each level's in Level::all), kept
  // only once a plan reads it (the "fifo" ranking, the fit index): "drf"
  // admissions-only plans — a forecast's, berthd's pass — never do, and a
  // whole queue entered at once then fills two ordered sets fewer.
  RankSet fifo;
  bool fifo_kept = false;
  // The fifo order with each job's memory and cpu, for walks that pass over
  // the jobs larger than what is free (built by the first such walk).
  FitIndex fit;
  // The "drf" runs with each job's memory, cpu and share weights, for the
  // same walks under "drf" (built by such a walk, stale once a job joins).
  ShareIndex share;
  // Every queued job's memory and cpu (the smallest bound what can fit).
  MinMultiset memory;
  MinMultiset cpu;
  // Every queued job's expected duration in ns if known, and how many are
  // unknown (the default).
  MinMultiset duration;
  int64_t unknown_durations = 0;
  NameTable workspaces;
  NameTable pools;

  // Per queued id: the handle of one queued job carrying it, and how many
  // do. The id is that handle's entry's, hashed and compared through it
  // (entries never move and a live entry's id does not change): 8 bytes a
  // slot. Two maps of copied ids were ~150 bytes a job and most of a whole
  // queue's setup; one whose keys viewed the ids, 24 bytes a slot (52 MB of
  // slots at 1M).
  struct QueuedId {
    uint32_t handle = 0;
    mutable uint32_t count = 0;  // not part of the key
  };
  struct QueuedIdHash {
    using is_transparent = void;
    const std::deque<Entry>* entries;
    size_t operator()(absl::string_view id) const { return absl::Hash<absl::string_view>()(id); }
    size_t operator()(const QueuedId& q) const { return (*this)((*entries)[q.handle].id); }
  };
  struct QueuedIdEq {
    using is_transparent = void;
    const std::deque<Entry>* entries;
    absl::string_view Id(absl::string_view id) const { return id; }
    absl::string_view Id(const QueuedId& q) const { return (*entries)[q.handle].id; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return Id(a) == Id(b);
    }
  };
  absl::flat_hash_set<QueuedId, QueuedIdHash, QueuedIdEq> queued_ids{0, QueuedIdHash{&entries},
                                                                      QueuedIdEq{&entries}};
  // How many running jobs carry each id.
  absl::flat_hash_map<std::string, uint32_t> running_count;
  // Parallel to State::running: each running job's workspace and pool
  // (NameTable ids, held by its reference) and its id's hash, so that a plan
  // does not look two names up per running job, and a job's end compares
  // only the ids whose hash is equal (forecasts end one job per plan).
  struct RunningMeta {
    size_t id_hash = 0;
    uint32_t workspace = 0;
    uint32_t pool = 0;
  };
  std::vector<RunningMeta> running_meta;
  // Per id: the queued jobs that depend on it (with repeats).
  absl::flat_hash_map<std::string, std::vector<uint32_t>> dependants;

  // What sends a plan to the whole-queue planner (of bad_dep_jobs, only
  // those with an unknown dependency: DependencyRejections).
  int64_t duplicate_ids = 0;      // queued ids carried twice anywhere
  int64_t static_problems = 0;    // under `classified`
  // Queued jobs with a dependency failed or unknown (Entry::bad_deps > 0).
  absl::flat_hash_set<uint32_t> bad_dep_jobs;
  int64_t undated = 0;            // no queued_at nor created_at after the epoch
  bool cycle_suspect = false;
  bool classified_valid = false;
  Budgets classified;  // the budgets static_problem was computed under

  // Whether queued job `h` is within `l` (nullptr: none) as FitIndex::Find
  // decides it, an unknown duration counting as `default_ns`.
  bool Within(uint32_t h, const FitIndex::Limits* l, int64_t default_ns) const {
    if (l == nullptr) return false;
    const Entry& e = entries[h];
    return (l->waiting_too || e.waiting == 0) && e.memory <= l->memory && e.cpu <= l->cpu &&
           (e.duration > 0 ? e.duration : default_ns) <= l->duration;
  }
  // What a queued job's dependency `id` is now: pending (queued or running),
  // met (succeeded), failed (another outcome) or unknown (Plan()'s
  // kUnknownDependency). Recheck() counts them, DependencyRejections()
  // looks for the unknown ones.
  enum class Dependency : uint8_t { kPending, kMet, kFailed, kUnknown };
  Dependency StatusOf(const std::string& id, const State& state) const;
  // Whether `id` names a queued job that is a duplicate.
  bool Duplicate(const std::string& id, const State& state) const;
  // Re-evaluates the dependency status of queued entry `h`.
  void Recheck(uint32_t h, const State& state);
  // Rechecks the dependants of `id` (whose status changed).
  void RecheckDependants(const std::string& id, const State& state);
  // The queued job `id` (handle `h`) joined: its dependants rechecked, and a
  // cycle suspected if one runs through it.
  void RecheckJoined(const std::string& id, uint32_t h, const State& state);
  // The queued jobs Plan() rejects for a dependency, when none of them has
  // an unknown one: each job with a failed dependency (kDependencyFailed)
  // and, transitively, each job depending on a queued one of them
  // (kDependencyRejected). Each is listed in `jobs` and marked in `marks`
  // (by handle: its Problem; `marks` is grown to the entries, and its other
  // elements must be 0). False, with `jobs` listing those marked so far, if
  // a job with a bad dependency has an unknown one (Plan() rejects it with
  // kUnknownDependency, a NEVER_FITS whose place in its list of jobs that
  // never fit follows the ranking: left to the whole-queue planner).
  // O(jobs listed + their dependants).
  bool DependencyRejections(const State& state, std::vector<uint8_t>& marks,
                            std::vector<uint32_t>& jobs) const;
  // Whether a job of this entry's resources and pool can never fit.
  bool StaticProblem(const QueuedJob& q) const;
  // Reclassifies every entry under `budgets` if they differ from the last.
  void Classify(const Budgets& budgets, const State& state);
  // True if some queued jobs form a dependency cycle.
  bool HasCycle(const State& state) const;
  // True if a cycle runs through queued entry `h`.
  bool CycleThrough(uint32_t h, const State& state) const;
  // Rebuilds `share` from the levels' runs and aged sets (O(n log n)).
  void RebuildShares(int64_t default_ns, double inv_mem, double inv_cpu);
  // Rebuilds the share index's aged order of `priority` alone (once
  // removals made it stale: ShareIndex::aged_stale), from Level::aged.
  void RebuildAged(int32_t priority);
  // Appends `level`'s aged order to the share index's (of `priority`).
  void AppendAged(int32_t priority, const Level& level);
  // Builds `fifo` and each level's `all` if they are not kept (O(n log n)),
  // and keeps them from then on.
  void KeepFifo();
  // Rebuilds `fit` from the fifo order if it is stale or was built for
  // another default duration (ns).
  void RefreshFit(int64_t default_ns);
};

}  // namespace berth::planner

#endif  // BERTH_PLANNER_PLAN_INCREMENTAL_INDEX_H_
