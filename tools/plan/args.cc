#include "tools/plan/args.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
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
          {"pool-max", true, true}, {"workspace-max"}, {"budgets"}, {"nodes"}};
}

size_t BudgetChoices::combinations() const {
  size_t n = memory.size() * cpu.size() * workers.size() * workspace_max.size() *
             std::max<size_t>(1, nodes.size());
  for (const auto& [name, list] : pools) n *= list.size();
  return n;
}

absl::StatusOr<planner::Budgets> ReadBudgetsFile(const std::string& path,
                                                 std::vector<std::string>* notes) {
  ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  if (absl::StartsWith(absl::StripLeadingAsciiWhitespace(text), "{")) {
    v1::Budgets proto;
    RETURN_IF_ERROR(ParseJsonMessage(text, path, &proto));
    int32_t held = 0;
    for (const v1::NodeUse& u : proto.node_use()) held += u.jobs();
    if (held > 0 && notes != nullptr) {
      notes->push_back(absl::StrCat(
          path, ": its nodeUse (", held,
          " jobs holding capacity when berthd answered) is not modelled: the plan starts "
          "from the input's own running jobs"));
    }
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

absl::StatusOr<std::vector<planner::Node>> ParseNodes(const std::string& value) {
  std::vector<planner::Node> out;
  const std::string what = absl::StrCat("--nodes ", value);
  const size_t x = value.find('x');
  const size_t slash = value.find('/');
  int64_t count = 1;
  bool spec = slash != std::string::npos &&
              (x == std::string::npos || x > slash ||
               absl::SimpleAtoi(value.substr(0, x), &count));
  if (spec && !ReadFileToString(value).ok()) {
    const std::string size = x != std::string::npos && x < slash ? value.substr(x + 1) : value;
    const size_t s = size.find('/');
    if (count < 1 || count > 100'000) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": node count must be 1..100000"));
    }
    ASSIGN_OR_RETURN(int64_t memory, ParseBytes(what, size.substr(0, s)));
    ASSIGN_OR_RETURN(int64_t cpu, ParseCpuMillis(what, size.substr(s + 1)));
    for (int64_t i = 1; i <= count; ++i) {
      planner::Node n;
      n.id = absl::StrCat("node-", i);
      n.memory_bytes = memory;
      n.cpu_millis = cpu;
      out.push_back(std::move(n));
    }
    return out;
  }
  ASSIGN_OR_RETURN(std::string text, ReadFileToString(value));
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    if (size_t hash = line.find('#'); hash != absl::string_view::npos) line = line.substr(0, hash);
    std::vector<std::string> f = absl::StrSplit(line, ' ', absl::SkipWhitespace());
    if (f.empty()) continue;
    const std::string where = absl::StrCat(value, ":", line_no);
    if (f.size() < 3) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": expected \"ID MEMORY CPUS [workers=N] [KEY=VALUE...]\""));
    }
    planner::Node n;
    n.id = f[0];
    ASSIGN_OR_RETURN(n.memory_bytes, ParseBytes(absl::StrCat(where, ": memory"), f[1]));
    ASSIGN_OR_RETURN(n.cpu_millis, ParseCpuMillis(absl::StrCat(where, ": cpus"), f[2]));
    for (size_t k = 3; k < f.size(); ++k) {
      const size_t eq = f[k].find('=');
      if (eq == std::string::npos || eq == 0) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": expected KEY=VALUE, got \"", f[k], "\""));
      }
      const std::string key = f[k].substr(0, eq);
      if (key == "workers") {
        ASSIGN_OR_RETURN(n.max_workers,
                         ParseCount(absl::StrCat(where, ": workers"), f[k].substr(eq + 1)));
      } else {
        n.labels[key] = f[k].substr(eq + 1);
      }
    }
    out.push_back(std::move(n));
  }
  if (out.empty()) return absl::InvalidArgumentError(absl::StrCat(value, ": no nodes"));
  return out;
}

std::string NodesLabel(const BudgetChoices& c, size_t index) {
  if (c.nodes.empty()) return "";
  const size_t per = c.combinations() / c.nodes.size();
  return per == 0 ? "" : c.nodes[std::min(index / per, c.nodes.size() - 1)].first;
}

