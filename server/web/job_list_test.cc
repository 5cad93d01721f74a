// SelectJobs against a plain model: for seeded random stores (jobs in every
// state, random workspaces, pools, actions, priorities, creation times) and
// random filters, every page together is exactly the model's matching jobs
// in the model's order, and no page overlaps another. The seed is printed
// on failure.
#include "server/web/job_list.h"

#include <algorithm>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "executor/store/memory_store.h"
#include "gtest/gtest.h"
#include "planner/base/simulated_clock.h"

namespace berth::web {
namespace {

struct Model {
  std::string id, workspace, pool, action;
  int priority = 0;
  int64_t created = 0;
  v1::JobState state = v1::JOB_STATE_QUEUED;
};

bool Terminal(v1::JobState s) {
  return s == v1::JOB_STATE_SUCCEEDED || s == v1::JOB_STATE_FAILED ||
         s == v1::JOB_STATE_CANCELLED || s == v1::JOB_STATE_REJECTED;
}

TEST(SelectJobs, MatchesAModelForRandomStoresAndFilters) {
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    std::mt19937 rng(seed);
    auto pick = [&rng](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
    SimulatedClock clock;
    MemoryStore store;
    SnapshotRequest snap;
    snap.generation = 1;
    std::vector<Model> model;
    const int n = 40 + pick(80);
    for (int i = 0; i < n; ++i) {
      Model m;
      m.id = absl::StrCat(pick(2) ? "a" : "b", pick(3), "-", i);
      m.workspace = absl::StrCat("ws", pick(3));
      m.pool = pick(3) == 0 ? "" : absl::StrCat("p", pick(2));
      m.action = absl::StrCat("act", pick(3));
      m.priority = pick(3);
      m.created = 1'800'000'000 + pick(20);  // ties on purpose
      v1::JobSpec j;
      j.set_id(m.id);
      j.set_workspace(m.workspace);
      j.set_pool(m.pool);
      j.set_action(m.action);
      j.set_image("berth-test/busybox:1");
      j.add_argv("true");
      j.set_priority(m.priority);
      j.mutable_resources()->set_memory_bytes(int64_t{1} << 20);
      j.mutable_resources()->set_cpu_millis(100);
      j.mutable_created_at()->set_seconds(m.created);
      snap.jobs.push_back(j);
      model.push_back(m);
    }
    ASSERT_TRUE(store.ApplySnapshot(snap, clock.Now()).ok());
    for (Model& m : model) {
      const int fate = pick(4);  // stays queued, runs, succeeds, fails
      if (fate == 0) continue;
      clock.Advance(absl::Seconds(1 + pick(5)));
      DecisionRequest d;
      d.job_id = m.id;
      d.kind = DecisionKind::kAdmit;
      d.expected_state = v1::JOB_STATE_QUEUED;
      d.reason = "test";
      ASSERT_TRUE(store.RecordDecisions({d}, clock.Now()).ok());
      TransitionRequest t;
      t.job_id = m.id;
      t.expected_state = v1::JOB_STATE_ADMITTED;
      t.new_state = v1::JOB_STATE_RUNNING;
      t.container_id = "c";
      ASSERT_TRUE(store.Transition(t, clock.Now()).ok());
      m.state = v1::JOB_STATE_RUNNING;
      if (fate == 1) continue;
      clock.Advance(absl::Seconds(1 + pick(5)));
      t.expected_state = v1::JOB_STATE_RUNNING;
      t.new_state = fate == 2 ? v1::JOB_STATE_SUCCEEDED : v1::JOB_STATE_FAILED;
      if (fate == 3) t.failure_cause = v1::FAILURE_CAUSE_NONZERO_EXIT;
      t.exit_code = fate == 2 ? 0 : 3;
      ASSERT_TRUE(store.Transition(t, clock.Now()).ok());
      m.state = t.new_state;
    }
    absl::StatusOr<StoredJob> probe = store.GetJob(model[0].id);
    ASSERT_TRUE(probe.ok());
    EXPECT_EQ(ActionOf(StoredRecord(*probe)), model[0].action);
    for (const auto& m : model) {
      absl::StatusOr<StoredJob> job = store.GetJob(m.id);
      ASSERT_TRUE(job.ok());
      const StoredRecord record(*job);
      EXPECT_TRUE(ActionIs(record, m.action)) << m.id;
      EXPECT_FALSE(ActionIs(record, absl::StrCat(m.action, "x"))) << m.id;
      if (!m.action.empty()) {
        EXPECT_FALSE(ActionIs(record, m.action.substr(0, m.action.size() - 1))) << m.id;
      }
    }

    for (int q = 0; q < 30; ++q) {
      JobListFilter f;
      if (pick(3) == 0) {
        f.state = static_cast<v1::JobState>(
            std::vector<int>{1, 3, 4, 5}[static_cast<size_t>(pick(4))]);
      }
      if (pick(3) == 0) f.workspace = absl::StrCat("ws", pick(3));
      if (pick(4) == 0) f.pool = pick(2) ? "default" : "p1";
      if (pick(3) == 0) f.action = absl::StrCat("act", pick(3));
      if (pick(4) == 0) f.priority = pick(3);
      if (pick(3) == 0) f.id_prefix = pick(2) ? "a" : absl::StrCat("b", pick(3));
      f.sort = static_cast<JobSort>(pick(6));
      SCOPED_TRACE(absl::StrCat("query ", q, ": ", JobListQuery(f, false)));

      std::vector<const Model*> want;
      for (const Model& m : model) {
        if (f.state && m.state != *f.state) continue;
        if (!f.workspace.empty() && m.workspace != f.workspace) continue;
        if (f.pool == "default" && !m.pool.empty()) continue;
        if (!f.pool.empty() && f.pool != "default" && m.pool != f.pool) continue;
        if (!f.action.empty() && m.action != f.action) continue;
        if (f.priority && m.priority != *f.priority) continue;
        if (!absl::StartsWith(m.id, f.id_prefix)) continue;
        want.push_back(&m);
      }
      // The model's order for the sorts it can decide (creation, priority,
      // state, id); for kFinished only the set and the terminal-first rule.
      auto key = [&](const Model* m) -> int64_t {
        switch (f.sort) {
          case JobSort::kNewest: return -m->created;
          case JobSort::kOldest: return m->created;
          case JobSort::kPriority: return -m->priority;
          case JobSort::kState: return m->state;
          default: return 0;
        }
      };
      std::sort(want.begin(), want.end(), [&](const Model* a, const Model* b) {
        if (key(a) != key(b)) return key(a) < key(b);
        return a->id < b->id;
      });

      const int page_size = 1 + pick(15);
      std::vector<JobListRow> got;
      int64_t matching = -1;
      for (f.page = 1;; ++f.page) {
        JobListData d = SelectJobs(store, f, page_size);
        EXPECT_EQ(d.kept, n);
        if (matching < 0) matching = d.matching;
        EXPECT_EQ(d.matching, matching);
        if (d.rows.empty()) break;
        EXPECT_LE(static_cast<int>(d.rows.size()), page_size);
        for (JobListRow& r : d.rows) got.push_back(std::move(r));
      }
      ASSERT_EQ(matching, static_cast<int64_t>(want.size()));
      ASSERT_EQ(got.size(), want.size());
      // The export's selection: the pages' rows in the pages' order, cut
      // at its limit, with the same counts.
      {
        JobListData counts;
        const size_t limit =
            pick(2) ? std::numeric_limits<size_t>::max() : static_cast<size_t>(pick(n));
        const std::vector<JobRecord> all = SelectAllJobs(store, f, limit, &counts);
        EXPECT_EQ(counts.kept, n);
        EXPECT_EQ(counts.matching, matching);
        ASSERT_EQ(all.size(), std::min(limit, got.size()));
        for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i]->id(), got[i].id) << i;
      }
      if (f.sort == JobSort::kFinished) {
        bool seen_unfinished = false;
        for (size_t i = 0; i < got.size(); ++i) {
          if (!Terminal(got[i].state)) seen_unfinished = true;
          EXPECT_FALSE(seen_unfinished && Terminal(got[i].state)) << got[i].id;
          if (i > 0 && Terminal(got[i].state)) {
            EXPECT_GE(*got[i - 1].finished_at, *got[i].finished_at);
          }
        }
        std::vector<std::string> a, b;
        for (const JobListRow& r : got) a.push_back(r.id);
        for (const Model* m : want) b.push_back(m->id);
        std::sort(a.begin(), a.end());
        std::sort(b.begin(), b.end());
        EXPECT_EQ(a, b);
      } else {
        for (size_t i = 0; i < got.size(); ++i) {
          EXPECT_EQ(got[i].id, want[i]->id) << "row " << i;
          EXPECT_EQ(got[i].action, want[i]->action);
          EXPECT_EQ(got[i].state, want[i]->state);
        }
      }
    }
  }
}

