#include "tools/plan/args.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "planner/convert/convert.h"
#include "planner/base/status_macros.h"
#include "tools/base/cli_args.h"
#include "planner/base/proto_json.h"
#include "planner/base/units.h"

namespace berth {
namespace plan {
namespace {

absl::StatusOr<int32_t> ParseCount(absl::string_view what, absl::string_view text) {
  int32_t v = 0;
  absl::string_view t = absl::StripAsciiWhitespace(text);
  if (!absl::SimpleAtoi(t, &v) || v < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": \"", text, "\": expected a whole number >= 0"));
  }
  return v;
}

template <typename T, typename F>
absl::StatusOr<std::vector<T>> ParseList(const std::string& what, const std::string& text,
                                         bool allow_lists, F parse) {
  ASSIGN_OR_RETURN(std::vector<std::string> items, cli::SplitList(what, text));
  if (items.size() > 1 && !allow_lists) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": \"", text, "\": one value expected (comma lists are for 'sweep')"));
  }
  std::vector<T> out;
  for (const std::string& item : items) {
    ASSIGN_OR_RETURN(T v, parse(what, item));
    if (std::find(out.begin(), out.end(), v) != out.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": \"", text, "\": \"", item, "\" is listed twice"));
    }
    out.push_back(v);
  }
  return out;
}

// "database=2,4,gpu=1" -> {database: [2,4], gpu: [1]}.
absl::Status ParsePoolMax(const std::string& text, bool allow_lists,
                          std::map<std::string, std::vector<int32_t>>* pools) {
  const std::string what = "--pool-max";
  ASSIGN_OR_RETURN(std::vector<std::string> items, cli::SplitList(what, text));
  std::string current;
  for (const std::string& item : items) {
    std::string value = item;
    if (size_t eq = item.find('='); eq != std::string::npos) {
      current = std::string(absl::StripAsciiWhitespace(item.substr(0, eq)));
      value = item.substr(eq + 1);
      if (current.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(what, ": \"", text, "\": empty pool name before '='"));
      }
      (*pools)[current].clear();
    } else if (current.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": \"", text, "\": expected POOL=N, e.g. database=4"));
    }
    ASSIGN_OR_RETURN(int32_t n, ParseCount(absl::StrCat(what, " ", current), value));
    auto& list = (*pools)[current];
    list.push_back(n);
    if (list.size() > 1 && !allow_lists) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": \"", text, "\": one value per pool expected (lists are for 'sweep')"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Args> ParseArgs(const std::vector<std::string>& argv,
                               const std::vector<FlagSpec>& specs,
                               const std::string& command) {
  return cli::ParseFlags(argv, specs,
                        absl::StrCat(" for '", command, "' (see berth-plan help ", command, ")"));
}

std::vector<FlagSpec> BudgetFlagSpecs() {
  return {{"memory"},          {"cpus"},    {"max-workers"},
          {"pool-max", true, true}, {"workspace-max"}, {"budgets"}};
}

size_t BudgetChoices::combinations() const {
  size_t n = memory.size() * cpu.size() * workers.size() * workspace_max.size();
  for (const auto& [name, list] : pools) n *= list.size();
  return n;
}

absl::StatusOr<planner::Budgets> ReadBudgetsFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(text), "{")) {
    v1::Budgets proto;
    RETURN_IF_ERROR(ParseJsonMessage(text, path, &proto));
    return planner::FromProto(proto);
  }
  planner::Budgets b;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    if (size_t hash = line.find('#'); hash != absl::string_view::npos) {
      line = line.substr(0, hash);
    }
    line = absl::StripAsciiWhitespace(line);
    if (line.empty()) continue;
    size_t eq = line.find('=');
    std::string where = absl::StrCat(path, ":", line_no);
    if (eq == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": expected \"key = value\", got \"", line, "\""));
    }
    std::string key(absl::StripAsciiWhitespace(line.substr(0, eq)));
    std::string value(absl::StripAsciiWhitespace(line.substr(eq + 1)));
    std::string what = absl::StrCat(where, ": ", key);
    if (key == "memory") {
      ASSIGN_OR_RETURN(b.memory_bytes, ParseBytes(what, value));
    } else if (key == "cpus") {
      ASSIGN_OR_RETURN(b.cpu_millis, ParseCpuMillis(what, value));
    } else if (key == "max-workers") {
      ASSIGN_OR_RETURN(b.max_workers, ParseCount(what, value));
    } else if (key == "workspace-max") {
      ASSIGN_OR_RETURN(b.workspace_max_workers, ParseCount(what, value));
    } else if (key == "pool-max") {
      std::map<std::string, std::vector<int32_t>> pools;
      auto s = ParsePoolMax(value, false, &pools);
      if (!s.ok()) return absl::InvalidArgumentError(absl::StrCat(where, ": ", s.message()));
      for (const auto& [name, list] : pools) b.pool_max_workers[name] = list.front();
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": unknown key \"", key,
          "\" (use memory, cpus, max-workers, pool-max, workspace-max)"));
    }
  }
  return b;
}

