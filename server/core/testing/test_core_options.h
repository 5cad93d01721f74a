// The ExecutorCore options the in-process tests run with: the test jobs'
// images (executor/reconcile/testing/test_jobs.h, "berth-test/...")
// allowed, everything else as berthd's defaults. Tests set what they test
// on top.
#ifndef BERTH_SERVER_CORE_TESTING_TEST_CORE_OPTIONS_H_
#define BERTH_SERVER_CORE_TESTING_TEST_CORE_OPTIONS_H_

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "server/core/executor_core.h"

namespace berth::testing {

inline ExecutorCoreOptions TestCoreOptions() {
  ExecutorCoreOptions o;
  o.image_allowed = [](absl::string_view image) {
    return absl::StartsWith(image, "berth-test/");
  };
  return o;
}

}  // namespace berth::testing

#endif  // BERTH_SERVER_CORE_TESTING_TEST_CORE_OPTIONS_H_
