#include "executor/runtime/image_catalog.h"

#include <string>
#include <vector>

#include "executor/runtime/fake_runtime.h"
#include "gtest/gtest.h"
#include "planner/base/simulated_clock.h"

namespace berth {
namespace {

constexpr char kDigest[] =
    "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

TEST(NormalizeImageReferenceTest, DockerHubNamesTagsAndDigests) {
  struct Case {
    std::string in;
    std::string want;
  };
  const std::string d = kDigest;
  for (const Case& c : std::vector<Case>{
           {"busybox", "busybox:latest"},
           {"busybox:1", "busybox:1"},
           {"library/busybox:1", "busybox:1"},
           {"docker.io/library/busybox:1", "busybox:1"},
           {"index.docker.io/library/busybox", "busybox:latest"},
           {"docker.io/berth-test/busybox:1", "berth-test/busybox:1"},
           {"berth-test/busybox:1", "berth-test/busybox:1"},
           {"registry.local:5000/library/x", "registry.local:5000/library/x:latest"},
           {"localhost/library/x:2", "localhost/library/x:2"},
           {"registry.local:5000/x:3", "registry.local:5000/x:3"},
           {"busybox@" + d, "busybox@" + d},
           {"docker.io/library/busybox:1@" + d, "busybox@" + d},
           {kDigest, kDigest},
       }) {
    EXPECT_EQ(NormalizeImageReference(c.in), c.want) << c.in;
  }
}

class ImageCatalogTest : public ::testing::Test {
 protected:
  int64_t Lists() { return runtime_.Counters()["images"].calls; }

  FakeRuntime runtime_;
  SimulatedClock clock_;
  ImageCatalog catalog_{runtime_, clock_,
                        ImageCatalogOptions{absl::Seconds(30), absl::Seconds(1)}};
};

TEST_F(ImageCatalogTest, TagsDigestsAndIdsOfTheListArePresentOthersMissing) {
  runtime_.SetImages(std::vector<std::string>{
      "berth-test/busybox:1", std::string("berth-test/busybox@") + kDigest, kDigest});
  EXPECT_EQ(catalog_.Check("berth-test/busybox:1"), ImagePresence::kPresent);
  EXPECT_EQ(catalog_.Check("docker.io/berth-test/busybox:1"), ImagePresence::kPresent);
  EXPECT_EQ(catalog_.Check(std::string("berth-test/busybox@") + kDigest),
            ImagePresence::kPresent);
  EXPECT_EQ(catalog_.Check(kDigest), ImagePresence::kPresent);
  EXPECT_EQ(catalog_.Check("berth-test/busybox:2"), ImagePresence::kMissing);
  EXPECT_EQ(catalog_.Check("berth-test/busybox"), ImagePresence::kMissing);  // :latest
  EXPECT_EQ(catalog_.Check("berth-test/busybox@sha256:" + std::string(64, 'f')),
            ImagePresence::kMissing);
  EXPECT_EQ(Lists(), 1);  // the misses came within min_refresh_interval
}

TEST_F(ImageCatalogTest, AMissListsAgainAtMostOncePerInterval) {
  runtime_.SetImages(std::vector<std::string>{"a:1"});
  EXPECT_EQ(catalog_.Check("b:1"), ImagePresence::kMissing);
  runtime_.SetImages(std::vector<std::string>{"a:1", "b:1"});  // loaded meanwhile
  EXPECT_EQ(catalog_.Check("b:1"), ImagePresence::kMissing);   // same interval
  EXPECT_EQ(Lists(), 1);
  clock_.Advance(absl::Seconds(1));
  EXPECT_EQ(catalog_.Check("b:1"), ImagePresence::kPresent);
  EXPECT_EQ(Lists(), 2);
  // Hits within max_age make no call.
  clock_.Advance(absl::Seconds(20));
  EXPECT_EQ(catalog_.Check("a:1"), ImagePresence::kPresent);
  EXPECT_EQ(Lists(), 2);
}

TEST_F(ImageCatalogTest, AStaleListIsTakenAgainSoARemovedImageGoesMissing) {
  runtime_.SetImages(std::vector<std::string>{"a:1"});
  EXPECT_EQ(catalog_.Check("a:1"), ImagePresence::kPresent);
  runtime_.SetImages(std::vector<std::string>{});
  clock_.Advance(absl::Seconds(29));
  EXPECT_EQ(catalog_.Check("a:1"), ImagePresence::kPresent);  // cached
  clock_.Advance(absl::Seconds(1));
  EXPECT_EQ(catalog_.Check("a:1"), ImagePresence::kMissing);
  EXPECT_EQ(Lists(), 2);
}

TEST_F(ImageCatalogTest, AnUnreachableEngineIsUnknownNeverMissing) {
  runtime_.SetImages(absl::UnavailableError("docker down"));
  EXPECT_EQ(catalog_.Check("a:1"), ImagePresence::kUnknown);
  EXPECT_EQ(catalog_.Check("b:1"), ImagePresence::kUnknown);
  EXPECT_EQ(Lists(), 1);  // bounded: one failed call per interval
  // A list that worked, then an outage when it is stale: unknown, not the
  // old answer and not missing.
  clock_.Advance(absl::Seconds(1));
  runtime_.SetImages(std::vector<std::string>{"a:1"});
  EXPECT_EQ(catalog_.Check("b:1"), ImagePresence::kMissing);
  runtime_.SetImages(absl::DeadlineExceededError("docker slow"));
  clock_.Advance(absl::Seconds(30));
  EXPECT_EQ(catalog_.Check("b:1"), ImagePresence::kUnknown);
  EXPECT_EQ(catalog_.Check("a:1"), ImagePresence::kUnknown);
}

TEST_F(ImageCatalogTest, ARuntimeThatCannotListImagesIsUnknown) {
  // FakeRuntime's default: UNIMPLEMENTED, as Runtime's.
  EXPECT_EQ(catalog_.Check("a:1"), ImagePresence::kUnknown);
}

}  // namespace
}  // namespace berth
