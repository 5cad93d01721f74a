#include "executor/reconcile/requeue_why.h"

#include <string>

#include "executor/store/memory_store.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

StoredJob Job(const std::string& node, StopIntent intent) {
  StoredJob job;
  job.job.mutable_spec()->set_id("j");
  job.job.set_node(node);
  job.stop_intent = intent;
  return job;
}

// A lost node that comes back may be given the job again, so the message
// names what happened and not where it runs next.
TEST(RequeueWhyTest, ALostAttemptSaysItGoesBackToTheQueueNotWhere) {
  MemoryStore store;
  ContainerObservation obs;
  obs.lost = true;
  obs.error = "node vm (n1) lost at 12:00 came back at 12:01";
  RequeueWhy why = WhyRequeued(store, Job("n1", StopIntent::kNone), &obs, {}, 137);
  EXPECT_EQ(why.cause, v1::REQUEUE_CAUSE_NODE_LOST);
  EXPECT_EQ(why.message,
            "requeued: the engine lost it (node vm (n1) lost at 12:00 came back at 12:01); "
            "it goes back to the queue");
  obs.error.clear();
  why = WhyRequeued(store, Job("n1", StopIntent::kNone), &obs, {}, 137);
  EXPECT_EQ(why.message, "requeued: the engine lost it (its node went away); it goes back "
                         "to the queue");
}

// Without a readable decision the drained node is named, and the next node
// is only described (a drain lifted before planning puts it back there).
TEST(RequeueWhyTest, ADrainedNodeWithoutADecisionNamesTheNodeNotTheNextOne) {
  MemoryStore store;
  RequeueWhy why = WhyRequeued(store, Job("w1", StopIntent::kRequeue), nullptr, {"w1"}, 0);
  EXPECT_EQ(why.cause, v1::REQUEUE_CAUSE_NODE_DRAINED);
  EXPECT_EQ(why.message,
            "requeued: its node w1 is drained; it goes back to the queue for a node that "
            "accepts jobs");
}

}  // namespace
}  // namespace berth
