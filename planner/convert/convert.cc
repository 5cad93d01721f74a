#include "planner/convert/convert.h"

#include <algorithm>
#include <limits>

namespace berth::planner {
namespace {

// Bounds of google.protobuf.Timestamp: 0001-01-01 .. 9999-12-31.
constexpr int64_t kMinSeconds = -62135596800;
constexpr int64_t kMaxSeconds = 253402300799;

}  // namespace

absl::Time FromProto(const google::protobuf::Timestamp& t) {
  if (t.seconds() < kMinSeconds || t.seconds() > kMaxSeconds || t.nanos() < 0 ||
      t.nanos() > 999'999'999) {
    return absl::UnixEpoch();
  }
  return absl::FromUnixSeconds(t.seconds()) + absl::Nanoseconds(t.nanos());
}

absl::Duration FromProto(const google::protobuf::Duration& d) {
  if (d.seconds() < -315576000000 || d.seconds() > 315576000000 ||
      d.nanos() < -999'999'999 || d.nanos() > 999'999'999) {
    return absl::ZeroDuration();
  }
  return absl::Seconds(d.seconds()) + absl::Nanoseconds(d.nanos());
}

google::protobuf::Timestamp ToProtoTimestamp(absl::Time t) {
  google::protobuf::Timestamp out;
  if (t == absl::InfiniteFuture() || t == absl::InfinitePast()) return out;
  int64_t seconds = absl::ToUnixSeconds(t);
  if (seconds < kMinSeconds || seconds > kMaxSeconds) return out;
  absl::Duration rest = t - absl::FromUnixSeconds(seconds);
  int64_t nanos = absl::ToInt64Nanoseconds(rest);
  if (nanos < 0) {
    --seconds;
    nanos += 1'000'000'000;
  }
  out.set_seconds(seconds);
  out.set_nanos(static_cast<int32_t>(nanos));
  return out;
}

google::protobuf::Duration ToProtoDuration(absl::Duration d) {
  google::protobuf::Duration out;
  if (d == absl::InfiniteDuration() || d == -absl::InfiniteDuration()) return out;
  absl::Duration rem;
  int64_t seconds = absl::IDivDuration(d, absl::Seconds(1), &rem);
  out.set_seconds(seconds);
  out.set_nanos(static_cast<int32_t>(absl::ToInt64Nanoseconds(rem)));
  return out;
}

QueuedJob ToQueuedJob(const v1::JobSpec& spec) { return QueuedJobFrom(SpecFields(spec)); }

RunningJob ToRunningJob(const v1::JobSpec& spec, absl::Time started_at) {
  return RunningJobFrom(SpecFields(spec), started_at);
}

int64_t EffectiveMemoryBytes(const v1::Job& job) {
  return EffectiveMemoryBytes(job.spec().resources().memory_bytes(), job.raised_memory_bytes());
}

absl::Time PlanningCreatedAt(const v1::Job& job) {
  const v1::JobSpec& spec = job.spec();
  if (spec.has_created_at()) return FromProto(spec.created_at());
  return job.has_queued_at() ? FromProto(job.queued_at()) : absl::UnixEpoch();
}

QueuedJob ToQueuedJob(const v1::Job& job) { return QueuedJobFrom(SpecFields(job)); }

RunningJob ToRunningJob(const v1::Job& job, absl::Time started_at) {
  return RunningJobFrom(SpecFields(job), started_at);
}

Budgets FromProto(const v1::Budgets& budgets) {
  Budgets out;
  out.memory_bytes = budgets.memory_bytes();
  out.cpu_millis = budgets.cpu_millis();
  out.max_workers = budgets.max_workers();
  for (const auto& [pool, limit] : budgets.pools()) {
    out.pool_max_workers[pool] = limit.max_workers();
  }
  out.workspace_max_workers = budgets.workspace_max_workers();
  out.nodes.reserve(budgets.nodes_size());
  for (const v1::Node& n : budgets.nodes()) {
    Node& node = out.nodes.emplace_back();
    node.id = n.id();
    node.memory_bytes = n.memory_bytes();
    node.cpu_millis = n.cpu_millis();
    node.max_workers = n.max_workers();
    node.labels.insert(n.labels().begin(), n.labels().end());
    node.name = n.hostname();
  }
  return out;
}

v1::Budgets ToProto(const Budgets& budgets) {
  v1::Budgets out;
  out.set_memory_bytes(budgets.memory_bytes);
  out.set_cpu_millis(budgets.cpu_millis);
  out.set_max_workers(budgets.max_workers);
  for (const auto& [pool, limit] : budgets.pool_max_workers) {
    (*out.mutable_pools())[pool].set_max_workers(limit);
  }
  out.set_workspace_max_workers(budgets.workspace_max_workers);
  for (const Node& n : budgets.nodes) {
    v1::Node* node = out.add_nodes();
    node->set_id(n.id);
    node->set_memory_bytes(n.memory_bytes);
    node->set_cpu_millis(n.cpu_millis);
    node->set_max_workers(n.max_workers);
    node->mutable_labels()->insert(n.labels.begin(), n.labels.end());
    node->set_hostname(n.name);
  }
  return out;
}

v1::Usage ToProto(const Usage& usage) {
  v1::Usage out;
  out.set_memory_bytes(usage.memory_bytes);
  out.set_cpu_millis(usage.cpu_millis);
  out.set_workers(static_cast<int32_t>(
      std::min<int64_t>(usage.workers, std::numeric_limits<int32_t>::max())));
  for (const auto& [pool, workers] : usage.pool_workers) {
    (*out.mutable_pool_workers())[pool] = static_cast<int32_t>(
        std::min<int64_t>(workers, std::numeric_limits<int32_t>::max()));
  }
  return out;
}

namespace {

v1::EtaKind ToProtoEtaKind(EtaKind kind) {
  switch (kind) {
    case EtaKind::kNow: return v1::ETA_KIND_NOW;
    case EtaKind::kReserved: return v1::ETA_KIND_RESERVED;
    case EtaKind::kIfEstimatesHold: return v1::ETA_KIND_IF_ESTIMATES_HOLD;
    case EtaKind::kBeyondForecast: return v1::ETA_KIND_BEYOND_FORECAST;
    case EtaKind::kUnknown: break;
  }
  return v1::ETA_KIND_UNKNOWN;
}

}  // namespace

v1::PlanDecision ToProtoDecision(const PlanResult& result,
                                 const Decision& decision, const State& state,
                                 int32_t position, const StartEstimate& eta) {
  v1::PlanDecision out;
  if (decision.job < state.queued.size()) {
    out.set_job_id(state.queued[decision.job].id);
  }
  out.set_verdict(static_cast<v1::Verdict>(decision.verdict));
  out.set_reason(static_cast<v1::WaitReason>(decision.reason));
  out.set_queue_position(position);
  out.set_reserved(decision.reserved);
  out.set_eta_kind(ToProtoEtaKind(eta.kind));
  if (eta.kind == EtaKind::kBeyondForecast) {
    *out.mutable_not_before() = ToProtoTimestamp(eta.time);
  } else if (eta.time != absl::InfiniteFuture()) {
    *out.mutable_estimated_start() = ToProtoTimestamp(eta.time);
  }
  if (decision.dimension != Dimension::kUnspecified) {
    v1::Shortfall* s = out.mutable_shortfall();
    s->set_dimension(static_cast<v1::Dimension>(decision.dimension));
    s->set_needed(decision.needed);
    s->set_free(decision.free);
    s->set_capacity(decision.capacity);
    s->set_shortfall(decision.shortfall());
  }
  const size_t k = static_cast<size_t>(&decision - result.decisions.data());
  if (k < result.placements.size()) {
    const NodePlacement& p = result.placements[k];
    auto id = [&](int32_t n) {
      return n >= 0 && static_cast<size_t>(n) < result.nodes.size() ? result.nodes[n]
                                                                     : std::string();
    };
    out.set_node(id(p.node));
    if (p.on_node && out.has_shortfall()) {
      out.mutable_shortfall()->set_node(id(p.short_node));
      out.mutable_shortfall()->set_cluster_free(p.cluster_free);
    }
  }
  return out;
}

v1::RejectReason ToRejectReason(Problem problem) {
  switch (problem) {
    case Problem::kInvalidResources: return v1::REJECT_REASON_INVALID_RESOURCES;
    case Problem::kExceedsBudget: return v1::REJECT_REASON_NEVER_FITS;
    case Problem::kUnknownPool: return v1::REJECT_REASON_UNKNOWN_POOL;
    case Problem::kDuplicateId: return v1::REJECT_REASON_INVALID_ID;
    case Problem::kUnknownDependency: return v1::REJECT_REASON_UNKNOWN_DEPENDENCY;
    case Problem::kDependencyCycle: return v1::REJECT_REASON_DEPENDENCY_CYCLE;
    case Problem::kDependencyFailed: return v1::REJECT_REASON_DEPENDENCY_REJECTED;
    case Problem::kDependencyRejected: return v1::REJECT_REASON_DEPENDENCY_REJECTED;
    case Problem::kNone: break;
  }
  return v1::REJECT_REASON_UNSPECIFIED;
}

}  // namespace berth::planner
