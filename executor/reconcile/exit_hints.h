// ExitHints: what the engine's "die" and "oom" events said about this
// instance's containers, kept until a reconcile pass has acted on them.
//
// Docker sends "die" (with the exit code) before its container list says the
// container exited (tens of milliseconds later, after its clean-up). A pass
// that only trusted the list would miss the exit and leave the job holding
// its capacity until the next tick. With a hint the pass finalises exactly
// that container at once: it inspects it (the engine's own record, which
// answers once the exit is recorded) and, should the inspection still say
// "running", uses the event's exit code and OOM flag. The list stays the
// source of truth for everything else, and the periodic pass remains the
// safety net for lost events.
//
// A hint names the container: a requeued job's next container (another id)
// is never finalised by an old container's event.
//
// Thread-safe.
#ifndef BERTH_EXECUTOR_RECONCILE_EXIT_HINTS_H_
#define BERTH_EXECUTOR_RECONCILE_EXIT_HINTS_H_

#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "executor/runtime/runtime.h"

namespace berth {

struct ExitHint {
  // The engine's container id ("" when the event carried none: then it
  // matches whatever container the job has).
  std::string container_id;
  // The "die" event arrived (an "oom" alone is not an exit).
  bool died = false;
  // From the "die" event, when it carried one.
  std::optional<int> exit_code;
  // An "oom" event came for this container.
  bool oom_killed = false;
  // The engine's time of the "die" (InfinitePast when unknown).
  absl::Time exited_at = absl::InfinitePast();
  // When Berth received the latest event (its own clock).
  absl::Time received_at = absl::InfinitePast();

  // Whether the hint is about this container.
  bool Matches(const std::string& id) const {
    return container_id.empty() || id.empty() || container_id == id;
  }
};

struct ExitHintsOptions {
  // A hint no pass acted on (its container never showed up in a list, e.g.
  // it was removed) is dropped after this long.
  absl::Duration keep = absl::Seconds(30);
};

class ExitHints {
 public:
  explicit ExitHints(ExitHintsOptions options = {}) : options_(options) {}

  // Records an event received at `now`. Returns true for a "die": a pass
  // can finalise the job now. "oom" is remembered for the "die" that
  // follows; "destroy" forgets the container; other actions are ignored.
  bool Note(const RuntimeEvent& event, absl::Time now);

  // The job's hint if its container died (nullopt otherwise).
  std::optional<ExitHint> Died(const std::string& job_id) const;

  // The pass acted on the job's container `container_id` (finalised it, or
  // the list shows it finished): drops its hint. A hint about another
  // container of the same job is kept.
  void Forget(const std::string& job_id, const std::string& container_id);

  // Drops hints received before now - keep.
  void Expire(absl::Time now);

  size_t size() const;

 private:
  const ExitHintsOptions options_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, ExitHint> hints_ ABSL_GUARDED_BY(mu_);
};

}  // namespace berth

#endif  // BERTH_EXECUTOR_RECONCILE_EXIT_HINTS_H_
