#include "tools/base/cli_args.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace berth::cli {
namespace {

const std::vector<FlagSpec> kSpecs = {{"state", true, true}, {"json", false}, {"limit"}};

TEST(CliArgsTest, FlagsAnywhereInlineValuesRepeatsAndDoubleDash) {
  absl::StatusOr<Args> a =
      ParseFlags({"list", "--state", "queued", "--json", "--state=failed", "x", "--", "--limit"},
                kSpecs);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->positional, (std::vector<std::string>{"list", "x", "--limit"}));
  EXPECT_EQ(a->GetAll("state"), (std::vector<std::string>{"queued", "failed"}));
  EXPECT_TRUE(a->Has("json"));
  EXPECT_FALSE(a->Has("limit"));
  EXPECT_TRUE(a->GetAll("limit").empty());
}

TEST(CliArgsTest, ErrorsAreOneClearLine) {
  struct Case {
    std::vector<std::string> argv;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {{"--colour", "red"}, "unknown flag --colour (see help)"},
           {{"-x"}, "unknown option -x (flags start with --)"},
           {{"--limit"}, "--limit needs a value"},
           {{"--json=yes"}, "--json takes no value"},
           {{"--limit", "1", "--limit=2"}, "--limit given more than once"}}) {
    absl::StatusOr<Args> a = ParseFlags(c.argv, kSpecs, " (see help)");
    EXPECT_EQ(a.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(a.status().message(), c.message);
  }
}

TEST(CliArgsTest, FirstPositionalSkipsFlagValues) {
  EXPECT_EQ(FirstPositional({"--limit", "3", "--json", "plan"}, kSpecs), 3u);
  EXPECT_EQ(FirstPositional({"--limit=3", "plan"}, kSpecs), 1u);
  EXPECT_EQ(FirstPositional({"--json"}, kSpecs), 1u);
  EXPECT_EQ(FirstPositional({"--", "x"}, kSpecs), 1u);
}

}  // namespace
TEST(SplitList, TrimsAndRejectsEmptyItems) {
  auto items = SplitList("--max-workers", "8, 16,24");
  ASSERT_TRUE(items.ok());
  EXPECT_THAT(*items, ::testing::ElementsAre("8", "16", "24"));
  EXPECT_THAT(SplitList("--max-workers", "8,,16").status().message(),
              ::testing::HasSubstr("--max-workers: \"8,,16\": empty item"));
}

}  // namespace berth::cli
