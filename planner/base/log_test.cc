#include "planner/base/log.h"

#include <cmath>
#include <cstdint>
#include <string>

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

namespace berth {
namespace {

TEST(LogTest, NumbersAndBooleansAreBareStringsAreQuoted) {
  EXPECT_EQ(FormatLogLine(LogLevel::kInfo, "m",
                          {{"jobs", 1200},
                           {"revision", uint64_t{18446744073709551615u}},
                           {"delta", -3},
                           {"seconds", 0.25},
                           {"ok", true},
                           {"generation", std::string("7")},
                           {"nan", std::nan("")}},
                          ""),
            "{\"level\":\"info\",\"msg\":\"m\",\"jobs\":1200,\"revision\":18446744073709551615,"
            "\"delta\":-3,\"seconds\":0.25,\"ok\":true,\"generation\":\"7\",\"nan\":null}\n");
}

}  // namespace
}  // namespace berth
