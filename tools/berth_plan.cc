// berth-plan: the dry-run planner for capacity modelling. See
// tools/plan/commands.h and `berth-plan help`.
//
// Output files (--svg) are written atomically and only after the command
// succeeded; the report goes to stdout; progress goes to stderr only when
// stderr is a terminal. Exit status: 0 success, 2 bad flags or input,
// 1 other errors (e.g. an output file cannot be written).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "planner/base/proto_json.h"
#include "planner/base/build_info.h"
#include "tools/plan/commands.h"

namespace {

int ExitCodeFor(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
      return 2;
    default:
      return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  using berth::plan::Usage;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::cerr << Usage("");
    return 2;
  }
  std::string command = args[0];
  args.erase(args.begin());
  if (command == "--version" || command == "version") {
    std::cout << berth::VersionLine("berth-plan") << "\n";
    return 0;
  }
  if (command == "help" || command == "--help" || command == "-h") {
    std::cout << Usage(args.empty() ? "" : args[0]);
    return 0;
  }
  struct Entry {
    const char* name;
    berth::plan::Command run;
  };
  const Entry commands[] = {{"now", berth::plan::RunNow},
                            {"simulate", berth::plan::RunSimulate},
                            {"compare", berth::plan::RunCompare},
                            {"sweep", berth::plan::RunSweep},
                            {"chart", berth::plan::RunChart},
                            {"rightsize", berth::plan::RunRightSize}};
  berth::plan::Command run = nullptr;
  for (const Entry& e : commands) {
    if (command == e.name) run = e.run;
  }
  if (run == nullptr) {
    std::cerr << "berth-plan: unknown command '" << command << "'\n\n" << Usage("");
    return 2;
  }
  for (const std::string& a : args) {
    if (a == "--help" || a == "-h") {
      std::cout << Usage(command);
      return 0;
    }
  }
  berth::plan::CommandEnv env;
  bool tty = isatty(STDERR_FILENO) == 1;
  if (tty) {
    env.progress = [](const std::string& msg) {
      std::fprintf(stderr, "\r\033[K%s", msg.c_str());
      std::fflush(stderr);
    };
  }
  auto out = run(args, env);
  if (tty) std::fprintf(stderr, "\r\033[K");
  if (!out.ok()) {
    std::cerr << "berth-plan " << command << ": " << out.status().message() << "\n";
    return ExitCodeFor(out.status());
  }
  for (const auto& [path, contents] : out->files) {
    if (auto s = berth::WriteFileAtomically(path, contents); !s.ok()) {
      std::cerr << "berth-plan " << command << ": " << s.message() << "\n";
      return 1;
    }
  }
  if (out->write) {
    out->write(&std::cout);
  } else {
    std::cout << out->text;
  }
  std::cout.flush();
  const int code = std::cout.good() ? 0 : 1;
  // The report is out and every file written: the process leaves without
  // freeing what the command built (a million-job `now` spent a tenth of
  // its run in destructors and munmap). Nothing registered at exit is ours.
  std::fflush(nullptr);
  std::_Exit(code);
}
