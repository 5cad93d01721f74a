// Which of berth-plan's two inputs a JSON file holds, before it is parsed.
#ifndef BERTH_TOOLS_PLAN_LOOKS_LIKE_SNAPSHOT_H_
#define BERTH_TOOLS_PLAN_LOOKS_LIKE_SNAPSHOT_H_

#include "absl/strings/string_view.h"

namespace berth::plan {

// True if the JSON looks like a Snapshot rather than a Workload: it has a
// top-level "generation" or "allowMassCancel", or the first of its "jobs" has
// an "id" and no "spec". One pass over the bytes that only tracks nesting and
// skips strings (no parse, no allocation beyond the keys it compares): the
// real parse that follows reports malformed input.
bool LooksLikeSnapshot(absl::string_view json);

}  // namespace berth::plan

#endif  // BERTH_TOOLS_PLAN_LOOKS_LIKE_SNAPSHOT_H_
