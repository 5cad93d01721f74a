#include "server/command_line.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/parse.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace berth {
namespace {

// The parse in progress (one per process): absl reports a refusal by
// writing to std::cerr and calling exit(1), so the only place to turn it
// into berthd's refusal is an exit handler.
int saved_stderr = -1;
std::FILE* captured = nullptr;
RefuseStartFn refuse_start = nullptr;

// Stops capturing: stderr is the original again. Returns what was captured.
std::string StopCapture() {
  std::cerr.flush();
  std::fflush(stderr);
  std::string text;
  if (captured != nullptr) {
    std::rewind(captured);
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, captured)) > 0) text.append(buf, n);
    std::fclose(captured);
    captured = nullptr;
  }
  if (saved_stderr >= 0) {
    dup2(saved_stderr, STDERR_FILENO);
    close(saved_stderr);
    saved_stderr = -1;
  }
  return text;
}

// At exit: if absl exits during the parse having written an error, refuse
// the start berthd's way; --help and --version write nothing there and keep
// their own exit.
void OnExitDuringParse() {
  if (saved_stderr < 0) return;
  const std::string text = StopCapture();
  std::vector<std::string> lines;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    absl::ConsumePrefix(&line, "ERROR: ");
    if (!line.empty()) lines.emplace_back(line);
  }
  if (lines.empty()) return;
  const int status = refuse_start(absl::InvalidArgumentError(absl::StrJoin(lines, "; ")));
  std::fflush(nullptr);
  _exit(status);
}

}  // namespace

void ParseBerthdCommandLine(int argc, char** argv, RefuseStartFn refuse) {
  refuse_start = refuse;
  std::cerr.flush();
  std::fflush(stderr);
  captured = std::tmpfile();
  if (captured != nullptr) saved_stderr = dup(STDERR_FILENO);
  if (saved_stderr >= 0 && dup2(fileno(captured), STDERR_FILENO) >= 0) {
    std::atexit(OnExitDuringParse);
  } else {  // cannot capture: absl's own refusal it is
    if (captured != nullptr) std::fclose(captured);
    captured = nullptr;
    if (saved_stderr >= 0) close(saved_stderr);
    saved_stderr = -1;
  }
  absl::ParseCommandLine(argc, argv);
  const std::string text = StopCapture();
  if (!text.empty()) std::fwrite(text.data(), 1, text.size(), stderr);
}

}  // namespace berth
