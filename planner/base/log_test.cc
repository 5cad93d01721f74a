#include "planner/base/log.h"

#include "gtest/gtest.h"

namespace berth {
namespace {

TEST(LogTest, FormatsOneJsonObjectPerLineWithEscaping) {
  EXPECT_EQ(FormatLogLine(LogLevel::kWarning, "job \"x\" failed\n",
                          {{"job", "a\\b"}, {"code", "3"}, {"ctl", std::string("\x01", 1)}},
                          "2026-11-22T00:00:00.000Z"),
            "{\"ts\":\"2026-11-22T00:00:00.000Z\",\"level\":\"warning\","
            "\"msg\":\"job \\\"x\\\" failed\\n\",\"job\":\"a\\\\b\",\"code\":\"3\","
            "\"ctl\":\"\\u0001\"}\n");
  EXPECT_EQ(FormatLogLine(LogLevel::kInfo, "m", {}, ""), "{\"level\":\"info\",\"msg\":\"m\"}\n");
}

}  // namespace
}  // namespace berth
