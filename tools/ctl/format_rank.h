// berthctl explain's lines on the arithmetic behind a queued job's rank
// (berth.v1.RankArithmetic), as Slurm's sprio and sshare show it.
#ifndef BERTH_TOOLS_CTL_FORMAT_RANK_H_
#define BERTH_TOOLS_CTL_FORMAT_RANK_H_

#include <ostream>

#include "berth/v1/plan.pb.h"

namespace berth::ctl {

// Appends "priority:", "share:", "turn:", "ahead by:" and "first ahead:"
// lines (only those that apply: "fifo" has no share or turn). Prints
// nothing for an empty message (a job that is not queued).
void PrintRank(const v1::RankArithmetic& rank, std::ostream& out);

}  // namespace berth::ctl

#endif  // BERTH_TOOLS_CTL_FORMAT_RANK_H_
