#include "planner/base/host_port.h"

#include "gtest/gtest.h"

namespace berth {
namespace {

TEST(ParseHostPortTest, SplitsAtTheLastColon) {
  absl::StatusOr<HostPort> a = ParseHostPort("127.0.0.1:7070");
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->host, "127.0.0.1");
  EXPECT_EQ(a->port, 7070);
  absl::StatusOr<HostPort> v6 = ParseHostPort("[::1]:0");
  ASSERT_TRUE(v6.ok()) << v6.status();
  EXPECT_EQ(v6->host, "[::1]");
  EXPECT_EQ(v6->port, 0);
}

TEST(ParseHostPortTest, RefusesWhatIsNotHostPort) {
  for (const char* bad : {"localhost", ":7070", "h:", "h:x", "h:-1", "h:65536", ""}) {
    absl::StatusOr<HostPort> r = ParseHostPort(bad);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(IsLoopbackHostTest, LoopbackNamesOnly) {
  for (const char* host : {"localhost", "127.0.0.1", "127.1.2.3", "::1", "[::1]"}) {
    EXPECT_TRUE(IsLoopbackHost(host)) << host;
  }
  for (const char* host : {"0.0.0.0", "10.0.0.1", "[::]", "example.org", ""}) {
    EXPECT_FALSE(IsLoopbackHost(host)) << host;
  }
}

}  // namespace
}  // namespace berth
