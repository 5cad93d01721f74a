#include "tools/ctl/format_rank.h"

#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "planner/base/units.h"
#include "tools/ctl/format.h"

namespace berth::ctl {
namespace {

void RankLine(std::ostream& out, const std::string& key, const std::string& value) {
  out << key << ":";
  for (size_t i = key.size(); i < 16; ++i) out << ' ';
  out << value << "\n";
}

std::string Ordinal(uint32_t zero_based) {
  const uint32_t n = zero_based + 1;
  const char* suffix = "th";
  if (n % 100 < 11 || n % 100 > 13) {
    if (n % 10 == 1) suffix = "st";
    if (n % 10 == 2) suffix = "nd";
    if (n % 10 == 3) suffix = "rd";
  }
  return absl::StrCat(n, suffix);
}

// "memory 72 GiB of 128 GiB (0.5625)": the used amount is the share times
// the budget (the share is what the ranking compared).
std::string Dimension(const char* name, double share, int64_t budget, bool bytes) {
  if (budget <= 0) return absl::StrCat(name, " not counted (no budget)");
  const int64_t used = static_cast<int64_t>(std::llround(share * static_cast<double>(budget)));
  auto amount = [bytes](int64_t v) {
    return bytes ? FormatBytes(v) : absl::StrCat(FormatCores(v), " cores");
  };
  return absl::StrCat(name, " ", amount(used), " of ", amount(budget), " (",
                      absl::StrFormat("%.4f", share), ")");
}

}  // namespace

void PrintRank(const v1::RankArithmetic& r, std::ostream& out) {
  if (r.policy().empty()) return;
  std::string priority = absl::StrCat(r.effective_priority());
  const bool ages = r.has_waiting_since();
  const std::string aging =
      ages ? absl::StrCat("waiting since ", FormatTimestamp(r.waiting_since()), ", one level per ",
                          FormatHumanDuration(absl::Seconds(r.aging_interval_seconds())),
                          ", at most ", r.aging_ceiling())
           : "no aging";
  if (r.aged_levels() > 0) {
    absl::StrAppend(&priority, ", aged from ", r.priority(), " (", aging, "; reached ",
                    r.effective_priority(), " at ", FormatTimestamp(r.reached_level_at()), ")");
  } else {
    absl::StrAppend(&priority, " (its own; ", aging, ")");
  }
  RankLine(out, "rank", absl::StrCat(r.policy(), ", priority ", priority));
  if (r.policy() == "drf") {
    RankLine(out, "share",
             absl::StrCat(r.workspace(), " ", absl::StrFormat("%.4f", r.dominant_share()),
                          " before this job: ",
                          Dimension("memory", r.memory_share(), r.memory_budget_bytes(), true),
                          ", ", Dimension("cpu", r.cpu_share(), r.cpu_budget_millis(), false)));
    if (r.aged_levels() == 0) {
      RankLine(out, "turn",
               absl::StrCat(r.turn(), r.turn() == 0 ? " (never admitted)" : " (last admission)",
                            ", next job queued ", FormatTimestamp(r.next_queued_at())));
      RankLine(out, "in workspace",
               absl::StrCat(Ordinal(r.position()), " of ", r.workspace(), "'s jobs at priority ",
                            r.effective_priority(), " (by createdAt)"));
    } else {
      RankLine(out, "in workspace",
               absl::StrCat(Ordinal(r.position()), " of the jobs aged to priority ",
                            r.effective_priority(), " (by when they reached it)"));
    }
  }
  if (r.holds_reservation()) {
    RankLine(out, "reservation", "holds it (kept ahead of jobs of no higher priority)");
  }
  if (r.ahead_by_reason_size() > 0) {
    std::vector<std::string> rows;
    for (const auto& c : r.ahead_by_reason()) rows.push_back(absl::StrCat(c.count(), " ", c.reason()));
    RankLine(out, "ahead by", absl::StrJoin(rows, "; "));
    std::vector<std::string> first;
    for (const auto& a : r.first_ahead()) {
      first.push_back(absl::StrCat(a.job_id(), " (", a.reason(), ")"));
    }
    RankLine(out, "first ahead", absl::StrJoin(first, ", "));
  }
}

}  // namespace berth::ctl