absl::StatusOr<BudgetChoices> ResolveBudgets(const Args& args, const PlanInput& input,
                                             bool allow_lists) {
  planner::Budgets base;
  std::string base_source = input.path;
  bool have_base = input.has_file_budgets;
  if (have_base) base = input.file_budgets;
  if (args.Has("budgets")) {
    ASSIGN_OR_RETURN(base, ReadBudgetsFile(args.Get("budgets")));
    base_source = args.Get("budgets");
    have_base = true;
  }
  BudgetChoices c;
  if (args.Has("memory")) {
    ASSIGN_OR_RETURN(c.memory, ParseList<int64_t>("--memory", args.Get("memory"), allow_lists,
                                                  ParseBytes));
  } else if (base.memory_bytes > 0) {
    c.memory = {base.memory_bytes};
  }
  if (args.Has("cpus")) {
    ASSIGN_OR_RETURN(c.cpu, ParseList<int64_t>("--cpus", args.Get("cpus"), allow_lists,
                                               ParseCpuMillis));
  } else if (base.cpu_millis > 0) {
    c.cpu = {base.cpu_millis};
  }
  if (args.Has("max-workers")) {
    ASSIGN_OR_RETURN(c.workers, ParseList<int32_t>("--max-workers", args.Get("max-workers"),
                                                   allow_lists, ParseCount));
  } else if (base.max_workers > 0) {
    c.workers = {base.max_workers};
  }
  if (args.Has("workspace-max")) {
    ASSIGN_OR_RETURN(c.workspace_max,
                     ParseList<int32_t>("--workspace-max", args.Get("workspace-max"),
                                        allow_lists, ParseCount));
  } else {
    c.workspace_max = {base.workspace_max_workers};
  }
  std::map<std::string, std::vector<int32_t>> pools;
  for (const auto& [name, max] : base.pool_max_workers) pools[name] = {max};
  if (args.Has("pool-max")) {
    for (const std::string& v : args.values.at("pool-max")) {
      RETURN_IF_ERROR(ParsePoolMax(v, allow_lists, &pools));
    }
  }
  c.pools.assign(pools.begin(), pools.end());
  std::vector<std::string> missing;
  if (c.memory.empty()) missing.push_back("--memory");
  if (c.cpu.empty()) missing.push_back("--cpus");
  if (c.workers.empty()) missing.push_back("--max-workers");
  if (!missing.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        input.path, " has no budgets", have_base ? " for " : "; pass ",
        absl::StrJoin(missing, ", "), have_base ? ": pass them as flags" : " or --budgets FILE"));
  }
  for (const planner::Budgets& b : Combinations(c)) {
    RETURN_IF_ERROR(ValidateBudgets(
        b, args.Has("memory") || args.Has("cpus") || args.Has("max-workers") ||
                   args.Has("pool-max") || args.Has("workspace-max")
               ? "flags"
               : base_source));
  }
  return c;
}

std::vector<planner::Budgets> Combinations(const BudgetChoices& c) {
  std::vector<planner::Budgets> out;
  planner::Budgets b;
  // Odometer over pools.
  std::vector<size_t> pool_index(c.pools.size(), 0);
  for (int64_t mem : c.memory) {
    for (int64_t cpu : c.cpu) {
      for (int32_t workers : c.workers) {
        std::fill(pool_index.begin(), pool_index.end(), 0);
        while (true) {
          for (int32_t ws : c.workspace_max) {
            b.memory_bytes = mem;
            b.cpu_millis = cpu;
            b.max_workers = workers;
            b.workspace_max_workers = ws;
            b.pool_max_workers.clear();
            for (size_t p = 0; p < c.pools.size(); ++p) {
              b.pool_max_workers[c.pools[p].first] = c.pools[p].second[pool_index[p]];
            }
            out.push_back(b);
          }
          size_t p = 0;
          while (p < pool_index.size() && ++pool_index[p] == c.pools[p].second.size()) {
            pool_index[p++] = 0;
          }
          if (p == pool_index.size()) break;
        }
      }
    }
  }
  return out;
}

}  // namespace plan
}  // namespace berth