namespace {

// A node list must be one berthd could plan on: ids unique and non-empty,
// memory and cpu > 0, slots >= 0. The planner would skip a node of zero size
// silently; here it is an error naming the node and where it came from.
absl::Status ValidateNodes(const std::vector<planner::Node>& nodes, const std::string& source) {
  std::vector<std::string> bad;
  absl::flat_hash_set<std::string> ids;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const planner::Node& n = nodes[i];
    const std::string where =
        n.id.empty() ? absl::StrCat("nodes[", i, "]") : absl::StrCat("node '", n.id, "'");
    if (n.id.empty()) bad.push_back(absl::StrCat(where, ": id is empty"));
    if (!n.id.empty() && !ids.insert(n.id).second) {
      bad.push_back(absl::StrCat(where, ": id listed twice"));
    }
    if (n.memory_bytes <= 0) {
      bad.push_back(absl::StrCat(where, ": memory must be > 0, got ", n.memory_bytes));
    }
    if (n.cpu_millis <= 0) {
      bad.push_back(absl::StrCat(where, ": cpu must be > 0, got ", n.cpu_millis, "m"));
    }
    if (n.max_workers < 0) {
      bad.push_back(absl::StrCat(where, ": workers must be >= 0, got ", n.max_workers));
    }
  }
  if (bad.empty()) return absl::OkStatus();
  if (bad.size() > 10) bad.resize(10);
  return absl::InvalidArgumentError(absl::StrCat(source, ": ", absl::StrJoin(bad, "; ")));
}

}  // namespace

absl::StatusOr<BudgetChoices> ResolveBudgets(const Args& args, const PlanInput& input,
                                             bool allow_lists) {
  // The file sources, lowest precedence first: each field comes from the
  // last one that sets it (> 0; a list that is not empty), and a flag beats
  // them both.
  struct Source {
    std::string name;
    planner::Budgets budgets;
  };
  BudgetChoices c;
  std::vector<Source> files;
  if (input.has_file_budgets) files.push_back({input.path, input.file_budgets});
  if (args.Has("budgets")) {
    ASSIGN_OR_RETURN(planner::Budgets b, ReadBudgetsFile(args.Get("budgets"), &c.notes));
    files.push_back({args.Get("budgets"), std::move(b)});
  }
  std::vector<std::string> sources;  // where the values came from
  auto from_files = [&](auto field, auto* out) {
    for (auto it = files.rbegin(); it != files.rend(); ++it) {
      const auto v = field(it->budgets);
      if (v > 0) {
        *out = {v};
        sources.push_back(it->name);
        return;
      }
    }
  };
  if (args.Has("memory")) {
    ASSIGN_OR_RETURN(c.memory, ParseList<int64_t>("--memory", args.Get("memory"), allow_lists,
                                                  ParseBytes));
  } else {
    from_files([](const planner::Budgets& b) { return b.memory_bytes; }, &c.memory);
  }
  if (args.Has("cpus")) {
    ASSIGN_OR_RETURN(c.cpu, ParseList<int64_t>("--cpus", args.Get("cpus"), allow_lists,
                                               ParseCpuMillis));
  } else {
    from_files([](const planner::Budgets& b) { return b.cpu_millis; }, &c.cpu);
  }
  if (args.Has("max-workers")) {
    ASSIGN_OR_RETURN(c.workers, ParseList<int32_t>("--max-workers", args.Get("max-workers"),
                                                   allow_lists, ParseCount));
  } else {
    from_files([](const planner::Budgets& b) { return b.max_workers; }, &c.workers);
  }
  if (args.Has("workspace-max")) {
    ASSIGN_OR_RETURN(c.workspace_max,
                     ParseList<int32_t>("--workspace-max", args.Get("workspace-max"),
                                        allow_lists, ParseCount));
  } else {
    c.workspace_max = {0};
    from_files([](const planner::Budgets& b) { return b.workspace_max_workers; },
               &c.workspace_max);
  }
  // Pools: per pool name, the highest source that lists it.
  std::map<std::string, std::vector<int32_t>> pools;
  for (const Source& f : files) {
    for (const auto& [name, max] : f.budgets.pool_max_workers) pools[name] = {max};
  }
  if (args.Has("pool-max")) {
    for (const std::string& v : args.values.at("pool-max")) {
      RETURN_IF_ERROR(ParsePoolMax(v, allow_lists, &pools));
    }
  }
  c.pools.assign(pools.begin(), pools.end());
  // The node list, whole: --nodes, else the last file that has one.
  if (args.Has("nodes")) {
    const std::vector<std::string> list =
        allow_lists ? absl::StrSplit(args.Get("nodes"), ',') : std::vector<std::string>{args.Get("nodes")};
    for (const std::string& v : list) {
      ASSIGN_OR_RETURN(std::vector<planner::Node> nodes, ParseNodes(v));
      RETURN_IF_ERROR(ValidateNodes(nodes, absl::StrCat("--nodes ", v)));
      c.nodes.emplace_back(v, std::move(nodes));
    }
  } else {
    for (auto it = files.rbegin(); it != files.rend(); ++it) {
      if (it->budgets.nodes.empty()) continue;
      RETURN_IF_ERROR(ValidateNodes(it->budgets.nodes, absl::StrCat(it->name, ": budgets")));
      c.nodes.emplace_back(it->name, it->budgets.nodes);
      break;
    }
  }
  if (!c.nodes.empty()) {
    // On nodes, a cap no source sets is the nodes' sum (Combinations()).
    if (c.memory.empty()) c.memory = {0};
    if (c.cpu.empty()) c.cpu = {0};
    if (c.workers.empty()) c.workers = {0};
  }
  std::vector<std::string> missing;
  if (c.memory.empty()) missing.push_back("--memory");
  if (c.cpu.empty()) missing.push_back("--cpus");
  if (c.workers.empty()) missing.push_back("--max-workers");
  if (!missing.empty()) {
    const bool have_base = !files.empty();
    return absl::InvalidArgumentError(absl::StrCat(
        input.path, " has no budgets", have_base ? " for " : "; pass ",
        absl::StrJoin(missing, ", "), have_base ? ": pass them as flags" : " or --budgets FILE"));
  }
  // A bad value names the flags if any was given, else the files it came from.
  std::sort(sources.begin(), sources.end());
  sources.erase(std::unique(sources.begin(), sources.end()), sources.end());
  const bool any_flag = args.Has("memory") || args.Has("cpus") || args.Has("max-workers") ||
                        args.Has("pool-max") || args.Has("workspace-max");
  const std::string source = any_flag         ? "flags"
                             : sources.empty() ? input.path
                                               : absl::StrJoin(sources, ", ");
  for (const planner::Budgets& b : Combinations(c)) {
    RETURN_IF_ERROR(ValidateBudgets(b, source));
  }
  return c;
}

