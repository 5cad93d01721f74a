#include "server/core/field_mask_paths.h"

#include "berth/v1/budgets.pb.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

google::protobuf::FieldMask Mask(std::initializer_list<const char*> paths) {
  google::protobuf::FieldMask m;
  for (const char* p : paths) m.add_paths(p);
  return m;
}

TEST(FieldMaskPathsTest, AcceptsProtoAndJsonNames) {
  struct Case {
    google::protobuf::FieldMask mask;
    std::vector<std::string> want;
  };
  const Case cases[] = {
      {Mask({"memory_bytes"}), {"memory_bytes"}},
      {Mask({"memoryBytes"}), {"memory_bytes"}},
      {Mask({"memoryBytes", "cpu_millis", "maxWorkers"}),
       {"memory_bytes", "cpu_millis", "max_workers"}},
      {Mask({"workspaceMaxWorkers", "pools"}), {"workspace_max_workers", "pools"}},
      {Mask({"memoryBytes", "memory_bytes"}), {"memory_bytes"}},
      {Mask({}), {}},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::vector<std::string>> got =
        NormaliseFieldMaskPaths(c.mask, *v1::Budgets::descriptor());
    ASSERT_TRUE(got.ok()) << c.mask.DebugString() << got.status();
    EXPECT_EQ(*got, c.want) << c.mask.DebugString();
  }
}

TEST(FieldMaskPathsTest, UnknownPathNamesTheFieldsThatExist) {
  for (const char* bad : {"memory", "MemoryBytes", "memory-bytes", "pools.database", ""}) {
    absl::StatusOr<std::vector<std::string>> got =
        NormaliseFieldMaskPaths(Mask({bad}), *v1::Budgets::descriptor());
    ASSERT_FALSE(got.ok()) << bad;
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(got.status().message().find(absl::StrCat("unknown field '", bad, "'")),
              std::string::npos)
        << got.status();
    EXPECT_NE(got.status().message().find("memory_bytes, cpu_millis, max_workers"),
              std::string::npos)
        << got.status();
  }
}

}  // namespace
}  // namespace berth
