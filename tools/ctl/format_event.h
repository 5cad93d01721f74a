// berthctl's text for one event (berthctl watch, berthctl events).
#ifndef BERTH_TOOLS_CTL_FORMAT_EVENT_H_
#define BERTH_TOOLS_CTL_FORMAT_EVENT_H_

#include <string>

#include "berth/v1/event.pb.h"

namespace berth::ctl {

// One line: "17  14:20:05  JOB_STATE_CHANGED  job-1 (ws1)  QUEUED -> ADMITTED",
// with the failure cause, exit code, observed use and message when present.
std::string EventLine(const v1::Event& e);

}  // namespace berth::ctl

#endif  // BERTH_TOOLS_CTL_FORMAT_EVENT_H_
