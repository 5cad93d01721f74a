#include "planner/base/status_macros.h"

#include <string>

#include "gtest/gtest.h"

namespace berth {
namespace {

absl::Status FailIf(bool fail) {
  if (fail) return absl::NotFoundError("missing");
  return absl::OkStatus();
}

absl::Status Chain(bool fail, int* reached) {
  RETURN_IF_ERROR(FailIf(fail));
  *reached = 1;
  return absl::OkStatus();
}

absl::StatusOr<std::string> Name(bool fail) {
  if (fail) return absl::InvalidArgumentError("bad name");
  return std::string("berth");
}

absl::StatusOr<size_t> NameLength(bool fail) {
  ASSIGN_OR_RETURN(std::string name, Name(fail));
  return name.size();
}

TEST(StatusMacrosTest, ReturnIfErrorPropagatesAndStops) {
  int reached = 0;
  absl::Status s = Chain(true, &reached);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(reached, 0);
  EXPECT_TRUE(Chain(false, &reached).ok());
  EXPECT_EQ(reached, 1);
}

TEST(StatusMacrosTest, AssignOrReturnMovesValueOrStatus) {
  absl::StatusOr<size_t> ok = NameLength(false);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 5u);
  absl::StatusOr<size_t> bad = NameLength(true);
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(), "bad name");
}

}  // namespace
}  // namespace berth
