#include "executor/usage/oom_requeue.h"

#include <limits>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kGiB = int64_t{1} << 30;

v1::Job JobAsking(int64_t memory, const std::string& pool = "") {
  v1::Job j;
  j.mutable_spec()->set_id("j");
  j.mutable_spec()->set_pool(pool);
  j.mutable_spec()->mutable_resources()->set_memory_bytes(memory);
  j.mutable_spec()->mutable_resources()->set_cpu_millis(1000);
  return j;
}

v1::Budgets Budget(int64_t memory) {
  v1::Budgets b;
  b.set_memory_bytes(memory);
  b.set_cpu_millis(8000);
  b.set_max_workers(8);
  return b;
}

void AddNode(v1::Budgets& b, const std::string& id, int64_t memory, const std::string& pool = "") {
  v1::Node* n = b.add_nodes();
  n->set_id(id);
  n->set_memory_bytes(memory);
  n->set_cpu_millis(4000);
  if (!pool.empty()) (*n->mutable_labels())["pool"] = pool;
}

TEST(OomRequeueTest, DoublesTheLimitRoundedUp) {
  absl::StatusOr<OomRaise> r = RaiseAfterOom(JobAsking(1 * kGiB), 1 * kGiB, Budget(64 * kGiB));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->memory_bytes, 2 * kGiB);
  EXPECT_TRUE(absl::StrContains(r->reason, "OOM-killed at its 1 GiB limit")) << r->reason;
  EXPECT_TRUE(absl::StrContains(r->reason, "requeued once with 2 GiB")) << r->reason;
  // A small job: 2 x 32 MiB rounds up to 256 MiB.
  r = RaiseAfterOom(JobAsking(32 * kMiB), 33 * kMiB, Budget(64 * kGiB));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->memory_bytes, 256 * kMiB);
}

TEST(OomRequeueTest, PeakAboveTwiceTheLimitWins) {
  // A peak is at most the limit for a cgroup, but a reservation raised by a
  // changed estimate may sit below an old peak: 1.25 x 3 GiB = 3.75 GiB -> 3.75 GiB.
  absl::StatusOr<OomRaise> r = RaiseAfterOom(JobAsking(1 * kGiB), 3 * kGiB, Budget(64 * kGiB));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->memory_bytes, 3840 * kMiB);
}

TEST(OomRequeueTest, BoundedByTheBudget) {
  absl::StatusOr<OomRaise> r = RaiseAfterOom(JobAsking(6 * kGiB), 6 * kGiB, Budget(10 * kGiB));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->memory_bytes, 10 * kGiB);
  EXPECT_TRUE(absl::StrContains(r->reason, "capped at the memory budget, 10 GiB")) << r->reason;
  // Already at the budget: cannot be raised.
  r = RaiseAfterOom(JobAsking(10 * kGiB), 10 * kGiB, Budget(10 * kGiB));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(r.status().message(), "cannot be raised")) << r.status();
}

TEST(OomRequeueTest, BoundedByTheLargestNodeOfItsPool) {
  v1::Budgets b = Budget(0);  // the nodes' sum: 52 GiB
  AddNode(b, "a", 8 * kGiB);
  AddNode(b, "b", 12 * kGiB);
  AddNode(b, "db", 32 * kGiB, "database");
  absl::StatusOr<OomRaise> r = RaiseAfterOom(JobAsking(8 * kGiB), 8 * kGiB, b);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->memory_bytes, 12 * kGiB);  // not the database node
  EXPECT_TRUE(absl::StrContains(r->reason, "largest node of pool 'default', 12 GiB")) << r->reason;
  r = RaiseAfterOom(JobAsking(8 * kGiB, "database"), 8 * kGiB, b);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->memory_bytes, 16 * kGiB);
  r = RaiseAfterOom(JobAsking(12 * kGiB), 12 * kGiB, b);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
}

// Without a memory budget the bound is the nodes' sum as the planner takes
// it: a node it ignores (no cpu) adds nothing, and a huge sum saturates.
TEST(OomRequeueTest, NodesSumIsThePlanners) {
  v1::Budgets b = Budget(0);
  AddNode(b, "a", 8 * kGiB);
  AddNode(b, "b", 8 * kGiB);
  AddNode(b, "ghost", 64 * kGiB, "database");
  b.mutable_nodes(2)->set_cpu_millis(0);
  absl::StatusOr<OomRaise> r = RaiseAfterOom(JobAsking(10 * kGiB, "database"), 10 * kGiB, b);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->memory_bytes, 16 * kGiB);  // not 20: the sum is 16, not 80
  EXPECT_TRUE(absl::StrContains(r->reason, "the memory budget, 16 GiB")) << r->reason;

  v1::Budgets huge = Budget(0);
  AddNode(huge, "x", std::numeric_limits<int64_t>::max() / 2 + 1);
  AddNode(huge, "y", std::numeric_limits<int64_t>::max() / 2 + 1);
  r = RaiseAfterOom(JobAsking(1 * kGiB), 1 * kGiB, huge);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->memory_bytes, 2 * kGiB);
}

TEST(OomRequeueTest, OnlyOnce) {
  v1::Job j = JobAsking(1 * kGiB);
  j.set_raised_memory_bytes(2 * kGiB);
  absl::StatusOr<OomRaise> r = RaiseAfterOom(j, 2 * kGiB, Budget(64 * kGiB));
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(r.status().message(), "already requeued once")) << r.status();
}

// The transition the reconciler makes for an OOM kill.
TransitionRequest OomFailure() {
  TransitionRequest t;
  t.new_state = v1::JOB_STATE_FAILED;
  t.failure_cause = v1::FAILURE_CAUSE_OOM_KILLED;
  t.message = "killed";
  return t;
}

TEST(OomRequeueTest, RequeueOomKilledRewritesTheTransition) {
  TransitionRequest t = OomFailure();
  EXPECT_TRUE(RequeueOomKilled(JobAsking(1 * kGiB), Budget(64 * kGiB), t));
  EXPECT_EQ(t.new_state, v1::JOB_STATE_QUEUED);
  EXPECT_FALSE(t.failure_cause.has_value());
  EXPECT_EQ(t.raised_memory_bytes, 2 * kGiB);
  ASSERT_TRUE(t.requeue_reason.has_value());
  EXPECT_EQ(*t.message, "requeued: " + *t.requeue_reason);

  TransitionRequest f = OomFailure();
  EXPECT_FALSE(RequeueOomKilled(JobAsking(1 * kGiB), Budget(1 * kGiB), f));
  EXPECT_EQ(f.new_state, v1::JOB_STATE_FAILED);
  EXPECT_FALSE(f.raised_memory_bytes.has_value());
  EXPECT_TRUE(absl::StartsWith(*f.message, "killed; not requeued: its limit of 1 GiB")) << *f.message;
}

}  // namespace
}  // namespace berth
