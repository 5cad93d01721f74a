// KeyTrace: fills RankingInput::keys as the "drf" merge picks jobs (see
// JobRankKey). Internal to planner/ranking. Not thread-safe (one per Rank()).
#ifndef BERTH_PLANNER_RANKING_RANKING_TRACE_H_
#define BERTH_PLANNER_RANKING_RANKING_TRACE_H_

#include <cstdint>
#include <tuple>
#include <vector>

#include "planner/ranking/ranking.h"

namespace berth::planner::internal {

class KeyTrace {
 public:
  // A workspace's merge key at one pick (JobRankKey's fields of that name).
  struct MergeKey {
    uint32_t share_bits;
    int64_t since_ns;
    uint64_t turn;
    uint64_t salt;
    auto tuple() const { return std::make_tuple(share_bits, since_ns, turn, salt); }
  };

  // Off (on() false: one predictable branch per pick) if `keys` is null.
  KeyTrace(std::vector<JobRankKey>* keys, size_t n, uint32_t num_ws) : keys_(keys) {
    if (keys_ == nullptr) return;
    keys_->assign(n, JobRankKey{});
    last_.resize(num_ws);
    stamp_.assign(num_ws, 0);
    count_.assign(num_ws, 0);
  }
  bool on() const { return keys_ != nullptr; }

  // Call before each level's picks.
  void NextLevel() {
    ++level_;
    band_ = 0;
  }

  // `job` of workspace `ws` is picked; `sort_ns` is its key in its run
  // (aged: when it reached the level); `mem`/`cpu` its workspace's shares
  // before it; `raw` the workspace's merge key now.
  void Record(uint32_t job, uint32_t ws, bool aged, int64_t sort_ns, double mem, double cpu,
              const MergeKey& raw) {
    JobRankKey& k = (*keys_)[job];
    k.aged = aged;
    k.memory_share = mem;
    k.cpu_share = cpu;
    if (aged) {
      k.position = band_++;
      k.reached_ns = sort_ns;
      return;
    }
    MergeKey key = raw;
    if (stamp_[ws] == level_) {
      // The merge order is that of each workspace's running maximum key.
      if (last_[ws].tuple() > key.tuple()) key = last_[ws];
      k.position = ++count_[ws];
    } else {
      stamp_[ws] = level_;
      count_[ws] = 0;
      k.position = 0;
    }
    last_[ws] = key;
    k.share_bits = key.share_bits;
    k.since_ns = key.since_ns;
    k.turn = key.turn;
    k.salt = key.salt;
  }

 private:
  std::vector<JobRankKey>* keys_;
  std::vector<MergeKey> last_;
  std::vector<uint32_t> stamp_;  // level_ of last_/count_, per workspace
  std::vector<uint32_t> count_;
  uint32_t level_ = 0;
  uint32_t band_ = 0;
};

}  // namespace berth::planner::internal

#endif  // BERTH_PLANNER_RANKING_RANKING_TRACE_H_
