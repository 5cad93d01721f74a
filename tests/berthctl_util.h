// Shared by the berthctl tests (testonly): berthctl run as a subprocess
// against a BerthdProcess, and the snapshot files it pushes.
#ifndef BERTH_TESTS_BERTHCTL_UTIL_H_
#define BERTH_TESTS_BERTHCTL_UTIL_H_

#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "planner/base/proto_json.h"
#include "tests/berthd_process.h"
#include "tools/base/subprocess.h"

namespace berth::testing {

inline constexpr int64_t kMiB = int64_t{1} << 20;
inline constexpr char kBerthctl[] = "tools/berthctl";

inline std::string Describe(const ProcessResult& r) {
  return absl::StrCat("exit ", r.exit_code, "\n--- stdout:\n", r.out, "\n--- stderr:\n", r.err);
}

// Job ids are container names ("berth-<id>"), global on the Docker host:
// unique per test process so that concurrent runs never collide (a random
// suffix: pids repeat across Bazel's sandboxes, which have their own pid
// namespaces).
inline std::string Id(absl::string_view name) {
  static const uint32_t run = absl::Uniform<uint32_t>(absl::BitGen(), 0, 1u << 30);
  return absl::StrCat(name, "-", run);
}

inline bool IsTerminal(v1::JobState s) {
  return s == v1::JOB_STATE_SUCCEEDED || s == v1::JOB_STATE_FAILED ||
         s == v1::JOB_STATE_CANCELLED || s == v1::JOB_STATE_REJECTED;
}

// Runs berthctl against `b` with the token of `role` (via the environment,
// as scripts do) and extra arguments.
class Ctl {
 public:
  explicit Ctl(const BerthdProcess& b) : b_(b) {}
  ProcessResult Run(Role role, std::vector<std::string> args,
                    std::map<std::string, std::string> env = {}) const {
    std::vector<std::string> argv = {kBerthctl, "--server", b_.target(), "--timeout", "20s"};
    argv.insert(argv.end(), args.begin(), args.end());
    env.emplace("BERTH_TOKEN", TokenFor(role));
    return RunProcess(argv, env, absl::Seconds(60));
  }
  template <typename M>
  M Json(Role role, std::vector<std::string> args) const {
    args.push_back("--json");
    ProcessResult r = Run(role, args);
    M m;
    EXPECT_EQ(r.exit_code, 0) << Describe(r);
    absl::Status s = ParseJsonMessage(r.out, "berthctl output", &m);
    EXPECT_TRUE(s.ok()) << s << "\n" << Describe(r);
    return m;
  }

 private:
  const BerthdProcess& b_;
};

inline std::string WriteSnapshot(const v1::Snapshot& s, const std::string& name) {
  std::string path = absl::StrCat(TmpDir(), "/", name);
  absl::StatusOr<std::string> json = ToJson(s);
  EXPECT_TRUE(json.ok());
  EXPECT_TRUE(WriteFileAtomically(path, *json).ok());
  return path;
}

// Revisions of JSON event lines (berthctl --json, the Python --log).
inline std::vector<uint64_t> Revisions(const std::string& text) {
  std::vector<uint64_t> out;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    v1::Event e;
    if (!ParseJsonMessage(line, "event line", &e).ok()) continue;  // a partial last line
    out.push_back(e.revision());
  }
  return out;
}

inline void ExpectContiguousFromOne(const std::vector<uint64_t>& revs) {
  for (size_t i = 0; i < revs.size(); ++i) {
    ASSERT_EQ(revs[i], i + 1) << "gap or repeat at line " << i + 1;
  }
}

}  // namespace berth::testing

#endif  // BERTH_TESTS_BERTHCTL_UTIL_H_
