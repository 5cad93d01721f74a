#include "tools/fidelity/kept_run.h"

#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "planner/base/proto_json.h"
#include "planner/base/status_macros.h"

namespace berth::fidelity {

double Seconds(const google::protobuf::Timestamp& t) {
  return static_cast<double>(t.seconds()) + static_cast<double>(t.nanos()) / 1e9;
}

absl::StatusOr<KeptRun> ReadKeptRun(const std::string& dir, const KeptRun& defaults) {
  const std::string real_path = absl::StrCat(dir, "/real.json");
  ASSIGN_OR_RETURN(std::string text, ReadFileToString(real_path));
  const nlohmann::json real = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (real.is_discarded() || !real.is_object() || !real.contains("t0") ||
      !real["t0"].is_number() || !real.contains("jobs") || !real["jobs"].is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(real_path, ": not a kept run (an object with t0 and jobs)"));
  }
  KeptRun run = defaults;
  run.jobs.clear();
  run.died.clear();
  run.t0 = real["t0"].get<double>();
  if (real.contains("scale") && real["scale"].is_number()) run.scale = real["scale"].get<double>();
  if (real.contains("seed") && real["seed"].is_number_unsigned()) {
    run.seed = real["seed"].get<uint64_t>();
  }
  if (real.contains("load_average") && real["load_average"].is_number()) {
    run.load_average = real["load_average"].get<double>();
  }
  for (const auto& [id, job_json] : real["jobs"].items()) {
    v1::Job job;
    RETURN_IF_ERROR(ParseJsonMessage(job_json.dump(), absl::StrCat(real_path, ": jobs.", id), &job));
    run.jobs.emplace(id, std::move(job));
  }

  const std::string die_path = absl::StrCat(dir, "/die.txt");
  ASSIGN_OR_RETURN(std::string die, ReadFileToString(die_path));
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(die, '\n', absl::SkipWhitespace())) {
    ++line_number;
    const std::vector<absl::string_view> fields =
        absl::StrSplit(line, ' ', absl::SkipWhitespace());
    int64_t nanos = 0;
    if (fields.size() != 2 || !absl::SimpleAtoi(fields[0], &nanos)) {
      return absl::InvalidArgumentError(absl::StrCat(
          die_path, ":", line_number, ": expected \"<timeNano> <job id>\", got \"", line, "\""));
    }
    run.died.emplace(std::string(fields[1]), static_cast<double>(nanos) / 1e9);  // first wins
  }
  return run;
}

absl::Status WriteRealJson(const std::string& dir, const KeptRun& run) {
  nlohmann::ordered_json real;
  real["t0"] = run.t0;
  nlohmann::ordered_json jobs = nlohmann::ordered_json::object();
  for (const auto& [id, job] : run.jobs) {
    ASSIGN_OR_RETURN(std::string job_json, ToJson(job));
    jobs[id] = nlohmann::ordered_json::parse(job_json);
  }
  real["jobs"] = std::move(jobs);
  real["scale"] = run.scale;
  real["seed"] = run.seed;
  real["load_average"] = run.load_average;  // NaN is written as null
  return WriteFileAtomically(absl::StrCat(dir, "/real.json"), real.dump());
}

absl::Status WriteDieFile(const std::string& dir,
                          const std::vector<std::pair<int64_t, std::string>>& exits) {
  std::string text;
  for (const auto& [nanos, job] : exits) absl::StrAppend(&text, nanos, " ", job, "\n");
  return WriteFileAtomically(absl::StrCat(dir, "/die.txt"), text);
}

}  // namespace berth::fidelity
