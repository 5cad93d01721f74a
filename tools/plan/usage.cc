#include "absl/strings/str_cat.h"
#include "tools/plan/commands.h"

namespace berth {
namespace plan {
namespace {

constexpr char kBudgetFlags[] = R"(Budgets: each field comes from the first of these that sets it: the flags,
the --budgets file, the input file's own "budgets" (a file sets a number > 0
or a node list that is not empty). A node list, from --nodes or a file (a
saved GetBudgets answer included), places jobs per node as berthd does; then
memory, cpus and max workers from any source cap the whole cluster on top,
and those none sets are the nodes' sums (workers: their slots, one per core
for a node without a slot limit; a flag of 0 asks for the sum). A field that
cannot be honoured (a node of size 0, a duplicate node id) is an error.
  --memory SIZE         memory for jobs, e.g. 256Gi, 512Mi, 1.5G
  --cpus N              CPU in cores or millicores, e.g. 32, 1.5, 500m
  --max-workers N       concurrently running jobs
  --pool-max POOL=N     per-pool worker limit, e.g. database=4 (repeatable)
  --workspace-max N     running jobs per workspace (0 = no cap)
  --budgets FILE        budgets file: JSON berth.v1.Budgets (a GetBudgets
                        answer as saved), or lines "memory = 256Gi",
                        "cpus = 32", "max-workers = 24",
                        "pool-max = database=4", "workspace-max = 8"
  --nodes NODES         a node inventory: 4x64Gi/16 (4 nodes of 64 GiB and 16
                        cores) or a nodes file, lines "ID MEMORY CPUS
                        [workers=N] [pool=NAME]"; replaces the files' node
                        lists (sweep: a comma list, e.g. 2x64Gi/16,3x64Gi/16)
Policy:
  --policy drf|fifo     ranking policy (default drf)
  --no-backfill         strict order: nothing starts ahead of a waiting job
  --default-duration D  duration assumed for jobs without one (default 1h)
  --aging-interval D    a waiting job's priority rises by one per D waited, up
                        to the highest queued priority (default 2h; 0 = off)
  --aging-top-memory D  how long that top priority is remembered after its
                        last job left the queue (default 24h; 0 = not)
  --start-latency D     the executor's start latency: a job's container runs
                        D after its admission when it starts alone (default
                        250ms, measured by berthd on this project's machines:
                        berth_start_latency_by_starts_seconds)
  --start-contention D  what each other start in flight adds to a start: k
                        starts begun together take --start-latency + (k-1) * D
                        each (shared like CPU time; default 70ms, measured
                        as above; 0 = starts do not slow each other)
  --start-jitter D      the executor's noise: each start moves by up to +-D at
                        random (uniform, one draw per job; default 0), so that
                        runs with several --jitter-seed values show which
                        decisions turn on a few milliseconds
  --jitter-seed N       the draws of --start-jitter (default 0; the same seed
                        gives the same run)
  --start-parallelism N the executor's start slots: at most N containers are
                        started at once, the others wait for a slot
                        (default 4, berthd's --start_parallelism; 0 = unbounded)
  --finish-latency D    the executor's finish latency: a job's capacity comes
                        back D after its container ends (default 50ms;
                        berthd: berth_finish_latency_seconds)
  --executor-metrics SRC  take the latencies from a berthd's metrics:
                        http://HOST:PORT (its --metrics_listen) or a file
                        saved from it (the start model fitted to its starts by
                        how many ran together, else the medians); the latency
                        flags win
Output:
  --json | --csv        machine-readable report instead of tables
)";

}  // namespace

