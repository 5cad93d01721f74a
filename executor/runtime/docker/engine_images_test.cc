#include "executor/runtime/docker/engine_images.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace berth {
namespace {

TEST(ParseImageListTest, TagsDigestsAndIdsWithoutNone) {
  absl::StatusOr<std::vector<std::string>> refs = ParseImageList(R"([
    {"Id": "sha256:aa", "RepoTags": ["berth-test/busybox:1", "x:2"],
     "RepoDigests": ["busybox@sha256:bb"]},
    {"Id": "sha256:cc", "RepoTags": ["<none>:<none>"], "RepoDigests": ["<none>@<none>"]},
    {"Id": "sha256:dd", "RepoTags": null, "RepoDigests": []}
  ])");
  ASSERT_TRUE(refs.ok()) << refs.status();
  EXPECT_EQ(*refs, (std::vector<std::string>{"berth-test/busybox:1", "x:2", "busybox@sha256:bb",
                                             "sha256:aa", "sha256:cc", "sha256:dd"}));
}

TEST(ParseImageListTest, NotAListIsInternal) {
  EXPECT_EQ(ParseImageList("{}").status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(ParseImageList("not json").status().code(), absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace berth
