// The IncrementalPlanner against the whole-queue Plan(): after every event of
// generated event sequences (arrivals, admissions, ends, cancels, failures,
// pauses, maintenance, budget changes, time passing), the incremental plan
// must equal Plan() on the same state, field by field; the prefix-only plans
// must agree with it on the prefix and plan every other job as the tail. A
// tenth of the sequences drain a queue handed over at once, as a forecast
// does (jobs only leave), checking the admissions-only plan.
#include "planner/plan/incremental.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "planner/plan/incremental_compare_testing.h"
#include "planner/plan/plan.h"
#include "planner/ranking/ranking.h"

namespace berth::planner {
namespace {

constexpr int64_t kGi = int64_t{1} << 30;

using testing::Compare;
using testing::CompareAdmissions;
using testing::ComparePrefix;
using testing::ComparePrefixFree;

class Sequence {
 public:
  // A third of the sequences pass over jobs in bulk at once, a third after
  // one draw per workspace, a third as the planner does by default (which,
  // on queues this small, draws most of a level one by one).
  explicit Sequence(uint64_t seed) : rng_(seed) {
    ip_.set_draws_before_jump(seed % 3 == 0 ? 0 : seed % 3 == 1 ? 1 : 8);
  }

  // Runs `events` events; returns "" or the first disagreement.
  std::string Run(int events) {
    // Wide: worker slots stay free while memory or cpu bind, and most jobs
    // are larger than what is left (the walk passes over them under fifo).
    wide_ = Chance(0.4);
    budgets_.memory_bytes = (wide_ ? Pick(8, 32) : Pick(4, 16)) * kGi;
    budgets_.cpu_millis = (wide_ ? Pick(4, 16) : Pick(2, 8)) * 1000;
    budgets_.max_workers = static_cast<int32_t>(wide_ ? Pick(8, 24) : Pick(1, 6));
    budgets_.pool_max_workers["db"] = static_cast<int32_t>(Pick(0, 2));
    if (Chance(0.4)) budgets_.workspace_max_workers = static_cast<int32_t>(Pick(1, wide_ ? 8 : 3));
    policy_.ranking = Chance(wide_ ? 0.6 : 0.8) ? &DrfRanking() : &FifoRanking();
    drf_ = policy_.ranking == &DrfRanking();
    policy_.backfill = Chance(0.85);
    // Mostly without aging when wide: the drf walk's jumps over whole runs.
    policy_.aging_interval =
        Chance(wide_ ? 0.3 : 0.7) ? absl::Minutes(Pick(5, 60)) : absl::ZeroDuration();
    policy_.aging_top_memory = Chance(0.5) ? absl::Hours(Pick(0, 3)) : absl::ZeroDuration();
    policy_.default_duration = absl::Minutes(Pick(10, 90));
    // Now and then every job waits since its created_at (no queued_at): a
    // level's runs are then in aging order too, and the levels below the
    // ceiling age whole.
    plain_ = Chance(0.3);
    now_ = absl::FromUnixSeconds(1'800'000'000);
    // Now and then a forecast's pattern: a queue handed over at once, then
    // only plans, ends and time (jobs leave, none arrives) for long enough
    // that the share index's aged orders fill with dead slots and are
    // rebuilt alone (IncrementalPlanner::aged_rebuilds).
    drain_ = Chance(0.1);
    if (drain_) {
      policy_.ranking = &DrfRanking();
      drf_ = true;
      policy_.aging_interval = absl::Minutes(Pick(5, 20));
      budgets_.max_workers = static_cast<int32_t>(Pick(8, 24));
      std::vector<QueuedJob> batch;
      const int64_t n = Pick(250, 350);
      for (int64_t i = 0; i < n; ++i) batch.push_back(NewArrival());
      std::vector<const QueuedJob*> jobs;
      for (const QueuedJob& q : batch) jobs.push_back(&q);
      ip_.EnqueueAll(jobs);
      events *= 6;
    }
    for (int e = 0; e < events; ++e) {
      Event();
      if (std::string diff = Check(); !diff.empty()) return absl::StrCat("event ", e, ": ", diff);
    }
    return "";
  }

  int64_t incremental() const { return ip_.incremental_plans(); }
  int64_t skipped() const { return ip_.skipped_jobs(); }
  int64_t whole() const { return ip_.whole_plans(); }
  bool drf() const { return drf_; }
  int64_t free_tails() const { return free_tails_; }
  int64_t early_stops() const { return ip_.early_stops(); }
  int64_t rejecting() const { return ip_.rejecting_plans(); }
  int64_t aged_rebuilds() const { return ip_.aged_rebuilds(); }

 private:
  int64_t Pick(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  bool Chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }

  void Event() {
    const double r = std::uniform_real_distribution<double>(0, 1)(rng_);
    if (drain_) {
      if (r < 0.4) {
        PlanAndApply();
      } else if (r < 0.9) {
        End();
      } else if (r < 0.97) {
        now_ += absl::Minutes(Pick(1, 45));
      } else if (!ip_.state().queued.empty()) {
        ip_.Dequeue(static_cast<size_t>(Pick(0, static_cast<int64_t>(ip_.state().queued.size()) - 1)));
      }
      now_ += absl::Seconds(Pick(0, 300));
      return;
    }
    if (r < 0.40) {
      Arrive();
    } else if (r < 0.65) {
      PlanAndApply();
    } else if (r < 0.80) {
      End();
    } else if (r < 0.86) {
      now_ += absl::Minutes(Pick(1, 45));
    } else if (r < 0.90) {
      if (!ip_.state().queued.empty())
        ip_.Dequeue(static_cast<size_t>(Pick(0, static_cast<int64_t>(ip_.state().queued.size()) - 1)));
    } else if (r < 0.92) {
      State c = ip_.state();
      c.paused = Chance(0.1);
      c.pools_in_maintenance.clear();
      if (Chance(0.1)) c.pools_in_maintenance.insert("db");
      ip_.SetControls(c);
    } else if (r < 0.93) {
      budgets_.max_workers = static_cast<int32_t>(wide_ ? Pick(8, 24) : Pick(1, 6));
      budgets_.memory_bytes = (wide_ ? Pick(8, 32) : Pick(4, 16)) * kGi;
    } else if (r < 0.95 && !ids_.empty()) {
      ip_.ForgetFinished(ids_[static_cast<size_t>(Pick(0, static_cast<int64_t>(ids_.size()) - 1))]);
    } else if (Chance(0.5)) {
      const int64_t burst = wide_ ? Pick(3, 12) : 3;
      for (int64_t i = 0; i < burst; ++i) Arrive();
    } else {
      // Arrivals joining at once (as a forecast's first plan hands them
      // over), dependencies within the batch included.
      std::vector<QueuedJob> batch;
      const int n = static_cast<int>(Pick(1, 12));
      for (int i = 0; i < n; ++i) batch.push_back(NewArrival());
      if (Chance(0.5)) {
        std::vector<const QueuedJob*> jobs;
        for (const QueuedJob& q : batch) jobs.push_back(&q);
        ip_.EnqueueAll(jobs);
      } else {
        ip_.EnqueueAll(std::move(batch));  // taken, in any order
      }
    }
    now_ += absl::Seconds(Pick(0, 300));
  }

  void Arrive() { ip_.Enqueue(NewArrival()); }

  QueuedJob NewArrival() {
    QueuedJob q;
    q.id = Chance(0.005) && !ids_.empty()
               ? ids_[static_cast<size_t>(Pick(0, static_cast<int64_t>(ids_.size()) - 1))]
               : absl::StrCat("j", next_++);
    q.workspace = absl::StrCat("ws", Pick(0, 4));
    q.pool = Chance(0.2) ? "db" : (Chance(0.005) ? "nowhere" : kDefaultPool);
    // Three levels when draining, aging fast: the middle one's jobs, aged
    // to the top level (an aged band there), leave first, so its aged
    // order fills with dead slots while the rest of the index has few.
    q.priority = static_cast<int32_t>(drain_ ? (Chance(0.1) ? 2 : Chance(0.5) ? 1 : 0)
                                             : Pick(0, 3));
    q.resources.memory_bytes = Pick(1, 8) * kGi / 2;
    q.resources.cpu_millis = Pick(1, 8) * 250;
    if (wide_) {  // mixed: large, small, large in one dimension only
      const int64_t kind = Pick(0, 9);
      q.resources.memory_bytes = kind < 6 ? Pick(2, 12) * kGi / 2 : Pick(1, 4) * kGi / 8;
      q.resources.cpu_millis = kind < 4 || kind == 9 ? Pick(4, 16) * 250 : Pick(1, 3) * 100;
      // Now and then a job too small for its DRF weight to be a whole
      // number of the share index's units (it must not be used then).
      if (Chance(0.003)) q.resources.memory_bytes = Pick(1, 999);
    }
    if (Chance(0.01)) q.resources.memory_bytes = 64 * kGi;
    // Shared creation times (ties the ranking breaks by id) and queue times
    // apart from them (aging counts from queued_at; fair turns and equal
    // shares go by it): arrivals of one event are queued together.
    q.created_at = Chance(0.01)   ? absl::UnixEpoch()
                   : Chance(0.3) ? absl::FromUnixSeconds(1'800'000'000) - absl::Minutes(10 * Pick(0, 3))
                                 : now_ - absl::Minutes(Pick(0, 200));
    if (!plain_ && Chance(0.7)) q.queued_at = Chance(0.7) ? now_ : now_ - absl::Minutes(Pick(0, 120));
    if (Chance(0.8)) q.expected_duration = absl::Minutes(Pick(1, 120));
    if (Chance(0.25) && !ids_.empty()) {
      const int deps = static_cast<int>(Pick(1, 2));
      for (int i = 0; i < deps; ++i) {
        const size_t back = static_cast<size_t>(Pick(0, std::min<int64_t>(8, static_cast<int64_t>(ids_.size()) - 1)));
        q.depends_on.push_back(ids_[ids_.size() - 1 - back]);
      }
      if (Chance(0.02)) q.depends_on.push_back("unknown-id");
      if (Chance(0.01)) q.depends_on.push_back(q.id);
    }
    ids_.push_back(q.id);
    return q;
  }

  void End() {
    if (ip_.state().running.empty()) return;
    const RunningJob& r =
        ip_.state().running[static_cast<size_t>(Pick(0, static_cast<int64_t>(ip_.state().running.size()) - 1))];
    const std::string id = r.id;
    ASSERT_TRUE(ip_.RemoveRunning(id));
    ip_.SetFinished(id, Chance(0.1) ? DependencyOutcome::kFailed : DependencyOutcome::kSucceeded);
  }

  void PlanAndApply() {
    PlanResult plan;
    ip_.Plan(budgets_, policy_, now_, IncrementalPlanner::Detail::kWhole, plan);
    // Carry() may skip looking for workspaces to forget (when it knows the
    // names are those it last carried): it must remember the same turns.
    State want = ip_.state();
    CarryReservation(want, plan, want);
    ip_.Carry(plan);
    if (want.workspace_turns != ip_.state().workspace_turns && carry_diff_.empty())
      carry_diff_ = "Carry() remembers other turns than CarryReservation()";
    std::vector<uint32_t> leave;
    for (const Decision& d : plan.decisions) {
      const QueuedJob& q = ip_.state().queued[d.job];
      if (d.verdict == Verdict::kAdmit) {
        RunningJob r;
        r.id = q.id;
        r.workspace = q.workspace;
        r.pool = q.pool;
        r.resources = q.resources;
        r.started_at = now_;
        r.expected_duration = q.expected_duration;
        started_.push_back(std::move(r));
        leave.push_back(d.job);
      } else if (d.verdict == Verdict::kReject) {
        failed_.push_back(q.id);
        leave.push_back(d.job);
      }
    }
    std::sort(leave.rbegin(), leave.rend());
    for (uint32_t i : leave) ip_.Dequeue(i);
    for (RunningJob& r : started_) ip_.AddRunning(std::move(r));
    started_.clear();
    for (const std::string& id : failed_) ip_.SetFinished(id, DependencyOutcome::kFailed);
    failed_.clear();
  }

  std::string Check() {
    if (!carry_diff_.empty()) return carry_diff_;
    const PlanResult want = Plan(ip_.state(), budgets_, policy_, now_);
    PlanResult got;
    if (drain_) {  // what the share index serves (and a forecast asks for)
      ip_.Plan(budgets_, policy_, now_, IncrementalPlanner::Detail::kAdmissions, got);
      if (std::string d = CompareAdmissions(want, got, ip_); !d.empty())
        return absl::StrCat("admissions (draining): ", d);
      return "";
    }
    ip_.Plan(budgets_, policy_, now_, IncrementalPlanner::Detail::kWhole, got);
    if (std::string d = Compare(want, got); !d.empty()) return absl::StrCat("whole: ", d);
    ip_.Plan(budgets_, policy_, now_, IncrementalPlanner::Detail::kPrefix, got);
    if (std::string d = ComparePrefix(want, got, ip_); !d.empty())
      return absl::StrCat("prefix: ", d);
    ip_.Plan(budgets_, policy_, now_, IncrementalPlanner::Detail::kPrefixFree, got);
    if (std::string d = ComparePrefixFree(want, got, ip_, free_tails_); !d.empty())
      return absl::StrCat("prefix free: ", d);
    ip_.Plan(budgets_, policy_, now_, IncrementalPlanner::Detail::kAdmissions, got);
    if (std::string d = CompareAdmissions(want, got, ip_); !d.empty())
      return absl::StrCat("admissions: ", d);
    return "";
  }

  std::mt19937_64 rng_;
  IncrementalPlanner ip_;
  Budgets budgets_;
  Policy policy_;
  absl::Time now_;
  int64_t next_ = 0;
  std::vector<std::string> ids_;
  std::vector<RunningJob> started_;
  std::vector<std::string> failed_;
  bool wide_ = false;
  bool plain_ = false;
  bool drf_ = false;
  bool drain_ = false;
  int64_t free_tails_ = 0;
  std::string carry_diff_;
};

TEST(IncrementalPlannerTest, EqualsThePlanAfterEveryEventOfGeneratedSequences) {
  // BERTH_INCREMENTAL_SEED replays a failure (the seed printed).
  const char* seed_env = std::getenv("BERTH_INCREMENTAL_SEED");
  const uint64_t base =
      seed_env != nullptr ? std::strtoull(seed_env, nullptr, 10) : std::random_device{}();
  const char* env = std::getenv("BERTH_INCREMENTAL_SEQUENCES");
  const uint64_t sequences = env != nullptr ? std::strtoull(env, nullptr, 10) : 2000;
  int64_t incremental = 0, whole = 0, skipped = 0, skipped_drf = 0, free_tails = 0;
  int64_t early_stops = 0, rejecting = 0, aged_rebuilds = 0;
  for (uint64_t s = 0; s < sequences; ++s) {
    const uint64_t seed = base + s;
    Sequence seq(seed);
    const std::string diff = seq.Run(60);
    ASSERT_EQ(diff, "") << "seed " << seed << (seq.drf() ? " (drf)" : " (fifo)");
    incremental += seq.incremental();
    whole += seq.whole();
    skipped += seq.skipped();
    if (seq.drf()) skipped_drf += seq.skipped();
    free_tails += seq.free_tails();
    early_stops += seq.early_stops();
    rejecting += seq.rejecting();
    aged_rebuilds += seq.aged_rebuilds();
  }
  // The comparison means something only if most plans were incremental, and
  // if the admissions-only walk passed over jobs, under "drf" too.
  EXPECT_GT(incremental, 2 * whole) << "incremental " << incremental << " whole " << whole;
  if (sequences >= 200) {
    EXPECT_GT(skipped - skipped_drf, 1000) << "jobs passed over under fifo " << skipped - skipped_drf;
    EXPECT_GT(skipped_drf, 1000) << "jobs passed over under drf " << skipped_drf;
    EXPECT_GT(free_tails, 1000) << "tail jobs of kPrefixFree plans with their own reason";
    EXPECT_GT(early_stops, 200) << "kPrefixFree walks stopped with no undrawn job admissible";
    EXPECT_GT(rejecting, 200) << "incremental plans rejecting jobs whose dependency failed";
    EXPECT_GT(aged_rebuilds, 5) << "aged orders rebuilt alone as jobs left";
  }
  std::printf("%lld plans incremental, %lld whole, %lld jobs passed over (%lld under drf), "
              "%lld free tails, %lld early stops, %lld plans rejecting, %lld aged orders "
              "rebuilt\n",
              static_cast<long long>(incremental), static_cast<long long>(whole),
              static_cast<long long>(skipped), static_cast<long long>(skipped_drf),
              static_cast<long long>(free_tails), static_cast<long long>(early_stops),
              static_cast<long long>(rejecting), static_cast<long long>(aged_rebuilds));
}

TEST(IncrementalPlannerTest, ASaturatedPlanDecidesOnlyItsPrefix) {
  IncrementalPlanner ip;
  for (int i = 0; i < 1000; ++i) {
    QueuedJob q;
    q.id = absl::StrCat("j", i);
    q.workspace = absl::StrCat("ws", i % 7);
    q.priority = i % 3;
    q.resources = {1000, kGi};
    q.created_at = absl::FromUnixSeconds(1'800'000'000 + i);
    ip.Enqueue(q);
  }
  Budgets b;
  b.memory_bytes = 64 * kGi;
  b.cpu_millis = 64000;
  b.max_workers = 4;
  PlanResult plan;
  ip.Plan(b, Policy(), absl::FromUnixSeconds(1'800'001'000), IncrementalPlanner::Detail::kPrefix, plan);
  EXPECT_FALSE(ip.last_was_whole_queue());
  EXPECT_EQ(plan.admitted_count, 4);
  EXPECT_EQ(plan.decisions.size(), 5u);  // four admitted, then the head reserved
  EXPECT_EQ(plan.reserved_decision, 4);
  EXPECT_EQ(ip.tail_decision().reason, Reason::kWaitingForWorkerSlot);
}

// The walk stops once the only job it could still admit is one it drew
// (and admitted; or, `capped`, kept waiting for its workspace's slot: the
// walk must probe again once it draws the job it found, admission or not):
// the long jobs behind it fit what is free but neither end before the
// reservation nor fit its spare, so they are left undecided, each waiting
// for priority as Plan() says.
TEST(IncrementalPlannerTest, APrefixFreeWalkStopsWhenOnlyDrawnJobsFit) {
  for (const bool capped : {false, true})
  for (const RankingPolicy* ranking : {&DrfRanking(), &FifoRanking()}) {
    IncrementalPlanner ip;
    const absl::Time now = absl::FromUnixSeconds(1'800'001'000);
    RunningJob r;
    r.id = "running";
    r.workspace = "ws0";
    r.resources = {8000, 48 * kGi};
    r.started_at = now;
    r.expected_duration = absl::Hours(1);
    ip.AddRunning(r);
    for (int i = 0; i < 500; ++i) {
      QueuedJob q;
      q.id = absl::StrCat("j", i);
      q.workspace = absl::StrCat("ws", i % 5);
      q.created_at = absl::FromUnixSeconds(1'800'000'000 + i);
      if (i == 0) {  // the head: reserved at the running job's end
        q.priority = 2;
        q.resources = {1000, 60 * kGi};
        q.expected_duration = absl::Hours(1);
      } else if (i == 1) {  // backfilled: ends before the reservation
        q.priority = 1;
        q.resources = {1000, kGi};
        q.expected_duration = absl::Minutes(10);
        if (capped) q.workspace = "ws0";  // the running job's
      } else {
        q.resources = {1000, 8 * kGi};
        q.expected_duration = absl::Hours(2);
      }
      ip.Enqueue(q);
    }
    Budgets b;
    b.memory_bytes = 64 * kGi;
    b.cpu_millis = 16000;
    b.max_workers = 10;
    if (capped) b.workspace_max_workers = 1;
    Policy policy;
    policy.ranking = ranking;
    PlanResult plan;
    ip.Plan(b, policy, now, IncrementalPlanner::Detail::kPrefixFree, plan);
    const PlanResult want = Plan(ip.state(), b, policy, now);
    EXPECT_FALSE(ip.last_was_whole_queue());
    EXPECT_EQ(ip.early_stops(), 1) << "capped " << capped;
    ASSERT_EQ(plan.decisions.size(), 2u) << "capped " << capped;
    EXPECT_TRUE(plan.decisions[0].reserved);
    EXPECT_EQ(plan.decisions[1].verdict, capped ? Verdict::kWait : Verdict::kAdmit);
    if (capped) {
      EXPECT_EQ(plan.decisions[1].reason, Reason::kWaitingForWorkspaceCap);
    }
    EXPECT_EQ(want.admitted_count, capped ? 0 : 1);
    for (const Decision& d : want.decisions) {
      // (With the cap, those of the running job's workspace wait for its slot.)
      if (d.job < 2 || (capped && ip.state().queued[d.job].workspace == "ws0")) continue;
      EXPECT_EQ(d.reason, Reason::kWaitingForPriority);
      EXPECT_EQ(IncrementalPlanner::TailReason(plan.free_after, Amounts::kUnlimited,
                                               Amounts::kUnlimited, 8 * kGi, 1000),
                Reason::kWaitingForPriority);
    }
  }
}

}  // namespace
}  // namespace berth::planner

