// berth-plan's words for two waits that read wrongly before: a job waiting
// for priority whose binding row is short (it fits what is free now, not
// what the reservation leaves), and running jobs above a budget lowered
// below them (never "-15 cores free" or "3/1 in use").
#include <cstdlib>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "planner/base/proto_json.h"
#include "tools/plan/commands.h"

namespace berth::plan {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Write(const std::string& name, const std::string& contents) {
  std::string path = absl::StrCat(std::getenv("TEST_TMPDIR"), "/", name);
  EXPECT_TRUE(WriteFileAtomically(path, contents).ok());
  return path;
}

std::string Now(const std::vector<std::string>& args) {
  auto out = RunNow(args, CommandEnv());
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return "";
  std::ostringstream os;
  if (out->write) {
    out->write(&os);
  } else {
    os << out->text;
  }
  return os.str();
}

std::string Spec(const std::string& id, int priority, int64_t cpu, int64_t gib,
                 const std::string& duration) {
  return absl::StrCat(R"({"id":")", id, R"(","workspace":"ws","priority":)", priority,
                      R"(,"resources":{"cpuMillis":")", cpu, R"(","memoryBytes":")",
                      gib << 30, R"("},"expectedDuration":")", duration, R"("})");
}

// 8 cores; 6 held for an hour; the head needs all 8 (reserved at +1h,
// nothing spare then); a 1-core job of 2 h fits the 2 free now but would
// still run then.
TEST(Wording, PriorityWaitSaysWhatTheReservationLeaves) {
  const std::string file = Write(
      "priority.json",
      absl::StrCat(R"({"startTime":"2026-11-23T09:00:00Z",)",
                   R"("budgets":{"memoryBytes":"68719476736","cpuMillis":"8000","maxWorkers":8},)",
                   R"("running":[{"spec":)", Spec("r", 0, 6000, 1, "3600s"),
                   R"(,"startedAt":"2026-11-23T09:00:00Z"}],"jobs":[)",
                   R"({"spec":)", Spec("head", 1, 8000, 1, "600s"), "},",
                   R"({"spec":)", Spec("small", 0, 1000, 1, "7200s"), "}]}"));
  const std::string out = Now({file, "--json"});
  EXPECT_THAT(out, HasSubstr("WAITING_FOR_PRIORITY"));
  EXPECT_THAT(out, HasSubstr("fits what is free now, but would delay the reservation of head "
                             "(it would still run then and needs 1 core; the reservation "
                             "leaves 0 cores spare)"));
  EXPECT_THAT(out, Not(HasSubstr("\"fits, but")));
}

// Running jobs hold 32 GiB and 3 slots; the budgets were lowered to 24 GiB
// and 1 worker.
TEST(Wording, RunningAboveALoweredBudgetIsSaidSo) {
  const std::string running =
      absl::StrCat(R"("running":[)",
                   R"({"spec":)", Spec("r1", 0, 1000, 16, "600s"), R"(,"startedAt":"2026-11-23T09:00:00Z"},)",
                   R"({"spec":)", Spec("r2", 0, 1000, 16, "900s"), R"(,"startedAt":"2026-11-23T09:00:00Z"}],)");
  const std::string memory = Write(
      "memory_above.json",
      absl::StrCat(R"({"startTime":"2026-11-23T09:00:00Z",)",
                   R"("budgets":{"memoryBytes":"25769803776","cpuMillis":"32000","maxWorkers":4},)",
                   running, R"("jobs":[{"spec":)", Spec("q", 0, 1000, 4, "600s"), "}]}"));
  std::string out = Now({memory, "--json"});
  EXPECT_THAT(out, HasSubstr("none free: running jobs hold 32 GiB, above the budget of 24 GiB "
                             "(set below what already runs)"));
  EXPECT_THAT(out, Not(HasSubstr("-8 GiB free")));
  out = Now({memory, "--max-workers", "1", "--json"});
  EXPECT_THAT(out, HasSubstr("2 running, above the limit of 1 (set below what already runs): "
                             "a slot frees when 2 of them have ended"));
  EXPECT_THAT(out, Not(HasSubstr("2/1 in use")));
}

}  // namespace
}  // namespace berth::plan
