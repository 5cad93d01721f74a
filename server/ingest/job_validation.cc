// Per-job validation: the checks of one job (ValidateJob), the memo of the
// config's verdicts and JobChecker. ValidateJobs is in validate_jobs.cc.
#include "server/ingest/job_validation.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "absl/strings/str_cat.h"
#include "executor/runtime/runtime_limits.h"
#include "planner/base/units.h"
#include "server/ingest/job_validation_internal.h"

namespace berth {
namespace validation_internal {

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

}  // namespace validation_internal
namespace {

using validation_internal::Quote;
using validation_internal::Reject;

bool HasNul(absl::string_view s) { return s.find('\0') != absl::string_view::npos; }

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

// Proto3 JSON's range of google.protobuf.Duration: +-10,000 years, nanos of
// the seconds' sign.
bool DurationRenderable(const google::protobuf::Duration& d) {
  constexpr int64_t kMaxSeconds = 315'576'000'000;
  if (d.seconds() < -kMaxSeconds || d.seconds() > kMaxSeconds) return false;
  if (d.nanos() <= -1'000'000'000 || d.nanos() >= 1'000'000'000) return false;
  return !((d.seconds() > 0 && d.nanos() < 0) || (d.seconds() < 0 && d.nanos() > 0));
}

// The config's predicates asked directly (ValidateJob).
class DirectVerdicts {
 public:
  explicit DirectVerdicts(const ValidationConfig& config) : config_(config) {}
  bool ImageReferenceOk(absl::string_view image) { return !CheckImageReference(image); }
  bool ImageAllowed(absl::string_view image) {
    return config_.image_allowed && config_.image_allowed(image);
  }
  bool ImageMissing(absl::string_view image) {
    return config_.image_missing && config_.image_missing(image);
  }
  bool WorkspaceExists(absl::string_view ws) {
    return !config_.workspace_exists || config_.workspace_exists(ws);
  }

 private:
  const ValidationConfig& config_;
};

// The same answers, each asked once per distinct value (ValidateJobs: a
// snapshot names few images and workspaces; the allow-list is glob matching
// and a workspace check is a stat). The last value asked is answered without
// hashing: consecutive jobs usually share it.
class MemoVerdicts {
 public:
  explicit MemoVerdicts(const ValidationConfig& config) : direct_(config) {}
  bool ImageReferenceOk(absl::string_view image) {
    return references_.Get(image, [&] { return direct_.ImageReferenceOk(image); });
  }
  bool ImageAllowed(absl::string_view image) {
    return images_.Get(image, [&] { return direct_.ImageAllowed(image); });
  }
  bool ImageMissing(absl::string_view image) {
    return missing_.Get(image, [&] { return direct_.ImageMissing(image); });
  }
  bool WorkspaceExists(absl::string_view ws) {
    return workspaces_.Get(ws, [&] { return direct_.WorkspaceExists(ws); });
  }

 private:
  class Memo {
   public:
    template <typename Ask>
    bool Get(absl::string_view key, Ask ask) {
      if (has_last_ && key == last_key_) return last_;
      auto it = verdicts_.find(key);
      if (it == verdicts_.end()) it = verdicts_.emplace(std::string(key), ask()).first;
      has_last_ = true;
      last_key_ = it->first;  // views the map's own key (node-stable)
      last_ = it->second;
      return last_;
    }

