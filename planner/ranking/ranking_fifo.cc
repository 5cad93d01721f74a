// "fifo": created_at, then id. Priority and workspace are ignored.
#include <vector>

#include "planner/ranking/ranking.h"
#include "planner/ranking/ranking_sort.h"

namespace berth::planner {
namespace {

class FifoPolicy final : public RankingPolicy {
 public:
  absl::string_view name() const override { return "fifo"; }

  void Rank(const RankingInput& input,
            std::vector<uint32_t>& order) const override {
    const size_t n = input.jobs.size();
    ScratchBuffers local;
    ScratchBuffers& scratch = input.scratch != nullptr ? *input.scratch : local;
    internal::SortKey* keys = scratch.Get<internal::SortKey>(0, n);
    for (size_t i = 0; i < n; ++i) {
      keys[i] = {0, input.jobs[i].created_ns, static_cast<uint32_t>(i)};
    }
    internal::SortKeys(*input.state, keys, keys + n);
    order.resize(n);
    for (size_t i = 0; i < n; ++i) order[i] = keys[i].job;
  }
};

}  // namespace

const RankingPolicy& FifoRanking() {
  static const FifoPolicy* const policy = new FifoPolicy();
  return *policy;
}

}  // namespace berth::planner
