#include "tools/fidelity/workload.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/util/time_util.h"
#include "tools/fidelity/py_random.h"

namespace berth::fidelity {
namespace {

using google::protobuf::util::TimeUtil;

const std::vector<std::string>& Workspaces() {
  static const auto* kWorkspaces =
      new std::vector<std::string>{"proj-a", "proj-b", "proj-c", "background"};
  return *kWorkspaces;
}

// Python's round(x, 3): the double nearest to x correctly rounded to three
// decimals (printf rounds the exact binary value, as Python does).
double RoundMillis(double x) {
  return std::strtod(absl::StrFormat("%.3f", x).c_str(), nullptr);
}

}  // namespace

std::string PythonFloatRepr(double value) {
  char buf[64];
  const std::to_chars_result r =
      std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::fixed);
  std::string s(buf, r.ptr);
  if (s.find('.') == std::string::npos) s += ".0";
  return s;
}

v1::Snapshot GenerateWorkload(const WorkloadOptions& options) {
  PyRandom rnd(options.seed);
  const std::vector<int64_t> cpus = {250, 500, 1000};
  const std::vector<int64_t> mebibytes = {64, 96, 128, 192, 256};
  v1::Snapshot snapshot;
  snapshot.set_generation(1);
  for (int i = 0; i < options.jobs; ++i) {
    // The order of the generator's calls is the Python tool's: workspace,
    // duration, cpu, memory.
    const std::string& ws = Workspaces()[rnd.Random() < 0.8 ? i % 4 : 3];
    const bool background = ws == "background";
    // Continuous durations: no two jobs end at the same simulated instant by
    // construction (the simulation would plan such ends together, berthd one
    // by one as its events come).
    const double minutes = background ? rnd.Uniform(10, 20) : rnd.Uniform(1, 10);
    const double secs = RoundMillis(minutes * options.scale);
    v1::JobSpec* job = snapshot.add_jobs();
    job->set_id(absl::StrFormat("%s.%03d.%s", ws, i, options.tag));
    job->set_workspace(ws);
    job->set_action("run");
    job->set_image(options.image);
    job->add_argv("sleep");
    job->add_argv(PythonFloatRepr(secs));
    job->set_priority(background ? 0 : 1);
    job->mutable_resources()->set_cpu_millis(rnd.Choice(cpus));
    job->mutable_resources()->set_memory_bytes(rnd.Choice(mebibytes) << 20);
    *job->mutable_expected_duration() =
        TimeUtil::MillisecondsToDuration(std::llround(secs * 1000));
    *job->mutable_max_duration() =
        TimeUtil::SecondsToDuration(static_cast<int64_t>(std::nearbyint(secs * 10 + 60)));
    *job->mutable_created_at() = TimeUtil::NanosecondsToTimestamp(
        absl::ToUnixNanos(options.created));
  }
  return snapshot;
}

}  // namespace berth::fidelity
