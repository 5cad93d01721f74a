#include "planner/ranking/ranking.h"

#include <algorithm>
#include <tuple>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "planner/ranking/ranking_sort.h"

namespace berth::planner {

bool TieBreakLess(const State& state, uint32_t a, uint32_t b) {
  if (a == b) return false;
  const QueuedJob& x = state.queued[a];
  const QueuedJob& y = state.queued[b];
  if (int c = x.id.compare(y.id); c != 0) return c < 0;
  // Same id (a duplicate, rejected): order by content so that shuffled
  // input still gives the same output.
  auto key = [](const QueuedJob& j) {
    return std::tie(j.priority, j.created_at, j.workspace, j.pool,
                    j.resources.cpu_millis, j.resources.memory_bytes,
                    j.expected_duration, j.depends_on);
  };
  if (key(x) != key(y)) return key(x) < key(y);
  return a < b;  // identical jobs: identical decisions, order invisible
}

namespace internal {

void SortKeys(const State& state, SortKey* begin, SortKey* end) {
  std::sort(begin, end,
            [&state](const SortKey& a, const SortKey& b) {
              if (a.major != b.major) return a.major < b.major;
              if (a.created_ns != b.created_ns)
                return a.created_ns < b.created_ns;
              return TieBreakLess(state, a.job, b.job);
            });
}

}  // namespace internal

absl::StatusOr<const RankingPolicy*> FindRankingPolicy(absl::string_view name) {
  for (const RankingPolicy* p : {&DrfRanking(), &FifoRanking()}) {
    if (p->name() == name) return p;
  }
  return absl::NotFoundError(
      absl::StrCat("unknown ranking policy '", name, "'; known: ",
                   absl::StrJoin(RankingPolicyNames(), ", ")));
}

std::vector<absl::string_view> RankingPolicyNames() {
  std::vector<absl::string_view> names = {DrfRanking().name(),
                                          FifoRanking().name()};
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace berth::planner
