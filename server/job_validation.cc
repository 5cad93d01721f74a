#include "server/job_validation.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "executor/runtime/runtime_limits.h"
#include "planner/base/units.h"

namespace berth {
namespace {

bool HasNul(absl::string_view s) { return s.find('\0') != absl::string_view::npos; }

v1::JobRejection Reject(const v1::JobSpec& job, v1::RejectReason reason,
                        std::string field, std::string message) {
  v1::JobRejection r;
  r.set_job_id(job.id());
  r.set_reason(reason);
  r.set_field(std::move(field));
  r.set_message(std::move(message));
  return r;
}

std::string Quote(absl::string_view s) { return QuoteForMessage(s); }

// Empty if `d` (when set) is a positive duration of at most kMaxJobDuration;
// else what is wrong with it.
std::string DurationProblem(const google::protobuf::Duration& d, bool has) {
  if (!has) return "";
  if (d.seconds() < 0 || d.nanos() < 0 || (d.seconds() == 0 && d.nanos() == 0) ||
      d.nanos() >= 1'000'000'000) {
    return "must be > 0 when set";
  }
  if (d.seconds() > kMaxJobDurationSeconds ||
      (d.seconds() == kMaxJobDurationSeconds && d.nanos() > 0)) {
    return absl::StrCat("is ", FormatHumanDuration(absl::Seconds(d.seconds())),
                        "; the maximum is ",
                        FormatHumanDuration(absl::Seconds(kMaxJobDurationSeconds)));
  }
  return "";
}

// The range of google.protobuf.Timestamp: 0001-01-01 to 9999-12-31.
bool TimestampInRange(const google::protobuf::Timestamp& t) {
  return t.seconds() >= -62135596800 && t.seconds() <= 253402300799 && t.nanos() >= 0 &&
         t.nanos() < 1'000'000'000;
}

}  // namespace

bool IsValidId(absl::string_view id) { return IsValidName(id); }

std::optional<v1::JobRejection> ValidateJob(const v1::JobSpec& job,
                                            const ValidationConfig& config) {
  using v1::RejectReason;
  if (!IsValidId(job.id())) {
    return Reject(job, v1::REJECT_REASON_INVALID_ID, "id",
                  "id must be 1-128 characters of [A-Za-z0-9._-], not '.' or '..'");
  }
  if (!IsValidId(job.workspace())) {
    return Reject(job, v1::REJECT_REASON_INVALID_FIELD, "workspace",
                  absl::StrCat("workspace ", Quote(job.workspace()),
                               " must be 1-128 characters of [A-Za-z0-9._-], not '.' or '..'"));
  }
  if (job.action().size() > kMaxActionBytes || HasNul(job.action())) {
    return Reject(job, v1::REJECT_REASON_INVALID_FIELD, "action",
                  "action must be at most 128 characters without NUL bytes");
  }
  if (!(config.image_reference_ok ? config.image_reference_ok(job.image())
                                    : !CheckImageReference(job.image()).has_value())) {
    std::optional<SpecProblem> p = CheckImageReference(job.image());
    return Reject(job, v1::REJECT_REASON_INVALID_FIELD, "image",
                  p ? p->message : "image is not a valid image reference");
  }
  if (!config.image_allowed || !config.image_allowed(job.image())) {
    return Reject(job, v1::REJECT_REASON_IMAGE_NOT_ALLOWED, "image",
                  absl::StrCat("image ", Quote(job.image()),
                               " does not match the allow-list"));
  }
  {
    ArgumentCheck args;
    for (const std::string& a : job.argv()) args.AddArg(a);
    for (const auto& [key, value] : job.env()) args.AddEnv(key, value);
    if (const std::optional<SpecProblem>& p = args.Result()) {
      return Reject(job, v1::REJECT_REASON_INVALID_FIELD, p->field, p->message);
    }
  }
  const v1::Resources& res = job.resources();
  if (auto p = CheckResources(res.cpu_millis(), res.memory_bytes())) {
    return Reject(job, v1::REJECT_REASON_INVALID_RESOURCES, p->field, p->message);
  }
  if (job.pool().size() > kMaxIdBytes ||
      (!job.pool().empty() && job.pool() != "default" &&
       !config.known_pools.contains(job.pool()))) {
    return Reject(job, v1::REJECT_REASON_UNKNOWN_POOL, "pool",
                  absl::StrCat("pool ", Quote(job.pool()),
                               " is not configured on this server"));
  }
  if (std::string why = DurationProblem(job.expected_duration(), job.has_expected_duration());
      !why.empty()) {
    return Reject(job, v1::REJECT_REASON_INVALID_FIELD, "expected_duration",
                  absl::StrCat("expected_duration ", why));
  }
  if (std::string why = DurationProblem(job.max_duration(), job.has_max_duration());
      !why.empty()) {
    return Reject(job, v1::REJECT_REASON_INVALID_FIELD, "max_duration",
                  absl::StrCat("max_duration ", why));
  }
  if (job.has_created_at() && !TimestampInRange(job.created_at())) {
    return Reject(job, v1::REJECT_REASON_INVALID_FIELD, "created_at",
                  "created_at must lie within 0001-01-01 and 9999-12-31");
  }
  if (job.labels_size() > static_cast<int>(kMaxLabels)) {
    return Reject(job, v1::REJECT_REASON_INVALID_FIELD, "labels",
                  absl::StrCat(job.labels_size(), " labels; the maximum is ", kMaxLabels));
  }
  for (const auto& [key, value] : job.labels()) {
    if (key.empty() || key.size() > kMaxLabelBytes || value.size() > kMaxLabelBytes) {
      return Reject(job, v1::REJECT_REASON_INVALID_FIELD,
                    absl::StrCat("labels[", Quote(key), "]"),
                    "label keys must be 1-256 and values at most 256 characters");
    }
  }
  if (config.memory_bytes > 0 && res.memory_bytes() > config.memory_bytes) {
    return Reject(job, v1::REJECT_REASON_NEVER_FITS, "resources.memory_bytes",
                  absl::StrCat("needs ", FormatBytes(res.memory_bytes()),
                               " memory but the whole budget is ",
                               FormatBytes(config.memory_bytes, Rounding::kDown)));
  }
  if (config.cpu_millis > 0 && res.cpu_millis() > config.cpu_millis) {
    return Reject(job, v1::REJECT_REASON_NEVER_FITS, "resources.cpu_millis",
                  absl::StrCat("needs ", FormatCpu(res.cpu_millis()),
                               " but the whole budget is ",
                               FormatCpu(config.cpu_millis, Rounding::kDown)));
  }
  if (!config.nodes.empty()) {
    std::optional<NodeFit> local;
    const NodeFit* fit = config.node_fit;
    if (fit == nullptr) fit = &local.emplace(config.nodes);
    if (std::optional<std::string> why = fit->Check(job)) {
      return Reject(job, v1::REJECT_REASON_NEVER_FITS, "resources", *why);
    }
  }
  if (job.depends_on_size() > static_cast<int>(kMaxDependencies)) {
    return Reject(job, v1::REJECT_REASON_INVALID_FIELD, "depends_on",
                  absl::StrCat(job.depends_on_size(), " dependencies; the maximum is ",
                               kMaxDependencies));
  }
  for (int i = 0; i < job.depends_on_size(); ++i) {
    const std::string& dep = job.depends_on(i);
    std::string field = absl::StrCat("depends_on[", i, "]");
    if (!IsValidId(dep)) {
      return Reject(job, v1::REJECT_REASON_INVALID_FIELD, field,
                    absl::StrCat(field, " ", Quote(dep), " is not a valid job id"));
    }
    if (dep == job.id()) {
      return Reject(job, v1::REJECT_REASON_DEPENDENCY_CYCLE, field,
                    "job depends on itself");
    }
  }
  if (config.workspace_exists && !config.workspace_exists(job.workspace())) {
    return Reject(job, v1::REJECT_REASON_WORKSPACE_NOT_FOUND, "workspace",
                  absl::StrCat("workspace ", Quote(job.workspace()),
                               " has no directory under berthd's workspaces root; "
                               "create it before syncing the job"));
  }
  return std::nullopt;
}

ValidatedJobs ValidateJobs(std::vector<v1::JobSpec> jobs,
                           const ValidationConfig& config,
                           const std::function<bool(const std::string&)>& known_job) {
  const size_t n = jobs.size();
  std::vector<std::optional<v1::JobRejection>> verdict(n);
  // Ids view `jobs`, which is not reordered until the end.
  absl::flat_hash_map<absl::string_view, size_t> index;
  index.reserve(n);
  // A snapshot names few distinct images: ask the allow-list (glob matching)
  // once per image.
  absl::flat_hash_map<std::string, bool> image_verdicts;
  ValidationConfig memo = config;
  // The node inventory indexed once for the whole snapshot.
  std::optional<NodeFit> node_fit;
  if (!config.nodes.empty() && config.node_fit == nullptr) {
    memo.node_fit = &node_fit.emplace(config.nodes);
  }
  memo.image_allowed = [&config, &image_verdicts](absl::string_view image) {
    auto it = image_verdicts.find(image);
    if (it == image_verdicts.end()) {
      const bool allowed = config.image_allowed && config.image_allowed(image);
      it = image_verdicts.emplace(std::string(image), allowed).first;
    }
    return it->second;
  };
  // And the image reference grammar once per image.
  absl::flat_hash_map<std::string, bool> reference_verdicts;
  memo.image_reference_ok = [&reference_verdicts](absl::string_view image) {
    auto it = reference_verdicts.find(image);
    if (it == reference_verdicts.end()) {
      it = reference_verdicts.emplace(std::string(image), !CheckImageReference(image)).first;
    }
    return it->second;
  };
  // Likewise the workspaces root once per workspace (a stat each).
  absl::flat_hash_map<std::string, bool> workspace_verdicts;
  if (config.workspace_exists) {
    memo.workspace_exists = [&config, &workspace_verdicts](absl::string_view ws) {
      auto it = workspace_verdicts.find(ws);
      if (it == workspace_verdicts.end()) {
        it = workspace_verdicts.emplace(std::string(ws), config.workspace_exists(ws)).first;
      }
      return it->second;
    };
  }
  for (size_t i = 0; i < n; ++i) {
    index.emplace(jobs[i].id(), i);
    verdict[i] = ValidateJob(jobs[i], memo);
  }

  // Unknown dependencies.
  for (size_t i = 0; i < n; ++i) {
    if (verdict[i]) continue;
    for (int d = 0; d < jobs[i].depends_on_size(); ++d) {
      const std::string& dep = jobs[i].depends_on(d);
      if (!index.contains(dep) && !(known_job && known_job(dep))) {
        verdict[i] = Reject(jobs[i], v1::REJECT_REASON_UNKNOWN_DEPENDENCY,
                            absl::StrCat("depends_on[", d, "]"),
                            absl::StrCat("depends on unknown job ", Quote(dep)));
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
    stack.push_back({root, 0});
    colour[root] = kGrey;
    path.push_back(root);
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < jobs[node].depends_on_size()) {
        auto it = index.find(jobs[node].depends_on(next++));
        if (it == index.end()) continue;
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
            if (!verdict[member] ||
                verdict[member]->reason() != v1::REJECT_REASON_DEPENDENCY_CYCLE) {
              verdict[member] = Reject(jobs[member], v1::REJECT_REASON_DEPENDENCY_CYCLE,
                                       "depends_on",
                                       absl::StrCat("dependency cycle: ", cycle));
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

  // Depending (transitively) on a rejected job: breadth-first over the
  // reverse edges from every rejected job, O(jobs + edges).
  std::vector<std::vector<std::pair<size_t, int>>> dependants(n);
  for (size_t i = 0; i < n; ++i) {
    for (int d = 0; d < jobs[i].depends_on_size(); ++d) {
      auto it = index.find(jobs[i].depends_on(d));
      if (it != index.end()) dependants[it->second].push_back({i, d});
    }
  }
  std::vector<size_t> frontier;
  for (size_t i = 0; i < n; ++i) {
    if (verdict[i]) frontier.push_back(i);
  }
  while (!frontier.empty()) {
    size_t rejected = frontier.back();
    frontier.pop_back();
    for (const auto& [dependant, d] : dependants[rejected]) {
      if (verdict[dependant]) continue;
      verdict[dependant] = Reject(
          jobs[dependant], v1::REJECT_REASON_DEPENDENCY_REJECTED,
          absl::StrCat("depends_on[", d, "]"),
          absl::StrCat("depends on rejected job ", Quote(jobs[rejected].id())));
      frontier.push_back(dependant);
    }
  }

  // Accepted jobs stay where they are (compacted in place): a snapshot
  // without rejections moves no job.
  ValidatedJobs out;
  out.accepted_from.reserve(n);
  size_t kept = 0;
  for (size_t i = 0; i < n; ++i) {
    if (verdict[i]) {
      out.rejections.push_back(std::move(*verdict[i]));
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
