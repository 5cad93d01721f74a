// Command-line parsing for berth-plan (tools/base/cli_args.h, so that every
// error is a clear one-line message and the tool exits 2), and budgets from
// flags or a budgets file, with comma lists for sweeps.
// Thread-compatible.
#ifndef BERTH_TOOLS_PLAN_ARGS_H_
#define BERTH_TOOLS_PLAN_ARGS_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "planner/model/model.h"
#include "tools/base/cli_args.h"
#include "tools/plan/input.h"

namespace berth {
namespace plan {

using FlagSpec = cli::FlagSpec;
using Args = cli::Args;

// cli::ParseFlags (tools/base/cli_args.h); an unknown flag's message names
// the subcommand and its help ("unknown flag --x for 'simulate' (see
// berth-plan help simulate)").
[[nodiscard]] absl::StatusOr<Args> ParseArgs(const std::vector<std::string>& argv,
                                             const std::vector<FlagSpec>& specs,
                                             const std::string& command);

// The flags every budget-taking subcommand accepts.
std::vector<FlagSpec> BudgetFlagSpecs();

// Candidate values per budget dimension: one value each unless sweeping.
struct BudgetChoices {
  std::vector<int64_t> memory;
  std::vector<int64_t> cpu;
  std::vector<int32_t> workers;
  std::vector<int32_t> workspace_max;
  // Pool name -> candidate max_workers, sorted by name.
  std::vector<std::pair<std::string, std::vector<int32_t>>> pools;
  // Candidate node inventories (--nodes), each with its label as given
  // ("4x64Gi/16", a file name); empty: no inventory (one host).
  std::vector<std::pair<std::string, std::vector<planner::Node>>> nodes;
  // What the sources said that the plan does not model (a saved GetBudgets
  // answer's nodeUse), one sentence each, for the report's notes.
  std::vector<std::string> notes;
  size_t combinations() const;
};

// One --nodes value: "NxMEM/CPUS" (N nodes node-1..node-N of MEM memory and
// CPUS cores, no per-node slot limit; "MEM/CPUS" = one node) or a nodes
// file, lines "ID MEMORY CPUS [workers=N] [KEY=VALUE...]" ('#' comments;
// labels such as pool=database). Errors name the flag or "<path>:<line>".
[[nodiscard]] absl::StatusOr<std::vector<planner::Node>> ParseNodes(const std::string& value);

// The --nodes label of Combinations(choices)[index] ("" without --nodes).
std::string NodesLabel(const BudgetChoices& choices, size_t index);

// Reads a budgets file: either JSON (berth.v1.Budgets, e.g. a GetBudgets
// answer saved as it is: its nodes, each with its capacity for jobs as the
// plans use it, are kept; hostnames, reserves, strays and warnings are
// berthd's own report; nodeUse, what jobs held then, adds a sentence to
// `notes` if not null) or lines "key = value" with keys memory, cpus,
// max-workers, workspace-max and pool-max (NAME=N), '#' comments; values in
// human units. Errors name "<path>:<line>" and the key.
[[nodiscard]] absl::StatusOr<planner::Budgets> ReadBudgetsFile(
    const std::string& path, std::vector<std::string>* notes = nullptr);

// Budgets by one rule: each field (memory, cpus, max workers, workspace max,
// each pool's max, the node list as a whole) comes from the highest of, in
// increasing precedence, the input file's budgets, the --budgets file and
// the flags (--memory --cpus --max-workers --workspace-max --pool-max
// --nodes) that sets it (a file sets a number > 0 or a list that is not
// empty). With a node list, jobs are placed per node as berthd places them
// and memory, cpus and max workers from any source cap the whole cluster on
// top; those no source sets (or a flag sets to 0) are the nodes' sums
// (Combinations()). With `allow_lists`, flags take comma lists ("8,16,24";
// --pool-max database=2,4,gpu=1; --nodes A,B). Every combination and node
// list is validated: INVALID_ARGUMENT naming the source and the field or
// node (ids unique and non-empty, memory and cpu > 0, workers >= 0), never a
// value quietly left out.
[[nodiscard]] absl::StatusOr<BudgetChoices> ResolveBudgets(const Args& args,
                                                           const PlanInput& input,
                                                           bool allow_lists);

// The cartesian product, in a stable order (nodes, memory, cpu, workers,
// pools, workspace max; each ascending as given). With nodes, memory, cpu or
// workers not given are the nodes' sums (workers: their slots, or one per
// core when a node has no slot limit).
std::vector<planner::Budgets> Combinations(const BudgetChoices& choices);

}  // namespace plan
}  // namespace berth

#endif  // BERTH_TOOLS_PLAN_ARGS_H_
