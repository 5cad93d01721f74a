#include "executor/runtime/runtime_limits.h"

#include <string>

#include "gtest/gtest.h"

namespace berth {
namespace {

TEST(RuntimeLimitsTest, Names) {
  EXPECT_TRUE(IsValidName("job-1.a_b"));
  EXPECT_TRUE(IsValidName("..."));
  EXPECT_TRUE(IsValidName(std::string(128, 'a')));
  for (const char* bad : {"", ".", "..", "a/b", "a b", "é"}) {
    EXPECT_FALSE(IsValidName(bad)) << bad;
  }
  EXPECT_FALSE(IsValidName(std::string(129, 'a')));
}

TEST(RuntimeLimitsTest, Resources) {
  EXPECT_FALSE(CheckResources(10, 6 << 20));
  EXPECT_FALSE(CheckResources(1000, int64_t{1} << 40));
  struct Case {
    int64_t cpu, mem;
    const char* field;
  } cases[] = {
      {0, 0, "resources"},
      {-1, -1, "resources"},
      {9, 6 << 20, "resources.cpu_millis"},
      {1, 6 << 20, "resources.cpu_millis"},
      {0, 6 << 20, "resources.cpu_millis"},
      {kMaxCpuMillis + 1, 6 << 20, "resources.cpu_millis"},
      {10, (6 << 20) - 1, "resources.memory_bytes"},
      {10, 0, "resources.memory_bytes"},
  };
  for (const Case& c : cases) {
    std::optional<SpecProblem> p = CheckResources(c.cpu, c.mem);
    ASSERT_TRUE(p) << c.cpu << " " << c.mem;
    EXPECT_EQ(p->field, c.field) << c.cpu << " " << c.mem;
  }
  EXPECT_EQ(kMinCpuMillis, 10);
}

TEST(RuntimeLimitsTest, ImageReferences) {
  for (const char* good :
       {"busybox", "berth-test/busybox:1", "registry.local/research/runner:v3",
        "localhost:5000/a/b:latest", "a__b/c-d--e.f:1.0_x",
        "Registry.Local:443/x/y", "x@sha256:0123456789abcdef0123456789abcdef",
        "x:tag@sha256:0123456789abcdef0123456789abcdef"}) {
    EXPECT_FALSE(CheckImageReference(good)) << good;
  }
  for (const char* bad :
       {"", "berth-test/../evil:1", "berth-test/./x", "berth-test/", "/x", "x//y",
        "berth-test/busybox:1\n", "UPPER", "upper/CASE", "x:", "x:-tag", "x:.tag",
        "a/b:c:d", "x@sha256:short", "x@", "a___b", "-a", "a-", "a..b", "a b",
        "x:tag with space", "host:port:1/x",
        // Docker 20.10: "repository name must be lowercase".
        "BERTH-TEST/busybox:1", "Berth-test/busybox:1"}) {
    std::optional<SpecProblem> p = CheckImageReference(bad);
    ASSERT_TRUE(p) << bad;
    EXPECT_EQ(p->field, "image");
  }
  EXPECT_TRUE(CheckImageReference(std::string(513, 'a')));
  EXPECT_TRUE(CheckImageReference(std::string(256, 'a')));
}

TEST(RuntimeLimitsTest, Arguments) {
  {
    ArgumentCheck a;
    a.AddArg("run");
    a.AddEnv("HOME", "/tmp");
    EXPECT_FALSE(a.Result());
  }
  {
    ArgumentCheck a;
    a.AddArg("ok");
    a.AddArg(std::string(kMaxArgStringBytes + 1, 'x'));
    ASSERT_TRUE(a.Result());
    EXPECT_EQ(a.Result()->field, "argv[1]");
  }
  {
    ArgumentCheck a;
    a.AddEnv("BIG", std::string(1 << 20, 'x'));
    ASSERT_TRUE(a.Result());
    EXPECT_EQ(a.Result()->field, "env['BIG']");
  }
  {
    ArgumentCheck a;  // each entry fits, the total does not
    for (int i = 0; i < 9; ++i) a.AddArg(std::string(120 * 1024, 'x'));
    ASSERT_TRUE(a.Result());
    EXPECT_EQ(a.Result()->field, "argv[8]");
  }
  {
    ArgumentCheck a;
    a.AddEnv("1X", "v");
    ASSERT_TRUE(a.Result());
    EXPECT_EQ(a.Result()->field, "env['1X']");
  }
  {
    ArgumentCheck a;
    a.AddArg(std::string("a\0b", 3));
    ASSERT_TRUE(a.Result());
    EXPECT_EQ(a.Result()->field, "argv[0]");
  }
  {
    ArgumentCheck a;  // an empty program name; empty arguments after it are fine
    a.AddArg("");
    ASSERT_TRUE(a.Result());
    EXPECT_EQ(a.Result()->field, "argv[0]");
    ArgumentCheck b;
    b.AddArg("echo");
    b.AddArg("");
    EXPECT_FALSE(b.Result());
  }
  {
    ArgumentCheck a;
    for (size_t i = 0; i <= kMaxArgvEntries; ++i) a.AddArg("x");
    ASSERT_TRUE(a.Result());
    EXPECT_EQ(a.Result()->field, "argv");
  }
}

TEST(RuntimeLimitsTest, ContainerUser) {
  absl::StatusOr<ContainerUser> u = ParseContainerUser("65534:65534");
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(u->uid, 65534u);
  EXPECT_EQ(u->ToString(), "65534:65534");
  EXPECT_TRUE(ParseContainerUser("1:1").ok());
  EXPECT_TRUE(ParseContainerUser("2147483647:2147483647").ok());
  for (const char* bad :
       {"", "0", "0:0", "00:0", "+0:0", "root", "root:root", "65534", "65534:0",
        "0:65534", "-1:-1", "4294967296:1", "2147483648:1", "1:4294967295", " 1:1",
        "1:1 ", "0x10:1", "01:1", "1:", ":1", "1:1:1", "nobody:nogroup", "1e3:1"}) {
    absl::StatusOr<ContainerUser> p = ParseContainerUser(bad);
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(RuntimeLimitsTest, ContainerSpecChecksEveryLimit) {
  ContainerSpec s;
  s.job_id = "j";
  s.workspace = "ws";
  s.image = "berth-test/busybox:1";
  s.cpu_millis = 10;
  s.memory_bytes = 6 << 20;
  EXPECT_FALSE(CheckContainerSpec(s));
  s.job_id = "..";
  EXPECT_EQ(CheckContainerSpec(s)->field, "id");
  s.job_id = "j";
  s.workspace = ".";
  EXPECT_EQ(CheckContainerSpec(s)->field, "workspace");
  s.workspace = "ws";
  s.env = {{"K", std::string(200 * 1024, 'v')}};
  EXPECT_EQ(CheckContainerSpec(s)->field, "env['K']");
  s.env.clear();
  s.cpu_millis = 5;
  EXPECT_EQ(CheckContainerSpec(s)->field, "resources.cpu_millis");
}

TEST(RuntimeLimitsTest, QuoteEscapes) {
  EXPECT_EQ(QuoteForMessage("a\nb"), "'a\\x0ab'");
  EXPECT_NE(QuoteForMessage(std::string(70, 'x')).find("(70 B)"), std::string::npos);
}

}  // namespace
}  // namespace berth