TEST(SelectWorkspaces, CountsByStateAndMedianWaits) {
  SimulatedClock clock;
  MemoryStore store;
  SnapshotRequest snap;
  snap.generation = 1;
  for (int i = 0; i < 3; ++i) {
    v1::JobSpec j;
    j.set_id(absl::StrCat("j", i));
    j.set_workspace("w");
    j.set_image("berth-test/busybox:1");
    j.add_argv("true");
    j.mutable_resources()->set_memory_bytes(int64_t{1} << 30);
    j.mutable_resources()->set_cpu_millis(500);
    j.mutable_created_at()->set_seconds(absl::ToUnixSeconds(clock.Now()));
    snap.jobs.push_back(j);
  }
  ASSERT_TRUE(store.ApplySnapshot(snap, clock.Now()).ok());
  clock.Advance(absl::Minutes(10));
  DecisionRequest d;
  d.job_id = "j0";
  d.kind = DecisionKind::kAdmit;
  d.expected_state = v1::JOB_STATE_QUEUED;
  d.reason = "test";
  ASSERT_TRUE(store.RecordDecisions({d}, clock.Now()).ok());
  clock.Advance(absl::Minutes(5));
  std::vector<WorkspaceStats> w = SelectWorkspaces(store, clock.Now());
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].workspace, "w");
  EXPECT_EQ(w[0].queued, 2);
  EXPECT_EQ(w[0].running, 1);
  EXPECT_EQ(w[0].memory_bytes, int64_t{1} << 30);
  EXPECT_EQ(w[0].cpu_millis, 500);
  ASSERT_TRUE(w[0].median_wait.has_value());
  EXPECT_EQ(*w[0].median_wait, absl::Minutes(10));
  ASSERT_TRUE(w[0].median_queued_for.has_value());
  EXPECT_EQ(*w[0].median_queued_for, absl::Minutes(15));
}

}  // namespace
}  // namespace berth::web
