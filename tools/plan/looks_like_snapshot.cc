#include "tools/plan/looks_like_snapshot.h"

#include <cstddef>

#include "absl/strings/ascii.h"

namespace berth::plan {

bool LooksLikeSnapshot(absl::string_view json) {
  int depth = 0;            // open objects and arrays
  int jobs_depth = -1;      // depth inside the top-level "jobs" array
  bool in_first_job = false, first_job_seen = false;
  bool first_has_id = false, first_has_spec = false;
  bool expect_jobs_array = false;
  const size_t n = json.size();
  for (size_t i = 0; i < n; ++i) {
    const char c = json[i];
    if (c == '"') {
      const size_t start = ++i;
      while (i < n && json[i] != '"') i += json[i] == '\\' ? 2 : 1;
      if (i >= n) break;
      const absl::string_view str = json.substr(start, i - start);
      size_t j = i + 1;
      while (j < n && absl::ascii_isspace(static_cast<unsigned char>(json[j]))) ++j;
      if (j >= n || json[j] != ':') continue;  // a value, not a key
      if (depth == 1) {
        if (str == "generation" || str == "allowMassCancel" || str == "allow_mass_cancel") {
          return true;
        }
        expect_jobs_array = str == "jobs";
      } else if (in_first_job && depth == jobs_depth + 1) {
        first_has_id |= str == "id";
        first_has_spec |= str == "spec";
      }
      continue;
    }
    if (c == '{' || c == '[') {
      ++depth;
      if (expect_jobs_array && depth == 2) {
        if (c == '[') jobs_depth = 2;
        expect_jobs_array = false;
      } else if (c == '{' && depth == jobs_depth + 1 && !first_job_seen) {
        in_first_job = first_job_seen = true;
      }
    } else if (c == '}' || c == ']') {
      if (in_first_job && depth == jobs_depth + 1) in_first_job = false;
      if (depth == jobs_depth) jobs_depth = -1;
      --depth;
    } else if (!absl::ascii_isspace(static_cast<unsigned char>(c)) && c != ':' &&
               c != ',' && depth == 1) {
      expect_jobs_array = false;  // "jobs": a scalar
    }
  }
  return first_job_seen && first_has_id && !first_has_spec;
}

}  // namespace berth::plan