   private:
    absl::node_hash_map<std::string, bool> verdicts_;
    bool has_last_ = false;
    absl::string_view last_key_;
    bool last_ = false;
  };
  DirectVerdicts direct_;
  Memo references_, images_, missing_, workspaces_;
};

template <typename Verdicts>
std::optional<v1::JobRejection> CheckJob(const v1::JobSpec& job, const ValidationConfig& config,
                                         Verdicts& verdicts) {
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
  if (!verdicts.ImageReferenceOk(job.image())) {
    std::optional<SpecProblem> p = CheckImageReference(job.image());
    return Reject(job, v1::REJECT_REASON_INVALID_FIELD, "image",
                  p ? p->message : "image is not a valid image reference");
  }
  if (!verdicts.ImageAllowed(job.image())) {
    return Reject(job, v1::REJECT_REASON_IMAGE_NOT_ALLOWED, "image",
                  absl::StrCat("image ", Quote(job.image()),
                               " does not match the allow-list"));
  }
  if (verdicts.ImageMissing(job.image())) {
    // In full, not shortened like Quote: a digest differs in its last
    // characters (the reference is valid: no control characters, <= 512).
    return Reject(job, v1::REJECT_REASON_IMAGE_NOT_FOUND, "image",
                  absl::StrCat("image '", job.image(), "'",
                               " is not on the container engine (for a swarm: its manager); "
                               "berthd never pulls images: pull or load it there first"));
  }
  if (job.argv().empty()) {
    // Refused here rather than START_FAILED later ("No command specified"):
    // what is accepted must be able to run, and Berth never falls back to
    // the image's own CMD.
    return Reject(job, v1::REJECT_REASON_INVALID_FIELD, "argv",
                  "argv is required: the program to run and its arguments (no shell; "
                  "e.g. [\"sh\", \"-c\", \"...\"]); the image's default command is not used");
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
                  absl::StrCat("needs ", FormatBytesBeside(res.memory_bytes(), config.memory_bytes),
                               " memory but the whole budget is ",
                               FormatBytes(config.memory_bytes, Rounding::kDown)));
  }
  if (config.cpu_millis > 0 && res.cpu_millis() > config.cpu_millis) {
    return Reject(job, v1::REJECT_REASON_NEVER_FITS, "resources.cpu_millis",
                  absl::StrCat("needs ", FormatCpu(res.cpu_millis()),
                               " but the whole budget is ",
                               FormatCpu(config.cpu_millis, Rounding::kDown)));
  }
  if (config.host_cpu_millis > 0 && res.cpu_millis() > config.host_cpu_millis) {
    return Reject(job, v1::REJECT_REASON_NEVER_FITS, "resources.cpu_millis",
                  absl::StrCat("needs ", FormatCpu(res.cpu_millis()), " but the Docker host has ",
                               FormatCpu(config.host_cpu_millis),
                               " (docker info NCPU): a container cannot be given more CPUs than "
                               "its host has, whatever the CPU budget"));
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
  if (!verdicts.WorkspaceExists(job.workspace())) {
    return Reject(job, v1::REJECT_REASON_WORKSPACE_NOT_FOUND, "workspace",
                  absl::StrCat("workspace ", Quote(job.workspace()),
                               " has no directory under berthd's workspaces root (a "
                               "symbolic link counts only if it leads to a directory "
                               "inside the root); create it before syncing the job"));
  }
  return std::nullopt;
}

}  // namespace

bool IsValidId(absl::string_view id) { return IsValidName(id); }

std::vector<std::string> ClearUnrenderableFields(v1::JobSpec* job) {
  std::vector<std::string> cleared;
  if (job->has_created_at() && !TimestampInRange(job->created_at())) {
    job->clear_created_at();
    cleared.push_back("created_at");
  }
  if (job->has_expected_duration() && !DurationRenderable(job->expected_duration())) {
    job->clear_expected_duration();
    cleared.push_back("expected_duration");
  }
  if (job->has_max_duration() && !DurationRenderable(job->max_duration())) {
    job->clear_max_duration();
    cleared.push_back("max_duration");
  }
  return cleared;
}

std::optional<v1::JobRejection> ValidateJob(const v1::JobSpec& job,
                                            const ValidationConfig& config) {
  DirectVerdicts verdicts(config);
  return CheckJob(job, config, verdicts);
}

struct JobChecker::Impl {
  explicit Impl(const ValidationConfig& config) : given(config) {
    if (!config.nodes.empty() && config.node_fit == nullptr) {
      with_fit.emplace(config);
      with_fit->node_fit = &node_fit.emplace(config.nodes);
    }
    memo.emplace(checked());
  }
  const ValidationConfig& checked() const {
    return with_fit.has_value() ? *with_fit : given;
  }

  const ValidationConfig& given;
  std::optional<NodeFit> node_fit;
  std::optional<ValidationConfig> with_fit;
  std::optional<MemoVerdicts> memo;  // views checked()
};

JobChecker::JobChecker(const ValidationConfig& config)
    : impl_(std::make_unique<Impl>(config)) {}

JobChecker::~JobChecker() = default;

std::optional<v1::JobRejection> JobChecker::Check(const v1::JobSpec& job) {
  return CheckJob(job, impl_->checked(), *impl_->memo);
}

}  // namespace berth
