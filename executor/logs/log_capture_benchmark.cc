// Capture cost per MB: LogArchive::Capture of an in-memory log (no engine),
// i.e. the demultiplexed bytes going to two capped files, fsync and rename.
// bazel run --config=bench //executor/logs:log_capture_benchmark
// (docs/BENCHMARKS.md "Logs").
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "executor/logs/log_archive.h"

namespace berth {
namespace {

void BM_Capture(benchmark::State& state) {
  const int64_t mb = state.range(0);
  const int64_t cap = state.range(1) << 20;
  const char* base = std::getenv("TEST_TMPDIR");
  static int counter = 0;
  absl::StatusOr<std::unique_ptr<LogArchive>> archive = LogArchive::Open(
      {absl::StrCat(base != nullptr ? base : "/tmp", "/berth-log-bench-", getpid(), "-",
                    ++counter),
       cap});
  if (!archive.ok()) {
    state.SkipWithError(std::string(archive.status().message()).c_str());
    return;
  }
  // 16 KiB chunks of numbered lines, as the engine hands them over.
  std::string chunk;
  for (int i = 0; chunk.size() < 16384; ++i) absl::StrAppend(&chunk, "line ", i, "\n");
  chunk.resize(16384);
  const int64_t chunks = (mb << 20) / 16384;
  int attempt = 0;
  for (auto _ : state) {
    absl::Status s = (*archive)->Capture("bench", ++attempt, [&](const LogSink& sink) {
      for (int64_t i = 0; i < chunks; ++i) sink(LogStream::kStdout, chunk);
      return absl::OkStatus();
    });
    if (!s.ok()) state.SkipWithError(std::string(s.message()).c_str());
  }
  state.SetBytesProcessed(state.iterations() * chunks * 16384);
  (void)(*archive)->Sweep([](const std::string&) { return false; });
}
// {MB written, cap MiB}: under the cap, and over it (head + ring tail).
BENCHMARK(BM_Capture)->Args({8, 64})->Args({64, 64})->Args({128, 64})
    ->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace berth

BENCHMARK_MAIN();
