#include "planner/starts/start_model.h"

#include <cstddef>
#include <vector>

#include "gtest/gtest.h"

namespace berth::planner {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1'000'000);

struct Report {
  size_t token;
  absl::Time requested;
  absl::Time at;
  absl::Duration run;
  bool operator==(const Report& o) const {
    return token == o.token && requested == o.requested && at == o.at && run == o.run;
  }
};

class StartModelTest : public ::testing::Test {
 protected:
  StartModel Make(StartModel::Params p, StartModel::Delay delay = StartModel::Delay()) {
    return StartModel(
        p,
        [this](size_t token, absl::Time requested, absl::Time at, absl::Duration run) {
          reports_.push_back({token, requested, at, run});
        },
        std::move(delay));
  }
  // Serves every event up to `until`.
  void RunUntil(StartModel& m, absl::Time until) {
    for (absl::Time e = m.NextEvent(); e <= until; e = m.NextEvent()) m.Advance(e);
  }
  std::vector<Report> reports_;
};

TEST_F(StartModelTest, WithoutContentionSlotsServeInRequestOrder) {
  StartModel m = Make({absl::Seconds(10), absl::ZeroDuration(), 2});
  for (size_t k = 0; k < 3; ++k) m.Request(k, kT0, absl::Minutes(k + 1));
  EXPECT_EQ(m.NextEvent(), absl::InfiniteFuture());
  const std::vector<Report> want = {
      {0, kT0, kT0 + absl::Seconds(10), absl::Minutes(1)},
      {1, kT0, kT0 + absl::Seconds(10), absl::Minutes(2)},
      {2, kT0, kT0 + absl::Seconds(20), absl::Minutes(3)},
  };
  EXPECT_EQ(reports_, want);
}

TEST_F(StartModelTest, UnboundedParallelismStartsEveryRequestAfterTheLatency) {
  StartModel m = Make({absl::Seconds(10), absl::ZeroDuration(), 0});
  for (size_t k = 0; k < 5; ++k) m.Request(k, kT0 + absl::Seconds(k), absl::Minutes(1));
  ASSERT_EQ(reports_.size(), 5u);
  for (size_t k = 0; k < 5; ++k) EXPECT_EQ(reports_[k].at, kT0 + absl::Seconds(10 + k));
}

TEST_F(StartModelTest, ASlotFreedLaterIsUsedFromWhenItFrees) {
  StartModel m = Make({absl::Seconds(10), absl::ZeroDuration(), 1});
  m.Request(0, kT0, absl::Minutes(1));
  m.Request(1, kT0 + absl::Seconds(30), absl::Minutes(1));  // the slot is free again
  ASSERT_EQ(reports_.size(), 2u);
  EXPECT_EQ(reports_[0].at, kT0 + absl::Seconds(10));
  EXPECT_EQ(reports_[1].at, kT0 + absl::Seconds(40));
}

TEST_F(StartModelTest, ContendingStartsShareTheirWorkEqually) {
  // 6 s of fixed delay, then 4 s of work each, shared by both: done at 14 s.
  StartModel m = Make({absl::Seconds(10), absl::Seconds(4), 0});
  m.Request(0, kT0, absl::Minutes(1));
  m.Request(1, kT0, absl::Minutes(2));
  EXPECT_TRUE(reports_.empty());
  EXPECT_EQ(m.NextEvent(), kT0 + absl::Seconds(6));
  m.Advance(kT0 + absl::Seconds(6));
  EXPECT_TRUE(reports_.empty());
  EXPECT_EQ(m.NextEvent(), kT0 + absl::Seconds(14));
  m.Advance(kT0 + absl::Seconds(14));
  const std::vector<Report> want = {
      {0, kT0, kT0 + absl::Seconds(14), absl::Minutes(1)},
      {1, kT0, kT0 + absl::Seconds(14), absl::Minutes(2)},
  };
  EXPECT_EQ(reports_, want);
  EXPECT_EQ(m.NextEvent(), absl::InfiniteFuture());
}

TEST_F(StartModelTest, ALaterStartSlowsTheOneInFlight) {
  // A alone from 6 s; B joins the sharing at 8 s (requested at 2 s) with A's
  // 2 s of work left: both share, A done at 8 + 2*2 = 12 s; B then alone,
  // 4 - 2 = 2 s left, done at 14 s.
  StartModel m = Make({absl::Seconds(10), absl::Seconds(4), 0});
  m.Request(0, kT0, absl::Minutes(1));
  m.Request(1, kT0 + absl::Seconds(2), absl::Minutes(1));
  RunUntil(m, kT0 + absl::Hours(1));
  ASSERT_EQ(reports_.size(), 2u);
  EXPECT_EQ(reports_[0].token, 0u);
  EXPECT_EQ(reports_[0].at, kT0 + absl::Seconds(12));
  EXPECT_EQ(reports_[1].token, 1u);
  EXPECT_EQ(reports_[1].requested, kT0 + absl::Seconds(2));
  EXPECT_EQ(reports_[1].at, kT0 + absl::Seconds(14));
}

TEST_F(StartModelTest, ContentionWithOneSlotServesStartsOneAfterAnother) {
  StartModel m = Make({absl::Seconds(10), absl::Seconds(4), 1});
  for (size_t k = 0; k < 3; ++k) m.Request(k, kT0, absl::Minutes(1));
  RunUntil(m, kT0 + absl::Hours(1));
  ASSERT_EQ(reports_.size(), 3u);
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(reports_[k].token, k);
    EXPECT_EQ(reports_[k].at, kT0 + absl::Seconds(10 * (k + 1)));
  }
}

TEST_F(StartModelTest, NoLatencyWithContentionStartsAtOnce) {
  StartModel m = Make({absl::ZeroDuration(), absl::Seconds(4), 2});
  m.Request(7, kT0, absl::Minutes(1));
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_EQ(reports_[0], (Report{7, kT0, kT0, absl::Minutes(1)}));
}

TEST_F(StartModelTest, TheDelayFunctionMovesTheFixedDelay) {
  auto plus_token = [](size_t token, absl::Duration d) { return d + absl::Seconds(token); };
  StartModel plain = Make({absl::Seconds(10), absl::ZeroDuration(), 0}, plus_token);
  plain.Request(3, kT0, absl::Minutes(1));
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_EQ(reports_[0].at, kT0 + absl::Seconds(13));
  reports_.clear();
  // With contention only the fixed part moves: 6 + 3 s, then 4 s of work.
  StartModel shared = Make({absl::Seconds(10), absl::Seconds(4), 0}, plus_token);
  shared.Request(3, kT0, absl::Minutes(1));
  RunUntil(shared, kT0 + absl::Hours(1));
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_EQ(reports_[0].at, kT0 + absl::Seconds(13));
}

TEST_F(StartModelTest, ClearForgetsEveryStart) {
  StartModel m = Make({absl::Seconds(10), absl::Seconds(4), 1});
  m.Request(0, kT0, absl::Minutes(1));
  m.Request(1, kT0, absl::Minutes(1));
  m.Clear();
  EXPECT_EQ(m.NextEvent(), absl::InfiniteFuture());
  m.Request(2, kT0 + absl::Minutes(5), absl::Minutes(1));
  RunUntil(m, kT0 + absl::Hours(1));
  ASSERT_EQ(reports_.size(), 1u);
  EXPECT_EQ(reports_[0].token, 2u);
  EXPECT_EQ(reports_[0].at, kT0 + absl::Minutes(5) + absl::Seconds(10));
}

}  // namespace
}  // namespace berth::planner
