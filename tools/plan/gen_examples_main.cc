// Writes the example workloads (see tools/plan/examples_gen.h).
//
//   gen_examples DIR                 burst.json, week.json, starvation.json
//   gen_examples --week JOBS WS [DAYS] FILE
//                                    a mixed workload of at least JOBS jobs
//                                    from WS workspaces over DAYS days
//                                    (default 7), seed 2 (benchmarks)
//
// Exit status 0 on success, 2 on bad arguments, 1 on I/O errors.
#include <iostream>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "planner/base/proto_json.h"
#include "tools/plan/examples_gen.h"

namespace {

int Usage() {
  std::cerr << "usage: gen_examples DIR | gen_examples --week JOBS WORKSPACES [DAYS] FILE\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if ((argc == 5 || argc == 6) && std::string(argv[1]) == "--week") {
    int jobs = 0, workspaces = 0, days = 7;
    if (!absl::SimpleAtoi(argv[2], &jobs) || jobs <= 0 ||
        !absl::SimpleAtoi(argv[3], &workspaces) || workspaces <= 0 ||
        (argc == 6 && (!absl::SimpleAtoi(argv[4], &days) || days <= 0))) {
      return Usage();
    }
    auto json = berth::plan::WorkloadToJsonLines(
        berth::plan::MixedWeekWorkload(2, jobs, workspaces, days));
    if (!json.ok()) {
      std::cerr << json.status().message() << "\n";
      return 1;
    }
    if (auto s = berth::WriteFileAtomically(argv[argc - 1], *json); !s.ok()) {
      std::cerr << s.message() << "\n";
      return 1;
    }
    return 0;
  }
  if (argc != 2) return Usage();
  auto files = berth::plan::ExampleFiles();
  if (!files.ok()) {
    std::cerr << files.status().message() << "\n";
    return 1;
  }
  for (const auto& f : *files) {
    std::string path = absl::StrCat(argv[1], "/", f.name);
    if (auto s = berth::WriteFileAtomically(path, f.contents); !s.ok()) {
      std::cerr << s.message() << "\n";
      return 1;
    }
    std::cout << "wrote " << path << " (" << f.contents.size() << " bytes)\n";
  }
  return 0;
}
