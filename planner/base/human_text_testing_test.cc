#include "planner/base/human_text_testing.h"

#include <string>

#include "gtest/gtest.h"

namespace berth {
namespace {

struct Case {
  const char* text;
  const char* job_id;
  bool ok;
};

// The forms berthd's messages once used (raw byte counts, "fits:") are refused; the formatter's are not.
TEST(HumanTextProblemTest, RefusesTheOldForms) {
  const Case cases[] = {
      {"needs 4294967296 bytes of memory but the whole budget is 1073741824", "", false},
      {"fits: 96 MiB memory, 500 millicores", "", false},
      {"cancelled: cancelled: absent from snapshot generation 3", "", false},
      {"cancelled: withdrawn by the job-server", "", false},
      {"job 'a': needs 4 GiB memory", "a", false},
      {"expected_duration is 90000000 s; the maximum is 31622400 s (366 days)", "", false},
      {"stopped by Berth after max_duration 1h30m0s", "", false},
      {"needs 4 GiB memory but the whole budget is 1 GiB", "", true},
      {"fits: 96 MiB memory, 0.5 cores", "", true},
      {"absent from snapshot generation 3", "", true},
      {"stopped by Berth after max_duration 1h30m", "", true},
      {"depends on unknown job 'b'", "a", true},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(HumanTextProblem(c.text, c.job_id).empty(), c.ok) << c.text;
  }
}

}  // namespace
}  // namespace berth
