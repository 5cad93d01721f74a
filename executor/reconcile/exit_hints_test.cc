#include "executor/reconcile/exit_hints.h"

#include "gtest/gtest.h"

namespace berth {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1'700'000'000);

RuntimeEvent Event(const std::string& job, const std::string& action,
                   const std::string& container, std::optional<int> code = std::nullopt) {
  RuntimeEvent e{job, action, container};
  e.exit_code = code;
  e.time = kT0;
  return e;
}

TEST(ExitHintsTest, ADieIsAHintAndCarriesTheOomBeforeIt) {
  ExitHints hints;
  EXPECT_FALSE(hints.Note(Event("j", "start", "c1"), kT0));
  EXPECT_FALSE(hints.Died("j").has_value());
  EXPECT_FALSE(hints.Note(Event("j", "oom", "c1"), kT0));
  EXPECT_FALSE(hints.Died("j").has_value()) << "an oom alone is no exit";
  EXPECT_TRUE(hints.Note(Event("j", "die", "c1", 137), kT0));
  std::optional<ExitHint> h = hints.Died("j");
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->container_id, "c1");
  EXPECT_EQ(h->exit_code, std::optional<int>(137));
  EXPECT_TRUE(h->oom_killed);
  EXPECT_EQ(h->exited_at, kT0);
  EXPECT_TRUE(h->Matches("c1"));
  EXPECT_FALSE(h->Matches("c2"));
}

TEST(ExitHintsTest, ANewContainerStartsAFreshHint) {
  ExitHints hints;
  hints.Note(Event("j", "oom", "c1"), kT0);
  hints.Note(Event("j", "die", "c2", 0), kT0);
  std::optional<ExitHint> h = hints.Died("j");
  ASSERT_TRUE(h.has_value());
  EXPECT_FALSE(h->oom_killed) << "the oom was the old container's";
}

TEST(ExitHintsTest, ForgetDestroyAndExpireDropOnlyTheirOwn) {
  ExitHints hints(ExitHintsOptions{absl::Seconds(30)});
  hints.Note(Event("a", "die", "c1", 0), kT0);
  hints.Note(Event("b", "die", "c2", 0), kT0);
  hints.Note(Event("c", "die", "c3", 0), kT0 + absl::Seconds(20));
  hints.Forget("a", "other");
  EXPECT_TRUE(hints.Died("a").has_value());
  hints.Forget("a", "c1");
  EXPECT_FALSE(hints.Died("a").has_value());
  EXPECT_FALSE(hints.Note(Event("b", "destroy", "c2"), kT0));
  EXPECT_FALSE(hints.Died("b").has_value());
  hints.Note(Event("d", "die", "c4", 0), kT0);
  hints.Expire(kT0 + absl::Seconds(31));
  EXPECT_FALSE(hints.Died("d").has_value());
  EXPECT_TRUE(hints.Died("c").has_value());
  EXPECT_EQ(hints.size(), 1u);
  EXPECT_FALSE(hints.Note(Event("", "resync", ""), kT0));
  EXPECT_EQ(hints.size(), 1u);
}

}  // namespace
}  // namespace berth
