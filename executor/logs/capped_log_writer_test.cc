#include "executor/logs/capped_log_writer.h"

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace berth {
namespace {

std::string TempPath(const std::string& name) {
  static int counter = 0;
  const char* base = std::getenv("TEST_TMPDIR");
  return absl::StrCat(base != nullptr ? base : "/tmp", "/", name, "-", ++counter);
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Write(int64_t cap, const std::vector<std::string>& chunks, int64_t* cut) {
  const std::string path = TempPath("capped");
  absl::StatusOr<std::unique_ptr<CappedLogWriter>> w = CappedLogWriter::Create(path, cap);
  EXPECT_TRUE(w.ok()) << w.status();
  for (const std::string& c : chunks) EXPECT_TRUE((*w)->Append(c).ok());
  EXPECT_TRUE((*w)->Finish().ok());
  *cut = (*w)->cut_bytes();
  return ReadAll(path);
}

TEST(CappedLogWriterTest, UnderTheCapKeepsEverything) {
  int64_t cut = -1;
  EXPECT_EQ(Write(100, {"hello\n", "world\n"}, &cut), "hello\nworld\n");
  EXPECT_EQ(cut, 0);
  // Exactly the cap: nothing cut, no marker.
  EXPECT_EQ(Write(10, {"0123456789"}, &cut), "0123456789");
  EXPECT_EQ(cut, 0);
}

TEST(CappedLogWriterTest, OverTheCapKeepsHeadMarkerTail) {
  int64_t cut = -1;
  // 26 bytes, cap 10: head 5 "abcde", tail 5 "vwxyz", 16 cut.
  std::string got = Write(10, {"abcdefgh", "ijklmnopqrstuvwxyz"}, &cut);
  EXPECT_EQ(cut, 16);
  EXPECT_EQ(got, absl::StrCat("abcde\n", CappedLogWriter::MarkerLine(16, 26), "vwxyz"));
}

TEST(CappedLogWriterTest, TailRingWrapsInManySmallChunks) {
  int64_t cut = -1;
  std::vector<std::string> chunks;
  std::string all;
  for (int i = 0; i < 1000; ++i) {
    chunks.push_back(absl::StrCat(i, "\n"));
    all += chunks.back();
  }
  const std::string got = Write(64, chunks, &cut);
  EXPECT_EQ(cut, static_cast<int64_t>(all.size()) - 64);
  EXPECT_EQ(got.substr(0, 32), all.substr(0, 32));
  EXPECT_EQ(got.substr(got.size() - 32), all.substr(all.size() - 32));
  EXPECT_NE(got.find(CappedLogWriter::MarkerLine(cut, static_cast<int64_t>(all.size()))),
            std::string::npos);
}

// ReadCut gives back what the writer did, for any cap, chunking and content
// (content that looks like a marker, but whose counts do not fit its place,
// included), without being told the cap.
TEST(CappedLogWriterTest, ReadCutRecoversWhatWasCutForAnyCap) {
  const unsigned seed = static_cast<unsigned>(std::random_device{}());
  std::mt19937 rng(seed);
  const std::vector<std::string> pieces = {
      "x", "line\n", "\n", "[berth: 5000000 bytes cut here; 9000000 bytes in all]\n", "[berth: ",
      std::string(300, 'y')};
  for (int round = 0; round < 300; ++round) {
    const int64_t cap = std::uniform_int_distribution<int64_t>(2, 3000)(rng);
    const std::string path = TempPath("readcut");
    absl::StatusOr<std::unique_ptr<CappedLogWriter>> w = CappedLogWriter::Create(path, cap);
    ASSERT_TRUE(w.ok()) << w.status();
    const int n = std::uniform_int_distribution<int>(0, 60)(rng);
    for (int i = 0; i < n; ++i) {
      const size_t k = std::uniform_int_distribution<size_t>(0, pieces.size() - 1)(rng);
      ASSERT_TRUE((*w)->Append(pieces[k]).ok());
    }
    ASSERT_TRUE((*w)->Finish().ok());
    const StreamCut got = CappedLogWriter::ReadCut(path);
    const int64_t cut = (*w)->cut_bytes();
    const int64_t total = (*w)->total_bytes();
    SCOPED_TRACE(absl::StrCat("seed ", seed, " round ", round, " cap ", cap, " total ", total));
    EXPECT_EQ(got.total_bytes, total);
    EXPECT_EQ(got.dropped_bytes, cut);
    EXPECT_EQ(got.head_bytes, cut > 0 ? cap / 2 : total);
    EXPECT_EQ(got.tail_bytes, cut > 0 ? cap - cap / 2 : 0);
    if (::testing::Test::HasFailure()) return;
  }
}

// Appends are buffered and written in blocks: for chunks around and across
// the buffer's size, small and large, the file is exactly head + marker +
// tail of what was appended, and the counters agree before and after Finish.
TEST(CappedLogWriterTest, BufferedWritesKeepExactHeadAndTail) {
  const unsigned seed = static_cast<unsigned>(std::random_device{}());
  std::mt19937 rng(seed);
  for (int round = 0; round < 40; ++round) {
    const int64_t cap = std::uniform_int_distribution<int64_t>(2, 600 << 10)(rng);
    const int64_t buffers[] = {0, 1, 100, CappedLogWriter::kDefaultBufferBytes};
    const int64_t buffer = buffers[rng() % 4];
    SCOPED_TRACE(absl::StrCat("seed ", seed, " round ", round, " cap ", cap, " buffer ", buffer));
    const std::string path = TempPath("buffered");
    absl::StatusOr<std::unique_ptr<CappedLogWriter>> w =
        CappedLogWriter::Create(path, cap, buffer);
    ASSERT_TRUE(w.ok()) << w.status();
    std::string all;
    const int n = std::uniform_int_distribution<int>(0, 40)(rng);
    for (int i = 0; i < n; ++i) {
      const bool big = std::uniform_int_distribution<int>(0, 3)(rng) == 0;
      const size_t len = std::uniform_int_distribution<size_t>(0, big ? 200 << 10 : 300)(rng);
      std::string chunk(len, '\0');
      for (char& ch : chunk) ch = static_cast<char>('a' + rng() % 26);
      if (!chunk.empty() && rng() % 2 == 0) chunk.back() = '\n';
      all += chunk;
      ASSERT_TRUE((*w)->Append(chunk).ok());
    }
    const int64_t total = static_cast<int64_t>(all.size());
    const int64_t cut_before = (*w)->cut_bytes();
    ASSERT_EQ((*w)->total_bytes(), total);
    ASSERT_TRUE((*w)->Finish().ok());
    const std::string got = ReadAll(path);
    if (total <= cap) {
      EXPECT_EQ(cut_before, 0);
      EXPECT_EQ((*w)->cut_bytes(), 0);
      EXPECT_TRUE(got == all);
    } else {
      const int64_t head = cap / 2, tail = cap - cap / 2;
      EXPECT_EQ(cut_before, total - cap);
      EXPECT_EQ((*w)->cut_bytes(), total - cap);
      const std::string marker = absl::StrCat(all[static_cast<size_t>(head) - 1] == '\n' ? "" : "\n",
                                              CappedLogWriter::MarkerLine(total - cap, total));
      EXPECT_TRUE(got == all.substr(0, static_cast<size_t>(head)) + marker +
                             all.substr(all.size() - static_cast<size_t>(tail)));
    }
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(CappedLogWriterTest, ReadCutOfAMissingFileIsEmpty) {
  const StreamCut got = CappedLogWriter::ReadCut(TempPath("missing"));
  EXPECT_EQ(got.total_bytes, 0);
  EXPECT_EQ(got.dropped_bytes, 0);
}

TEST(CappedLogWriterTest, RejectsANegativeBuffer) {
  EXPECT_EQ(CappedLogWriter::Create(TempPath("negative"), 100, -1).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(CappedLogWriterTest, RejectsATinyCap) {
  absl::StatusOr<std::unique_ptr<CappedLogWriter>> w =
      CappedLogWriter::Create(TempPath("tiny"), 1);
  EXPECT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace berth
