// ValidateJobs: every job of a snapshot checked on its own, then across jobs
// (unknown dependencies, dependency cycles, depending on a rejected job).
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/ingest/job_validation.h"
#include "server/ingest/job_validation_internal.h"

namespace berth {

using validation_internal::Quote;
using validation_internal::Reject;

ValidatedJobs ValidateJobs(std::vector<v1::JobSpec> jobs,
                           const ValidationConfig& config,
                           const std::function<bool(const std::string&)>& known_job,
                           const JobIdIndex* given_index) {
  const size_t n = jobs.size();
  // verdict[i]: index into `found` of job i's rejection, or -1. (A vector of
  // optional rejections would be ~56 bytes per job; this is 4.)
  std::vector<int32_t> verdict(n, -1);
  std::vector<v1::JobRejection> found;
  auto reject = [&](size_t i, v1::JobRejection r) {
    if (verdict[i] >= 0) {
      found[static_cast<size_t>(verdict[i])] = std::move(r);
    } else {
      verdict[i] = static_cast<int32_t>(found.size());
      found.push_back(std::move(r));
    }
  };
  // Ids view `jobs`' id strings, which do not move until the end.
  JobIdIndex own_index;
  if (given_index == nullptr) {
    own_index.reserve(n);
    for (size_t i = 0; i < n; ++i) own_index.emplace(jobs[i].id(), static_cast<uint32_t>(i));
  }
  const JobIdIndex& index = given_index != nullptr ? *given_index : own_index;
  // The node inventory indexed once for the whole snapshot.
  JobChecker checker(config);
  bool any_dependencies = false;
  for (size_t i = 0; i < n; ++i) {
    if (std::optional<v1::JobRejection> r = checker.Check(jobs[i])) {
      reject(i, *std::move(r));
    }
    any_dependencies = any_dependencies || jobs[i].depends_on_size() > 0;
  }

  if (any_dependencies) {
    // Unknown dependencies.
    for (size_t i = 0; i < n; ++i) {
      if (verdict[i] >= 0) continue;
      for (int d = 0; d < jobs[i].depends_on_size(); ++d) {
        const std::string& dep = jobs[i].depends_on(d);
        if (!index.contains(dep) && !(known_job && known_job(dep))) {
          reject(i, Reject(jobs[i], v1::REJECT_REASON_UNKNOWN_DEPENDENCY,
                           absl::StrCat("depends_on[", d, "]"),
                           absl::StrCat("depends on unknown job ", Quote(dep))));
          break;
        }
      }
    }

    // Cycles among in-snapshot dependencies: iterative DFS with colours.
    // Every job on a cycle is rejected (jobs that merely lead into one are
    // handled below as depending on a rejected job).
    enum Colour : uint8_t { kWhite, kGrey, kBlack };
    std::vector<Colour> colour(n, kWhite);
    std::vector<size_t> path;  // current DFS path, for marking a found cycle
    std::vector<std::pair<size_t, int>> stack;
    for (size_t root = 0; root < n; ++root) {
      if (colour[root] != kWhite) continue;
      if (jobs[root].depends_on_size() == 0) {  // a leaf: nothing to walk
        colour[root] = kBlack;
        continue;
      }
      stack.push_back({root, 0});
      colour[root] = kGrey;
      path.push_back(root);
      while (!stack.empty()) {
        auto& [node, next] = stack.back();
        if (next < jobs[node].depends_on_size()) {
          auto it = index.find(jobs[node].depends_on(next++));
          if (it == index.end() || (it->second & kUnkeptJob) != 0) continue;
          size_t child = it->second;
          if (colour[child] == kWhite) {
            colour[child] = kGrey;
            path.push_back(child);
            stack.push_back({child, 0});
          } else if (colour[child] == kGrey) {
            // Back edge: the cycle is path[pos(child)..end].
            std::string cycle;
            size_t start = path.size();
            while (start > 0 && path[start - 1] != child) --start;
            if (start > 0) --start;
            for (size_t k = start; k < path.size(); ++k) {
              absl::StrAppend(&cycle, jobs[path[k]].id(), " -> ");
            }
            absl::StrAppend(&cycle, jobs[child].id());
            for (size_t k = start; k < path.size(); ++k) {
              size_t member = path[k];
              if (verdict[member] < 0 ||
                  found[static_cast<size_t>(verdict[member])].reason() !=
                      v1::REJECT_REASON_DEPENDENCY_CYCLE) {
                reject(member, Reject(jobs[member], v1::REJECT_REASON_DEPENDENCY_CYCLE,
                                      "depends_on", absl::StrCat("dependency cycle: ", cycle)));
              }
            }
          }
        } else {
          colour[node] = kBlack;
          path.pop_back();
          stack.pop_back();
        }
      }
    }
  }

  // Depending (transitively) on a rejected job: breadth-first over the
  // reverse edges from every rejected job, O(jobs + edges). Only when some
  // job is rejected and some job has a dependency.
  if (any_dependencies && !found.empty()) {
    std::vector<std::vector<std::pair<size_t, int>>> dependants(n);
    for (size_t i = 0; i < n; ++i) {
      for (int d = 0; d < jobs[i].depends_on_size(); ++d) {
        auto it = index.find(jobs[i].depends_on(d));
        if (it != index.end() && (it->second & kUnkeptJob) == 0) {
          dependants[it->second].push_back({i, d});
        }
      }
    }
    std::vector<size_t> frontier;
    for (size_t i = 0; i < n; ++i) {
      if (verdict[i] >= 0) frontier.push_back(i);
    }
    while (!frontier.empty()) {
      size_t rejected = frontier.back();
      frontier.pop_back();
      for (const auto& [dependant, d] : dependants[rejected]) {
        if (verdict[dependant] >= 0) continue;
        reject(dependant, Reject(jobs[dependant], v1::REJECT_REASON_DEPENDENCY_REJECTED,
                                 absl::StrCat("depends_on[", d, "]"),
                                 absl::StrCat("depends on rejected job ",
                                              Quote(jobs[rejected].id()))));
        frontier.push_back(dependant);
      }
    }
  }

  // Accepted jobs stay where they are (compacted in place): a snapshot
  // without rejections moves no job.
  ValidatedJobs out;
  out.accepted_from.reserve(n - found.size());
  size_t kept = 0;
  for (size_t i = 0; i < n; ++i) {
    if (verdict[i] >= 0) {
      out.rejections.push_back(std::move(found[static_cast<size_t>(verdict[i])]));
      ClearUnrenderableFields(&jobs[i]);
      out.rejected.push_back(std::move(jobs[i]));
    } else {
      if (kept != i) jobs[kept] = std::move(jobs[i]);
      ++kept;
      out.accepted_from.push_back(i);
    }
  }
  jobs.resize(kept);
  out.accepted = std::move(jobs);
  return out;
}

}  // namespace berth
