// libFuzzer target for what berthd does with a snapshot before touching the
// store: stream assembly (server/ingest/snapshot_assembler.h), per-job and cross-job
// validation (server/ingest/job_validation.h) and conversion to the planner's model
// (planner/convert: ToQueuedJob). Arbitrary bytes must never crash it, and
// what it accepts must be what the rest of berthd relies on:
//   - an assembled snapshot has unique ids and the announced count;
//   - every job is either accepted or rejected (with a reason), never both;
//   - accepted jobs pass ValidateJob on their own, have a valid id, positive
//     resources within the budget, and depend only on accepted or known jobs,
//     never on themselves, and never in a cycle;
//   - ToQueuedJob keeps id, resources and workspace, and names a pool.
//
// Input: byte 0 picks the shape, the budget and (0x40) a SpecFilter that
// drops valid "known" specs without dependencies, as a re-sync does; then either one serialized
// berth.v1.Snapshot (the file format) or a stream of serialized
// berth.v1.SyncSnapshotRequest messages, each preceded by a 2-byte
// little-endian length. Messages that do not parse are skipped (gRPC would
// have refused them before berthd sees them).
//
// Built with clang by tools/fuzz/run_sync_fuzzer.sh. With
// BERTH_SYNC_FUZZER_SEEDS=<dir> set, it first writes a few valid inputs
// there (the seed corpus).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/stubs/logging.h"
#include "berth/v1/executor.pb.h"
#include "berth/v1/files.pb.h"
#include "executor/runtime/runtime_limits.h"
#include "executor/store/spec_fingerprint.h"
#include "planner/convert/convert.h"
#include "server/ingest/job_validation.h"
#include "server/ingest/snapshot_assembler.h"

namespace berth {
namespace {

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "sync_fuzzer: violated: %s\n", what);
    std::abort();
  }
}

bool HasCycle(const std::vector<v1::JobSpec>& jobs) {
  absl::flat_hash_map<std::string, const v1::JobSpec*> by_id;
  for (const v1::JobSpec& j : jobs) by_id[j.id()] = &j;
  // 0 unvisited, 1 on the stack, 2 done. Iterative DFS.
  absl::flat_hash_map<std::string, int> color;
  for (const v1::JobSpec& root : jobs) {
    if (color[root.id()] != 0) continue;
    std::vector<std::pair<const v1::JobSpec*, int>> stack = {{&root, 0}};
    color[root.id()] = 1;
    while (!stack.empty()) {
      auto& [job, next] = stack.back();
      if (next == job->depends_on_size()) {
        color[job->id()] = 2;
        stack.pop_back();
        continue;
      }
      const std::string& dep = job->depends_on(next++);
      auto it = by_id.find(dep);
      if (it == by_id.end()) continue;
      int& c = color[dep];
      if (c == 1) return true;
      if (c == 0) {
        c = 1;
        stack.push_back({it->second, 0});
      }
    }
  }
  return false;
}

// Drops a spec as StoredSpecFilter does, with "known to the store,
// unchanged" standing for `known`.
class KnownSpecFilter final : public SpecFilter {
 public:
  KnownSpecFilter(const ValidationConfig& config, std::function<bool(const std::string&)> known)
      : config_(config), known_(std::move(known)) {}
  void Begin(uint64_t) override {}
  void Filter(const google::protobuf::RepeatedPtrField<v1::JobSpec>& specs,
              const std::vector<uint64_t>&, std::vector<bool>* drop) override {
    drop->assign(static_cast<size_t>(specs.size()), false);
    for (int i = 0; i < specs.size(); ++i) {
      const v1::JobSpec& j = specs[i];
      (*drop)[static_cast<size_t>(i)] = known_(j.id()) && j.depends_on_size() == 0 &&
                                         !ValidateJob(j, config_).has_value();
    }
  }

 private:
  const ValidationConfig& config_;
  std::function<bool(const std::string&)> known_;
};

