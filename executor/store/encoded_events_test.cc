#include "executor/store/encoded_events.h"

#include <string>

#include "gtest/gtest.h"

namespace berth {
namespace {

v1::Event MakeEvent(uint64_t revision, const std::string& job_id) {
  v1::Event e;
  e.set_revision(revision);
  e.set_type(v1::EVENT_TYPE_JOB_STATE_CHANGED);
  e.set_job_id(job_id);
  e.set_state(v1::JOB_STATE_QUEUED);
  return e;
}

TEST(EncodedEventsTest, EmptyHasNothing) {
  EncodedEvents events;
  EXPECT_TRUE(events.empty());
  EXPECT_EQ(events.size(), 0u);
  EXPECT_EQ(events.byte_size(), 0u);
}

TEST(EncodedEventsTest, KeepsEachEventsRevisionAndExactBytes) {
  EncodedEvents events;
  const v1::Event a = MakeEvent(7, "a");
  const v1::Event b = MakeEvent(8, "a-much-longer-job-id");
  events.Append(a);
  events.Append(b);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_FALSE(events.empty());
  EXPECT_EQ(events.revision(0), 7u);
  EXPECT_EQ(events.revision(1), 8u);
  EXPECT_EQ(events.bytes(0), a.SerializeAsString());
  EXPECT_EQ(events.bytes(1), b.SerializeAsString());
  EXPECT_EQ(events.byte_size(), a.ByteSizeLong() + b.ByteSizeLong());
  EXPECT_EQ(events.Decode(1).job_id(), "a-much-longer-job-id");
  EXPECT_EQ(events.Decode(0).SerializeAsString(), a.SerializeAsString());
}

TEST(EncodedEventsTest, AnEventWithOnlyARevisionKeepsIt) {
  EncodedEvents events;
  v1::Event e;
  e.set_revision(3);
  events.Append(e);
  events.Append(MakeEvent(4, "x"));
  EXPECT_EQ(events.Decode(0).revision(), 3u);
  EXPECT_EQ(events.Decode(1).revision(), 4u);
  EXPECT_EQ(events.Decode(1).job_id(), "x");
}

}  // namespace
}  // namespace berth
