// Test helper: checks that a message meant for people uses the one set of
// units (planner/base/units.h) and does not repeat what the message's own
// fields already say. Used by the tests of every component that writes such
// messages (rejections, job and event messages, decision reasons).
// Thread-safe: pure function. testonly.
#ifndef BERTH_PLANNER_BASE_HUMAN_TEXT_TESTING_H_
#define BERTH_PLANNER_BASE_HUMAN_TEXT_TESTING_H_

#include <regex>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace berth {

// Empty if `text` reads as one formatter writes it; else what is wrong.
// `job_id`, if not empty, is the id already carried by the message's own
// job_id field: the text must not quote it again ("job 'a': ..."). Refused:
// raw byte counts ("4294967296 bytes"), millicores ("500 millicores"),
// seconds counts ("90061 s"), absl::FormatDuration's "1h30m0s" and a state
// name repeated in front of the text ("cancelled: ...").
inline std::string HumanTextProblem(absl::string_view text, absl::string_view job_id = "") {
  const std::string s(text);
  if (std::regex_search(s, std::regex("[0-9] ?bytes\\b"))) return "raw byte count: " + s;
  if (absl::StrContains(s, "millicore")) return "millicores (use FormatCpu): " + s;
  if (std::regex_search(s, std::regex("[0-9] s\\b"))) return "raw seconds: " + s;
  if (std::regex_search(s, std::regex("[0-9]+h[0-9]+m0s"))) return "FormatDuration form: " + s;
  if (absl::StartsWith(s, "cancelled:") || absl::StrContains(s, "cancelled: cancelled")) {
    return "state repeated in the message: " + s;
  }
  if (!job_id.empty() && (absl::StrContains(s, absl::StrCat("'", job_id, "'")) ||
                          absl::StrContains(s, absl::StrCat("job ", job_id)))) {
    return "repeats the job id: " + s;
  }
  return "";
}

}  // namespace berth

#endif  // BERTH_PLANNER_BASE_HUMAN_TEXT_TESTING_H_
