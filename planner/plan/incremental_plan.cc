// The IncrementalPlanner's plans (incremental.h): the preparation of
// running jobs and names (as Prepare() does it), the ranking drawn lazily
// from the index (incremental_rank.h), and the admission walk until it is
// saturated (as Search() walks).
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "planner/model/saturating.h"
#include "planner/plan/incremental.h"
#include "planner/plan/incremental_index.h"
#include "planner/plan/incremental_rank.h"
#include "planner/plan/incremental_stop.h"
#include "planner/plan/prepare.h"
#include "planner/plan/search.h"
#include "planner/plan/walk.h"
#include "planner/ranking/ranking.h"

namespace berth::planner {
namespace {

// Beyond this many distinct queued priorities, finding the next aged band
// costs more than the whole-queue planner saves.
constexpr size_t kMaxLevels = 64;

}  // namespace

void IncrementalPlanner::Plan(const Budgets& budgets, const Policy& policy,
                              absl::Time now, Detail detail, PlanResult& out) {
  if (!whole_queue_only_ && PlanIncrementally(budgets, policy, now, detail, out)) {
    ++incremental_plans_;
    return;
  }
  planner_.Plan(state_, budgets, policy, now, out);
  names_out_ = nullptr;
  ++whole_plans_;
  last_whole_ = true;
}

bool IncrementalPlanner::PlanIncrementally(const Budgets& budgets, const Policy& policy,
                                           absl::Time now, Detail detail, PlanResult& out) {
  const bool whole = detail == Detail::kWhole;
  Index& x = *index_;
  const bool drf = policy.ranking == nullptr || policy.ranking == &DrfRanking();
  if ((!drf && policy.ranking != &FifoRanking()) || !budgets.nodes.empty() ||
      state_.paused || !state_.pools_in_maintenance.empty() || x.levels.size() > kMaxLevels) {
    return false;
  }
  x.Classify(budgets, state_);
  if (x.static_problems > 0 || x.duplicate_ids > 0 || x.cycle_suspect) return false;
  // Jobs rejected for a dependency are decided in their place in the
  // ranking (RankStream::SetRejected); marked for this plan only.
  std::vector<uint8_t>& rejected_mark = rejected_mark_;
  std::vector<uint32_t>& rejected = rejected_jobs_;
  struct Unmark {
    std::vector<uint8_t>& marks;
    std::vector<uint32_t>& jobs;
    ~Unmark() {
      for (const uint32_t h : jobs) marks[h] = 0;
      jobs.clear();
    }
  } unmark{rejected_mark, rejected};
  if (!x.bad_dep_jobs.empty() && !x.DependencyRejections(state_, rejected_mark, rejected))
    return false;
  const int32_t min_prio = x.levels.empty() ? 0 : x.levels.rbegin()->first;
  const int32_t max_prio = x.levels.empty() ? 0 : x.levels.begin()->first;
  // Every queued job fits the budgets: the top is the highest queued.
  const int32_t queued_top = x.levels.empty() ? INT32_MIN : max_prio;
  int32_t ceiling = x.levels.empty() ? max_prio : queued_top;
  if (policy.aging_interval > absl::ZeroDuration() &&
      policy.aging_top_memory > absl::ZeroDuration() && state_.top_priority > ceiling &&
      now - state_.top_priority_seen <= policy.aging_top_memory) {
    ceiling = state_.top_priority;
  }
  const bool aging = policy.aging_interval > absl::ZeroDuration() && min_prio < ceiling;
  if (aging && x.undated > 0) return false;
  const int64_t now_ns = absl::ToUnixNanos(now);
  const int64_t step = std::max<int64_t>(1, absl::ToInt64Nanoseconds(policy.aging_interval));

  x.SyncEntryAddresses();
  internal::Prepared& p = *prepared_;
  PrepareRunning(budgets, policy, now, p);
  p.min_priority = min_prio;
  p.max_priority = std::max(max_prio, ceiling);
  p.aging_ceiling = ceiling;
  p.queued_top = queued_top;
  const size_t num_ws = p.workspaces.size();
  p.holder = -1;
  if (!state_.reservation_holder.empty()) {
    if (auto it = x.queued_ids.find(state_.reservation_holder); it != x.queued_ids.end()) {
      // A holder rejected since (a dependency forgotten): left to Plan().
      if (!rejected.empty() && rejected_mark[it->handle] != 0) return false;
      p.holder = x.entries[it->handle].pos;
    }
  }

  internal::ResetResult(out, /*keep_names=*/true);
  out.now = now;
  out.aging_interval = policy.aging_interval;
  out.aging_ceiling = ceiling;
  out.queued_top_priority = queued_top;
  out.default_duration = policy.default_duration > absl::ZeroDuration()
                             ? policy.default_duration
                             : absl::Hours(1);

  // DRF shares start from the running jobs.
  const double inv_mem =
      budgets.memory_bytes > 0 ? 1.0 / static_cast<double>(budgets.memory_bytes) : 0.0;
  const double inv_cpu =
      budgets.cpu_millis > 0 ? 1.0 / static_cast<double>(budgets.cpu_millis) : 0.0;
  std::vector<double> mem(num_ws), cpu(num_ws);
  for (size_t w = 0; w < num_ws; ++w) {
    mem[w] = ShareWeight(p.running_memory_by_workspace[w], inv_mem);
    cpu[w] = ShareWeight(p.running_cpu_by_workspace[w], inv_cpu);
  }
  if (!drf) x.KeepFifo();  // the "fifo" ranking draws from it
  RankStream stream(x, drf, aging, now_ns, step, ceiling, p.max_priority, mem, cpu,
                    p.last_turn_by_workspace, budgets, state_);
  if (draws_before_jump_ != SIZE_MAX) stream.DrawBeforeJumps(draws_before_jump_);
  if (!rejected.empty()) stream.SetRejected(&rejected_mark);
  const bool admissions = detail == Detail::kAdmissions;
  // Admissions only: once the reservation is placed the walk passes over
  // the jobs that cannot be admitted (too large, too long, or waiting for a
  // dependency: they would wait and change nothing), found in the fit index
  // ("fifo") or the share index ("drf", their shares added in bulk:
  // incremental_rank_skip.cc).
  const int64_t default_ns = internal::DurationNanos(absl::ZeroDuration(), policy.default_duration);
  // Not while jobs are rejected: the indexes' bulk passes would count them.
  const bool drf_skip = admissions && drf && rejected.empty();
  if (drf_skip) {
    // Rebuilt (O(n log n)) only once the walks without it have drawn twice
    // as many jobs as are queued: arrivals, which leave it stale, then cost
    // a fraction of what the walks cost.
    if ((x.share.stale() || !x.share.Matches(default_ns, inv_mem, inv_cpu)) &&
        drawn_without_shares_ >= 2 * x.handle_of.size()) {
      x.RebuildShares(default_ns, inv_mem, inv_cpu);
      drawn_without_shares_ = 0;
    }
    if (!x.share.stale() && x.share.Matches(default_ns, inv_mem, inv_cpu) && x.share.exact())
      stream.UseShares(x.share);
  }
  if (admissions && !drf && rejected.empty()) {
    x.RefreshFit(default_ns);
    stream.UseFit(x.fit);
  }
  // kPrefixFree: the walk also stops once no job it has not drawn could be
  // admitted (incremental_stop.h), found in the fit index — rebuilt when
  // stale only once such walks have drawn as many jobs as are queued, so
  // that arrivals out of the fifo order do not cost a rebuild a plan.
  const bool probe = detail == Detail::kPrefixFree;
  if (probe) {
    if (!x.fit.stale() || drawn_without_fit_ >= x.handle_of.size()) {
      x.RefreshFit(default_ns);
      drawn_without_fit_ = 0;
    }
    if (++drawn_mark_ == 0) {  // wrapped: forget every earlier walk's marks
      std::fill(drawn_in_walk_.begin(), drawn_in_walk_.end(), 0);
      drawn_mark_ = 1;
    }
    drawn_in_walk_.resize(x.entries.size(), 0);
  }
  UndrawnFit undrawn(x.fit, drawn_in_walk_, drawn_mark_);

  // The reservation holder keeps its place (as KeepReservationHolder in
  // plan.cc).
  std::vector<uint32_t>& buffer = buffer_;
  buffer.clear();
  if (p.holder >= 0) {
    const QueuedJob& holder = state_.queued[static_cast<size_t>(p.holder)];
    const int32_t prio = internal::AgedPriority(
        holder.priority, internal::WaitingSince(holder), now,
        aging ? policy.aging_interval : absl::ZeroDuration(), ceiling);
    const absl::Time reached_top =
        internal::WaitingSince(holder) +
        policy.aging_interval * (static_cast<int64_t>(ceiling) - holder.priority);
    KeepHolder(x, state_, x.handle_of[static_cast<size_t>(p.holder)], prio, ceiling,
               reached_top, stream, buffer);
  }

  internal::Walk walk(p, state_, budgets, policy, now, out);
  // k: the rank of the next job drawn (the walk's index of it, as Search()'s);
  // jobs_ahead counts the jobs ranked before it that are not rejected.
  size_t k = 0;
  size_t rejected_ahead = 0;
  constexpr uint8_t kDecided = 0x80;  // in rejected_mark, beside the Problem
  // The dependencies decision `i` (of a job waiting for some) waits for.
  auto add_pending = [&](size_t i) {
    const QueuedJob& q = state_.queued[out.decisions[i].job];
    for (uint32_t n = 0; n < q.depends_on.size(); ++n) {
      const std::string& dep = q.depends_on[n];
      if (x.queued_ids.contains(dep) || x.running_count.contains(dep))
        out.pending_dependencies.push_back(PendingDependency{static_cast<uint32_t>(i), n});
    }
  };
  auto decide = [&](uint32_t h) {
    const Index::Entry& e = x.EntryAt(h);
    if (probe) drawn_in_walk_[h] = drawn_mark_;
    Decision& d = out.decisions.emplace_back();
    d.job = e.pos;
    d.jobs_ahead = static_cast<uint32_t>(k - rejected_ahead);
    if (!rejected.empty() && rejected_mark[h] != 0) {
      d.verdict = Verdict::kReject;
      d.reason = Reason::kDependencyFailed;
      d.problem = static_cast<Problem>(rejected_mark[h]);
      rejected_mark[h] |= kDecided;
      ++rejected_ahead;
    } else if (e.waiting > 0) {
      d.verdict = Verdict::kWait;
      d.reason = Reason::kWaitingForDependencies;
      // kPrefixFree leaves them out (reading each job's dependencies was
      // most of a long walk's cost) unless the walk decides every job.
      if (!probe) add_pending(out.decisions.size() - 1);
    } else {
      JobRecord j{};
      j.memory_bytes = e.memory;
      j.cpu_millis = e.cpu;
      j.created_ns = e.created;
      j.waiting_since_ns = e.since;
      j.duration_ns = e.duration > 0 ? e.duration : default_ns;
      j.priority = e.priority;
      j.workspace = x.workspaces.rank(e.workspace);
      j.pool = x.pools.rank(e.pool);
      j.problem = Problem::kNone;
      walk.Decide(j, d, k);
    }
    ++k;
  };
  size_t b = 0;
  uint32_t h;
  constexpr int64_t kUnset = -2;
  int64_t backfill_limit = kUnset;
  const int64_t min_memory = x.memory.empty() ? 0 : x.memory.min();
  const int64_t min_cpu = x.cpu.empty() ? 0 : x.cpu.min();
  // The shortest expected duration, the default standing for unknown ones.
  int64_t min_duration = 0;
  if (!x.duration.empty() || x.unknown_durations > 0) {
    min_duration = x.duration.empty() ? internal::kInt64Max : x.duration.min();
    if (x.unknown_durations > 0)
      min_duration = std::min(
          min_duration, internal::DurationNanos(absl::ZeroDuration(), policy.default_duration));
  }
  // What the walk could still admit, for the jobs it may pass over: a job
  // waiting for a dependency never; once the reservation is placed, only a
  // job that fits what is free and ends before the reservation or fits its
  // spare (Walk::Reserved()).
  static constexpr FitIndex::Limits kNotWaiting{internal::kInt64Max, internal::kInt64Max,
                                                internal::kInt64Max};
  const FitIndex::Limits* a = &kNotWaiting;
  const FitIndex::Limits* c = nullptr;
  FitIndex::Limits ends{}, fits{};
  auto limits = [&]() {
    if (!walk.Reserved()) return;
    const Amounts& free = walk.free();
    const Amounts& spare = walk.spare();
    if (backfill_limit == kUnset) backfill_limit = walk.BackfillLimit();  // fixed once placed
    ends = {free.memory_bytes, free.cpu_millis, backfill_limit};
    fits = {std::min(free.memory_bytes, spare.memory_bytes),
            std::min(free.cpu_millis, spare.cpu_millis), internal::kInt64Max};
    a = backfill_limit >= 0 ? &ends : nullptr;
    c = spare.worker_slots >= 1 ? &fits : nullptr;
  };
  auto within = [&](uint32_t hw, const FitIndex::Limits* l) {
    return x.Within(hw, l, default_ns);
  };
  const bool stop_at_none = admissions || detail == Detail::kPrefixFree;
  const bool probing = probe && !x.fit.stale();
  bool stopped_early = false;
  // The limits shrink only with an admission (what is free and the spare
  // change only then): until the next one, a candidate the last probe found
  // settles the answer as long as it is not drawn.
  int64_t probed_at = -1;  // out.admitted_count at the last probe
  auto none_left = [&]() {
    if (!probing || !walk.Reserved()) return false;
    if (probed_at == out.admitted_count && undrawn.HoldsCandidate()) return false;
    probed_at = out.admitted_count;
    limits();
    stopped_early = undrawn.NoneLeft(a, c, within);
    return stopped_early;
  };
  while (!walk.Saturated() &&
         !(stop_at_none && walk.AdmitsNone(min_memory, min_cpu, min_duration)) &&
         !none_left()) {
    if (b < buffer.size()) {
      // The ranking drawn up to the reservation holder: passed over as below.
      const uint32_t hb = buffer[b++];
      if (stream.CanSkip()) {
        limits();
        if (!within(hb, a) && !within(hb, c)) {
          ++k;
          ++skipped_jobs_;
          continue;
        }
      }
      decide(hb);
    } else if (stream.CanSkip()) {
      limits();
      size_t passed = 0;
      const bool found = stream.NextFitting(a, c, h, passed);
      k += passed;  // their ranks: jobs_ahead stays each decision's rank
      skipped_jobs_ += static_cast<int64_t>(passed);
      if (!found) break;
      if (uint32_t holder; stream.TakeHolderDue(holder)) {
        // `h` is the job the reservation holder follows (KeepHolder),
        // returned whether or not it could be admitted.
        buffer.push_back(holder);
        if (!within(h, a) && !within(h, c)) {
          ++k;
          ++skipped_jobs_;
          continue;
        }
      }
      decide(h);
    } else if (stream.Next(h)) {
      decide(h);
    } else {
      break;
    }
  }
  if (drf_skip && !stream.CanSkip()) drawn_without_shares_ += stream.drawn();
  if (probe && !probing && drawn_without_fit_ < SIZE_MAX - stream.drawn())
    drawn_without_fit_ += stream.drawn();
  early_stops_ += stopped_early && out.decisions.size() < state_.queued.size();
  // The walk names the reservation by rank; with jobs passed over before it,
  // out.decisions holds it at a lower index.
  if (stream.CanSkip() && out.reserved_decision >= 0) {
    for (size_t i = 0; i < out.decisions.size(); ++i) {
      if (out.decisions[i].reserved) out.reserved_decision = static_cast<int64_t>(i);
    }
  }
  tail_ = Decision();
  tail_.verdict = Verdict::kWait;
  tail_.reason = Reason::kWaitingForWorkerSlot;
  tail_.dimension = Dimension::kWorkerSlots;
  walk.FillNow(JobRecord{}, Dimension::kWorkerSlots, tail_);
  decided_jobs_ += static_cast<int64_t>(out.decisions.size());
  if (whole) {
    auto rest = [&](uint32_t hr) {
      const Index::Entry& e = x.entries[hr];
      if (e.waiting > 0 || (!rejected.empty() && rejected_mark[hr] != 0)) return decide(hr);
      Decision& d = out.decisions.emplace_back(tail_);
      d.job = e.pos;
      d.jobs_ahead = static_cast<uint32_t>(k++ - rejected_ahead);
    };
    while (b < buffer.size()) rest(buffer[b++]);
    while (stream.Next(h)) rest(h);
  }
  // The rejected jobs the walk did not reach, after its decisions (by their
  // index in the queue), ranked beyond them.
  appended_rejections_ = 0;
  if (!rejected.empty()) {
    ++rejecting_plans_;
    std::sort(rejected.begin(), rejected.end(), [&x](uint32_t l, uint32_t r) {
      return x.entries[l].pos < x.entries[r].pos;
    });
    for (const uint32_t hr : rejected) {
      if (rejected_mark[hr] & kDecided) continue;
      Decision& d = out.decisions.emplace_back();
      d.job = x.entries[hr].pos;
      d.jobs_ahead = static_cast<uint32_t>(k - rejected_ahead);
      d.verdict = Verdict::kReject;
      d.reason = Reason::kDependencyFailed;
      d.problem = static_cast<Problem>(rejected_mark[hr]);
      ++appended_rejections_;
    }
  }
  last_whole_ =
      whole || (out.decisions.size() == state_.queued.size() && appended_rejections_ == 0);
  if (probe && last_whole_) {
    for (size_t i = 0; i < out.decisions.size(); ++i) {
      const Decision& d = out.decisions[i];
      if (d.verdict != Verdict::kReject && x.entries[x.handle_of[d.job]].waiting > 0)
        add_pending(i);
    }
  }
  walk.Finish();
  // The names are those of the last plan into `out` but for the few events
  // that add or retire one: compared, not copied again.
  auto names = [](const std::vector<absl::string_view>& from, std::vector<std::string>& to) {
    bool same = to.size() == from.size();
    for (size_t i = 0; same && i < from.size(); ++i) same = absl::string_view(to[i]) == from[i];
    if (same) return;
    to.clear();
    for (absl::string_view name : from) to.emplace_back(name);
  };
  names(p.workspaces, out.workspaces);
  names(p.pools, out.pools);
  names_out_ = &out;
  names_generation_ = x.workspaces.generation();
  return true;
}

}  // namespace berth::planner
