// berthd's command line, parsed by absl with absl's own refusals turned into
// berthd's: a flag value out of range or of the wrong type
// (--max_workers=2147483648), an unknown flag or a missing --flagfile gives
// the JSON "berthd did not start" line and exit status 2, like every other
// refused setting, instead of absl's plain text and exit 1. --help and
// --version print and exit 0 as absl does.
//
// Not thread-safe: call once, from main(), before any other thread starts.
#ifndef BERTH_SERVER_COMMAND_LINE_H_
#define BERTH_SERVER_COMMAND_LINE_H_

#include "absl/status/status.h"

namespace berth {

// Logs why berthd did not start and returns its exit status.
using RefuseStartFn = int (*)(const absl::Status& status);

// absl::ParseCommandLine(argc, argv). While it runs, stderr goes to a
// temporary file; if absl then exits after writing an error there, `refuse`
// gets INVALID_ARGUMENT with absl's message (lines joined by "; ") and the
// process exits with what `refuse` returns. Anything absl wrote on success
// is passed on to stderr.
void ParseBerthdCommandLine(int argc, char** argv, RefuseStartFn refuse);

}  // namespace berth

#endif  // BERTH_SERVER_COMMAND_LINE_H_