std::vector<planner::Budgets> Combinations(const BudgetChoices& c) {
  std::vector<planner::Budgets> out;
  const std::vector<std::pair<std::string, std::vector<planner::Node>>> none = {{"", {}}};
  for (const auto& [label, nodes] : c.nodes.empty() ? none : c.nodes) {
  int64_t node_memory = 0, node_cpu = 0, node_workers = 0;
  for (const planner::Node& n : nodes) {
    node_memory += n.memory_bytes;
    node_cpu += n.cpu_millis;
    node_workers += n.max_workers > 0 ? n.max_workers : std::max<int64_t>(1, n.cpu_millis / 1000);
  }
  planner::Budgets b;
  b.nodes = nodes;
  // Odometer over pools.
  std::vector<size_t> pool_index(c.pools.size(), 0);
  for (int64_t mem_given : c.memory) {
    // A cap above the nodes' sum changes no plan: reported as the sum.
    const int64_t mem = mem_given > 0 && (nodes.empty() || mem_given < node_memory)
                            ? mem_given
                            : node_memory;
    for (int64_t cpu_given : c.cpu) {
      const int64_t cpu = cpu_given > 0 && (nodes.empty() || cpu_given < node_cpu)
                              ? cpu_given
                              : node_cpu;
      for (int32_t workers_given : c.workers) {
        const int32_t workers = workers_given > 0 ? workers_given
                                                  : static_cast<int32_t>(std::min<int64_t>(
                                                        node_workers, INT32_MAX));
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
  }
  return out;
}

}  // namespace plan
}  // namespace berth