void FuzzOne(const uint8_t* data, size_t size) {
  if (size == 0) return;
  const uint8_t mode = data[0];
  ++data;
  --size;

  ValidationConfig config;
  config.image_allowed = [](absl::string_view image) {
    return absl::StartsWith(image, "berth-test/");
  };
  config.known_pools = {"database"};
  if (mode & 0x20) {
    config.memory_bytes = int64_t{1} << 30;
    config.cpu_millis = 4000;
  }
  // Some ids outside the snapshot are "known to the store".
  auto known = [](const std::string& id) { return !id.empty() && (id.back() & 1); };
  // With mode bit 0x40, streams are read with a filter that drops what
  // StoredSpecFilter would if the store held every "known" id unchanged.
  KnownSpecFilter filter(config, known);

  // Assemble.
  absl::StatusOr<ReceivedSnapshot> received;
  uint64_t stream_jobs = 0;
  if (mode % 4 == 0) {
    v1::Snapshot s;
    if (!s.ParseFromArray(data, static_cast<int>(size))) return;
    const int n = s.jobs_size();
    received = SnapshotAssembler::FromSnapshot(std::move(s));
    if (received.ok()) Check(received->jobs.size() == static_cast<size_t>(n), "file job count");
  } else {
    SnapshotAssembler assembler(/*max_jobs=*/(mode & 0x10) ? 3 : 100000,
                                (mode & 0x40) ? &filter : nullptr);
    size_t pos = 0;
    while (pos + 2 <= size) {
      const size_t len = data[pos] | (static_cast<size_t>(data[pos + 1]) << 8);
      pos += 2;
      const size_t take = std::min(len, size - pos);
      v1::SyncSnapshotRequest r;
      if (r.ParseFromArray(data + pos, static_cast<int>(take))) {
        if (r.has_batch()) stream_jobs += static_cast<uint64_t>(r.batch().jobs_size());
        (void)assembler.Add(r);
      }
      pos += take;
    }
    received = assembler.Finish();
    if (received.ok()) Check(received->size() <= stream_jobs, "more jobs than streamed");
    // Finishing twice must not crash either.
    (void)assembler.Finish();
  }
  if (!received.ok()) {
    Check(!received.status().message().empty(), "an error without a message");
    return;
  }
  Check(received->generation > 0, "generation 0 accepted");
  absl::flat_hash_set<std::string> ids;
  std::vector<std::string> order;  // ids in received order
  Check(received->fingerprints.size() == received->jobs.size(),
        "fingerprints misaligned with jobs");
  for (size_t i = 0; i < received->jobs.size(); ++i) {
    const v1::JobSpec& j = received->jobs[i];
    // Empty and over-long ids may repeat: each such job is rejected on its
    // own and never stored (snapshot_assembler.h).
    const bool storable = !j.id().empty() && j.id().size() <= kMaxStoredIdBytes;
    Check(ids.insert(j.id()).second || !storable, "duplicate id assembled");
    Check(received->fingerprints[i] == SpecFingerprint(j), "stale fingerprint");
    order.push_back(j.id());
  }
  // Dropped jobs: valid, storable, unique and known; accepted as they are.
  for (const UnchangedJob& u : received->unchanged) {
    Check(ids.insert(u.id).second, "duplicate id assembled (dropped)");
    Check(known(u.id) && IsValidId(u.id), "dropped a job that is not known or not valid");
  }
  Check(received->unchanged.empty() || (mode & 0x40), "dropped a job without a filter");

  // Validate.
  const size_t n = received->jobs.size();
  ValidatedJobs v = ValidateJobs(std::move(received->jobs), config, known, &received->index);
  Check(v.accepted.size() + v.rejected.size() == n, "jobs lost or invented by validation");
  Check(v.rejected.size() == v.rejections.size(), "rejections misaligned");
  Check(v.accepted_from.size() == v.accepted.size(), "accepted_from misaligned");
  for (size_t i = 0; i < v.accepted.size(); ++i) {
    Check(v.accepted_from[i] < n && order[v.accepted_from[i]] == v.accepted[i].id() &&
              (i == 0 || v.accepted_from[i - 1] < v.accepted_from[i]),
          "accepted_from names another job");
  }
  absl::flat_hash_set<std::string> accepted;
  for (const v1::JobSpec& j : v.accepted) accepted.insert(j.id());
  for (const UnchangedJob& u : received->unchanged) accepted.insert(u.id);
  for (size_t i = 0; i < v.rejected.size(); ++i) {
    Check(v.rejections[i].reason() != v1::REJECT_REASON_UNSPECIFIED, "rejection without reason");
    Check(v.rejections[i].job_id() == v.rejected[i].id(), "rejection names another job");
    Check(!accepted.contains(v.rejected[i].id()), "job both accepted and rejected");
    (void)planner::ToQueuedJob(v.rejected[i]);  // must not crash on bad specs
  }
  for (const v1::JobSpec& j : v.accepted) {
    // What ingest accepts must be able to run: the container the
    // reconciler would ask for passes the runtime's own validation.
    ContainerSpec c;
    c.job_id = j.id();
    c.workspace = j.workspace();
    c.action = j.action();
    c.image = j.image();
    c.argv.assign(j.argv().begin(), j.argv().end());
    for (const auto& [key, value] : j.env()) c.env.emplace_back(key, value);
    c.cpu_millis = j.resources().cpu_millis();
    c.memory_bytes = j.resources().memory_bytes();
    std::optional<SpecProblem> refused = CheckContainerSpec(c);
    Check(!refused.has_value(), "ingest accepted a job the runtime refuses");
    Check(j.resources().memory_bytes() >= kMinMemoryBytes &&
              j.resources().cpu_millis() >= kMinCpuMillis,
          "accepted resources below the runtime's minimums");
    Check(IsValidId(j.id()), "accepted an invalid id");
    Check(!ValidateJob(j, config).has_value(), "accepted a job ValidateJob rejects");
    Check(j.resources().cpu_millis() > 0 && j.resources().memory_bytes() > 0,
          "accepted non-positive resources");
    if (config.memory_bytes > 0) {
      Check(j.resources().memory_bytes() <= config.memory_bytes, "accepted a never-fitting job");
    }
    for (const std::string& dep : j.depends_on()) {
      Check(dep != j.id(), "accepted a self-dependency");
      Check(accepted.contains(dep) || (!ids.contains(dep) && known(dep)),
            "accepted a dependency on a rejected or unknown job");
    }
    planner::QueuedJob q = planner::ToQueuedJob(j);
    Check(q.id == j.id() && q.workspace == j.workspace(), "conversion changed the id");
    Check(q.resources.cpu_millis == j.resources().cpu_millis() &&
              q.resources.memory_bytes == j.resources().memory_bytes(),
          "conversion changed the resources");
    Check(!q.pool.empty(), "conversion left the pool empty");
    Check(q.depends_on.size() == static_cast<size_t>(j.depends_on_size()),
          "conversion dropped dependencies");
  }
  Check(!HasCycle(v.accepted), "accepted a dependency cycle");
}