std::string Usage(const std::string& command) {
  if (command == "now") {
    return absl::StrCat(
        "usage: berth-plan now FILE [--at OFFSET [--state-out OUT.json]] [--limit N]\n"
        "                      [budget flags] [--json|--csv]\n\n"
        "The plan for FILE as-is (a snapshot, or a workload's running jobs and the\n"
        "jobs arriving at its start; with --at, the moment OFFSET of its run):\n"
        "which jobs start, and for each waiting job its reason, shortfall, queue\n"
        "position and ETA.\n\n",
        kBudgetFlags,
        "  --at OFFSET           e.g. 6h: the plan at that moment of the run 'simulate'\n"
        "                        makes: jobs that ran by then are done, those running\n"
        "                        hold their capacity from their admission, the rest\n"
        "                        are queued (jobs that have not arrived, or whose\n"
        "                        dependency has not, are absent)\n"
        "  --state-out OUT.json  with --at: also write that moment as a workload file\n"
        "                        (running jobs with their starts and nodes, queued\n"
        "                        jobs with their queuedAt, jobs still to arrive, and\n"
        "                        the planner's memory: reservation holder, fair turns,\n"
        "                        aging's top priority); 'now OUT.json' plans it again\n"
        "                        as the run goes on. Not carried: running jobs' actual\n"
        "                        durations (they end at their estimate)\n"
        "  --timings             add wall times of reading, planning and estimating\n"
        "  --limit N             list only the first N jobs in ranking order (the\n"
        "                        summary, first, counts them all)\n");
  }
  if (command == "simulate") {
    return absl::StrCat(
        "usage: berth-plan simulate FILE [budget flags] [--svg OUT.svg] [--json|--csv]\n\n"
        "Runs the workload to completion with the planner called at every arrival\n"
        "and completion: makespan, waits (p50/p95/max) overall, by priority and by\n"
        "workspace, utilisation (time-weighted mean and peak), never-fitting jobs,\n"
        "the longest-waiting job and why.\n\n",
        kBudgetFlags, "  --svg FILE            also write the usage chart\n",
        "  --until OFFSET        instead of the report, write the state at that moment\n"
        "                        as a workload file (see 'now --state-out') to stdout\n"
        "  --state-out OUT.json  with --until: write it to OUT.json instead\n");
  }
  if (command == "compare") {
    return absl::StrCat(
        "usage: berth-plan compare FILE [budget flags] [--baseline-max-workers N]\n"
        "                          [--svg OUT.svg] [--json|--csv]\n\n"
        "Berth's planner beside the count-only baseline the old backend used\n"
        "(MAX_WORKERS=N, FIFO, blind to memory; N defaults to --max-workers), with\n"
        "the peak memory the baseline would have committed above the budget.\n\n",
        kBudgetFlags);
  }
  if (command == "rightsize") {
    return absl::StrCat(
        "usage: berth-plan rightsize FILE [budget flags] [--json|--csv]\n\n"
        "The workload as estimated beside the same workload with each job's memory\n"
        "estimate lowered to what its (workspace, action)'s earlier runs support\n"
        "(jobs' actualPeakMemoryBytes; as the RightSize RPC suggests): makespan,\n"
        "waits, utilisation and reserved GiB-hours before and after.\n\n",
        kBudgetFlags);
  }
  if (command == "sweep") {
    return absl::StrCat(
        "usage: berth-plan sweep FILE [budget flags with comma lists]\n"
        "                        [--target-p95-wait D] [--svg OUT.svg] [--threads N]\n\n"
        "One simulation per combination of the listed budgets, e.g.\n"
        "  --max-workers 8,16,24 --memory 128Gi,256Gi --pool-max database=2,4\n"
        "Rows are sorted cheapest first (each budget as a fraction of the largest\n"
        "value swept, summed); with --target-p95-wait the cheapest combination\n"
        "whose p95 wait meets the target (and where every job can run) is marked.\n\n",
        kBudgetFlags);
  }
  if (command == "chart") {
    return absl::StrCat(
        "usage: berth-plan chart FILE --svg OUT.svg [budget flags] [--baseline]\n\n"
        "Simulates FILE and writes an SVG: memory, CPU and worker slots against\n"
        "their budgets over time, and the queue length. --baseline overlays the\n"
        "count-only baseline.\n\n",
        kBudgetFlags);
  }
  return "usage: berth-plan COMMAND FILE [flags]\n\n"
         "Dry-run planning and capacity modelling with Berth's own planner.\n"
         "FILE is a workload (berth.v1.Workload) or snapshot (berth.v1.Snapshot) in\n"
         "the proto3 JSON mapping, e.g. examples/burst.json.\n\n"
         "Commands:\n"
         "  now       the plan for the file as-is, with reasons and ETAs\n"
         "  simulate  run the workload to completion: makespan, waits, utilisation\n"
         "  compare   Berth vs the count-only MAX_WORKERS baseline\n"
         "  sweep     one row per combination of budget lists\n"
         "  chart     write an SVG chart of a simulation\n"
         "  rightsize the workload with history-based memory estimates, before/after\n"
         "  help CMD  flags of one command\n\n"
         "Exit status: 0 success, 2 bad flags or input (nothing written), 1 other errors.\n";
}

}  // namespace plan
}  // namespace berth
