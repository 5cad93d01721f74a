// The Store contract suite's fixture, run against every implementation
// (RocksStore and the MemoryStore fake). Test-only; included by the
// store_*_test.cc files of the one parameterised suite.
#ifndef BERTH_EXECUTOR_STORE_STORE_CONTRACT_TEST_H_
#define BERTH_EXECUTOR_STORE_STORE_CONTRACT_TEST_H_

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "executor/store/memory_store.h"
#include "executor/store/rocks_store.h"
#include "executor/store/store.h"
#include "executor/store/store_test_util.h"
#include "gtest/gtest.h"

namespace berth::testing {

namespace v1 = ::berth::v1;

struct Backend {
  std::string name;
  std::function<std::unique_ptr<Store>(const RetentionOptions&)> make;
};

inline void PrintTo(const Backend& b, std::ostream* os) { *os << b.name; }

class StoreTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override { store_ = GetParam().make(retention_); }

  void Reset(const RetentionOptions& retention) {
    store_.reset();
    store_ = GetParam().make(retention);
  }

  // Applies `snapshot` and expects OK.
  SnapshotResult Apply(SnapshotRequest snapshot) {
    auto r = store_->ApplySnapshot(snapshot, T0());
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : SnapshotResult{};
  }

  void Admit(const std::string& id) {
    DecisionRequest d = testing::Decide(id, DecisionKind::kAdmit,
                                        v1::JOB_STATE_QUEUED, "fits", 1);
    auto r = store_->RecordDecisions({d}, T0());
    ASSERT_TRUE(r.ok()) << r.status();
  }

  void Run(const std::string& id) {
    Admit(id);
    TransitionRequest t;
    t.job_id = id;
    t.expected_state = v1::JOB_STATE_ADMITTED;
    t.new_state = v1::JOB_STATE_RUNNING;
    t.container_id = "c-" + id;
    auto r = store_->Transition(t, T0());
    ASSERT_TRUE(r.ok()) << r.status();
  }

  v1::JobState StateOf(const std::string& id) {
    auto j = store_->GetJob(id);
    EXPECT_TRUE(j.ok()) << j.status();
    return j.ok() ? j->job.state() : v1::JOB_STATE_UNSPECIFIED;
  }

  std::vector<v1::Event> AllEvents() {
    auto p = store_->ReadEvents(store_->OldestRevision() - 1, 10000);
    EXPECT_TRUE(p.ok()) << p.status();
    return p.ok() ? p->events : std::vector<v1::Event>{};
  }

  RetentionOptions retention_;
  std::unique_ptr<Store> store_;
};

inline std::vector<Backend> Backends() {
  return {
      {"Memory",
       [](const RetentionOptions& r) -> std::unique_ptr<Store> {
         return std::make_unique<MemoryStore>(r);
       }},
      {"Rocks",
       [](const RetentionOptions& r) -> std::unique_ptr<Store> {
         RocksStoreOptions o;
         o.retention = r;
         auto s = RocksStore::Open(testing::TempDir("store_test"), o);
         EXPECT_TRUE(s.ok()) << s.status();
         return s.ok() ? std::move(*s) : nullptr;
       }},
  };
}

}  // namespace berth::testing

#endif  // BERTH_EXECUTOR_STORE_STORE_CONTRACT_TEST_H_
