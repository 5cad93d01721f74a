// Crash points: named places where a test can make the process die as if
// kill -9'd, to prove recovery (DESIGN.md "Recovery").
//
//   BERTH_CRASH_POINT=reconcile.after_admit:3 berthd ...
//
// makes the 3rd time CrashPoint("reconcile.after_admit") runs SIGKILL the
// process (":n" optional, default 1). Without the environment variable every
// CrashPoint is one relaxed atomic load. The variable is read once, at the
// first call. Thread-safe.
#ifndef BERTH_PLANNER_BASE_CRASH_POINT_H_
#define BERTH_PLANNER_BASE_CRASH_POINT_H_

namespace berth {

void CrashPoint(const char* name);

}  // namespace berth

#endif  // BERTH_PLANNER_BASE_CRASH_POINT_H_