v1::JobSpec SeedJob(const std::string& id) {
  v1::JobSpec j;
  j.set_id(id);
  j.set_workspace("ws");
  j.set_action("run");
  j.set_image("berth-test/busybox:1");
  j.add_argv("true");
  j.mutable_resources()->set_cpu_millis(100);
  j.mutable_resources()->set_memory_bytes(64 << 20);
  j.mutable_expected_duration()->set_seconds(60);
  return j;
}

void WriteSeeds(const std::string& dir) {
  auto write = [&dir](const std::string& name, uint8_t mode, const std::string& body) {
    std::ofstream f(dir + "/" + name, std::ios::binary);
    f.put(static_cast<char>(mode));
    f << body;
  };
  auto stream = [](const std::vector<v1::SyncSnapshotRequest>& messages) {
    std::string out;
    for (const v1::SyncSnapshotRequest& m : messages) {
      std::string b = m.SerializeAsString();
      out.push_back(static_cast<char>(b.size() & 0xff));
      out.push_back(static_cast<char>((b.size() >> 8) & 0xff));
      out += b;
    }
    return out;
  };
  v1::Snapshot s;
  s.set_generation(7);
  *s.add_jobs() = SeedJob("a");
  v1::JobSpec b = SeedJob("b");
  b.add_depends_on("a");
  b.set_pool("database");
  *s.add_jobs() = b;
  v1::JobSpec c = SeedJob("c");
  c.add_depends_on("d");
  *s.add_jobs() = c;
  v1::JobSpec d = SeedJob("d");
  d.add_depends_on("c");
  (*d.mutable_env())["KEY"] = "value";
  *s.add_jobs() = d;
  write("seed-file", 0x20, s.SerializeAsString());

  v1::SyncSnapshotRequest header, batch, end;
  header.mutable_header()->set_generation(3);
  header.mutable_header()->set_expected_job_count(4);
  for (const v1::JobSpec& j : s.jobs()) *batch.mutable_batch()->add_jobs() = j;
  end.mutable_end()->set_job_count(4);
  write("seed-stream", 1, stream({header, batch, end}));
  write("seed-stream-budget", 0x21, stream({header, batch, end}));
  write("seed-stream-filtered", 0x41, stream({header, batch, end}));
  write("seed-truncated", 1, stream({header, batch}));
}

}  // namespace
}  // namespace berth

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Invalid UTF-8 in string fields is refused by the parser (as gRPC would);
  // its log line for every such input is noise here.
  google::protobuf::SetLogHandler(nullptr);
  if (const char* dir = std::getenv("BERTH_SYNC_FUZZER_SEEDS")) berth::WriteSeeds(dir);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  berth::FuzzOne(data, size);
  return 0;
}
