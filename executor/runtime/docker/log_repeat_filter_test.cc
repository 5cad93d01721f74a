#include "executor/runtime/docker/log_repeat_filter.h"

#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace berth {
namespace {

// Feeds (stream, frame) pairs; returns the kept text, per stream joined.
std::pair<std::string, std::string> Filter(const std::vector<std::pair<int, std::string>>& frames) {
  LogRepeatFilter f;
  std::string out, err;
  for (const auto& [stream, frame] : frames) {
    absl::string_view text;
    if (f.Keep(stream, frame, &text)) (stream == 2 ? err : out).append(text.data(), text.size());
  }
  return {out, err};
}

TEST(LogRepeatFilterTest, StripsTheTimestampAndKeepsLaterMessages) {
  auto [out, err] = Filter({{1, "2026-11-27T11:21:48.1Z a\n"},
                         {1, "2026-11-27T11:21:48.123456789Z b\n"},
                         {2, "2026-11-27T11:21:48.000000001Z e\n"},  // its own stream
                         {1, "2026-11-27T11:21:49Z c\n"}});
  EXPECT_EQ(out, "a\nb\nc\n");
  EXPECT_EQ(err, "e\n");
}

TEST(LogRepeatFilterTest, DropsWhatARotationRepeats) {
  auto [out, err] = Filter({{1, "2026-11-27T11:00:00.1Z 1\n"},
                         {1, "2026-11-27T11:00:00.2Z 2\n"},
                         {1, "2026-11-27T11:00:00.3Z 3\n"},
                         // the follow re-reads from 2
                         {1, "2026-11-27T11:00:00.2Z 2\n"},
                         {1, "2026-11-27T11:00:00.3Z 3\n"},
                         {1, "2026-11-27T11:00:00.4Z 4\n"},
                         // a repeat that begins at the last one kept
                         {1, "2026-11-27T11:00:00.4Z 4\n"},
                         {1, "2026-11-27T11:00:00.5Z 5\n"}});
  EXPECT_EQ(out, "1\n2\n3\n4\n5\n");
}

TEST(LogRepeatFilterTest, KeepsEveryPieceOfALongLineAndDropsTheirRepeat) {
  // Docker splits a long line; its pieces share the first one's timestamp.
  auto [out, err] = Filter({{1, "2026-11-27T11:00:00.1Z aaa"},
                         {1, "2026-11-27T11:00:00.1Z bbb"},
                         {1, "2026-11-27T11:00:00.1Z ccc\n"},
                         {1, "2026-11-27T11:00:00.05Z x\n"},  // repeat begins
                         {1, "2026-11-27T11:00:00.1Z aaa"},
                         {1, "2026-11-27T11:00:00.1Z bbb"},
                         {1, "2026-11-27T11:00:00.1Z ccc\n"},
                         {1, "2026-11-27T11:00:00.2Z d\n"}});
  EXPECT_EQ(out, "aaabbbccc\nd\n");
}

TEST(LogRepeatFilterTest, AFrameWithoutATimestampPassesUnchanged) {
  auto [out, err] = Filter({{1, "plain line\n"}, {1, "plain line\n"}});
  EXPECT_EQ(out, "plain line\nplain line\n");
}

TEST(ParseDockerLogStampTest, SplitsTheEnginesTimeFromTheText) {
  absl::Time t;
  absl::string_view text;
  ASSERT_TRUE(ParseDockerLogStamp("2026-11-27T11:21:48.123456789Z b c\n", &t, &text));
  EXPECT_EQ(text, "b c\n");
  EXPECT_EQ(t, absl::FromUnixSeconds(1795778508) + absl::Nanoseconds(123456789));
  ASSERT_TRUE(ParseDockerLogStamp("2026-11-27T11:21:48.1Z x", &t, &text));
  EXPECT_EQ(t, absl::FromUnixSeconds(1795778508) + absl::Milliseconds(100));
  ASSERT_TRUE(ParseDockerLogStamp("2026-11-27T11:21:49Z \n", &t, &text));
  EXPECT_EQ(t, absl::FromUnixSeconds(1795778509));
  EXPECT_EQ(text, "\n");
  text = "untouched";
  EXPECT_FALSE(ParseDockerLogStamp("plain line\n", &t, &text));
  EXPECT_FALSE(ParseDockerLogStamp("2026-13-27T11:21:49Z bad month\n", &t, &text));
  EXPECT_EQ(text, "untouched");
}

}  // namespace
}  // namespace berth
