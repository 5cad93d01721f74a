// berthd's jemalloc options (server/jemalloc_options.h) take effect, and an
// arena nobody touches any more gives its freed pages back: without
// background_thread the dirty pages of a quiet arena stay resident for good
// (the soak's climbing RSS, docs/BENCHMARKS.md "Soak"), and
// the last test waits for that in vain.
#include "server/jemalloc_options.h"

#include <jemalloc/jemalloc.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace {

template <typename T>
T Read(const std::string& name) {
  T value{};
  size_t size = sizeof(value);
  EXPECT_EQ(mallctl(name.c_str(), &value, &size, nullptr, 0), 0) << name;
  return value;
}

// Refreshes jemalloc's statistics (they are snapshots taken at an epoch).
void NewEpoch() {
  uint64_t epoch = 1;
  size_t size = sizeof(epoch);
  ASSERT_EQ(mallctl("epoch", &epoch, &size, &epoch, size), 0);
}

size_t DirtyPages(unsigned arena) {
  NewEpoch();
  return Read<size_t>(absl::StrCat("stats.arenas.", arena, ".pdirty"));
}

TEST(JemallocOptionsTest, CompiledInOptionsAreInEffect) {
  // The test runs without MALLOC_CONF (bazel test passes no such variable),
  // so these are the compiled-in values.
  EXPECT_TRUE(Read<bool>("opt.background_thread"));
  EXPECT_TRUE(Read<bool>("background_thread"));  // and the threads run
  EXPECT_EQ(Read<ssize_t>("opt.dirty_decay_ms"), 1000);
  EXPECT_EQ(Read<ssize_t>("opt.muzzy_decay_ms"), 0);
}

TEST(JemallocOptionsTest, QuietArenaReturnsItsFreedPages) {
  // An arena of its own, used without the thread cache: after the frees no
  // allocation ever touches it again, like the arena of a request thread
  // that went quiet.
  unsigned arena = 0;
  size_t size = sizeof(arena);
  ASSERT_EQ(mallctl("arenas.create", &arena, &size, nullptr, 0), 0);
  const int flags = MALLOCX_ARENA(arena) | MALLOCX_TCACHE_NONE;
  std::vector<void*> blocks;
  for (int i = 0; i < 64 * 1024; ++i) {  // 64 MiB in 1 KiB blocks
    void* p = mallocx(1024, flags);
    ASSERT_NE(p, nullptr);
    static_cast<char*>(p)[0] = 1;  // touch: resident
    blocks.push_back(p);
  }
  for (void* p : blocks) dallocx(p, flags);
  ASSERT_GT(DirtyPages(arena), 0u);

  // dirty_decay_ms is 1 s; allow for a loaded machine. jemalloc has no
  // notification for a purge, so poll its statistics.
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  size_t dirty = DirtyPages(arena);
  while (dirty > 0 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(50));
    dirty = DirtyPages(arena);
  }
  EXPECT_EQ(dirty, 0u) << "pages of a quiet arena were never purged";
}

}  // namespace
