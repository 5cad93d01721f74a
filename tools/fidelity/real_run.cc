#include "tools/fidelity/real_run.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "berth/v1/executor.pb.h"
#include "executor/runtime/docker/docker_runtime.h"
#include "planner/base/proto_json.h"
#include "planner/base/status_macros.h"
#include "tools/base/subprocess.h"
#include "tools/plan/executor_metrics.h"

namespace berth::fidelity {
namespace {

std::string RandomHex(absl::BitGen& gen, int bytes) {
  std::string raw;
  for (int i = 0; i < bytes; ++i) raw.push_back(static_cast<char>(absl::Uniform<uint8_t>(gen)));
  return absl::BytesToHexString(raw);
}

absl::StatusOr<std::string> MakeDir(const std::string& requested) {
  if (requested.empty()) {
    const char* tmp = getenv("TMPDIR");
    std::string pattern = absl::StrCat(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp",
                                       "/berth-fidelity.XXXXXX");
    if (mkdtemp(pattern.data()) == nullptr) {
      return absl::InternalError(absl::StrCat("cannot create ", pattern));
    }
    return pattern;
  }
  std::error_code error;
  if (std::filesystem::exists(requested, error)) {
    return absl::AlreadyExistsError(absl::StrCat("--dir ", requested, ": exists"));
  }
  if (!std::filesystem::create_directories(requested, error)) {
    return absl::InternalError(absl::StrCat("cannot create ", requested, ": ", error.message()));
  }
  return requested;
}

// Container exits from Docker's events, as they come (on the
// subscription's thread).
class ExitLog {
 public:
  void Add(const RuntimeEvent& event) {
    if (event.action != "die" || event.job_id.empty()) return;
    absl::MutexLock lock(&mu_);
    exits_.emplace_back(absl::ToUnixNanos(event.time), event.job_id);
  }
  std::vector<std::pair<int64_t, std::string>> Exits() const {
    absl::MutexLock lock(&mu_);
    return exits_;
  }

 private:
  mutable absl::Mutex mu_;
  std::vector<std::pair<int64_t, std::string>> exits_ ABSL_GUARDED_BY(mu_);
};

class Run {
 public:
  Run(const RealRunOptions& options, std::string dir) : options_(options), dir_(std::move(dir)) {}

  absl::StatusOr<KeptRun> Execute() {
    absl::BitGen gen;
    const std::string tag = RandomHex(gen, 3);
    const std::string instance = absl::StrCat("fidelity-", tag);
    const int port = 20000 + 2 * absl::Uniform(gen, 0, 10000);
    const std::string token = RandomHex(gen, 16);
    env_ = {{"BERTH_SERVER", absl::StrCat("127.0.0.1:", port)}, {"BERTH_TOKEN", token}};
    const mode_t old_umask = umask(077);
    absl::Status tokens = WriteFileAtomically(absl::StrCat(dir_, "/tokens"),
                                              absl::StrCat("pusher fidelity ", token, "\n"));
    umask(old_umask);
    RETURN_IF_ERROR(tokens);

    WorkloadOptions workload = options_.workload;
    workload.tag = tag;
    workload.created = absl::FromUnixSeconds(absl::ToUnixSeconds(absl::Now()));
    ASSIGN_OR_RETURN(std::string snapshot, ToJson(GenerateWorkload(workload)));
    RETURN_IF_ERROR(WriteFileAtomically(absl::StrCat(dir_, "/snapshot.json"), snapshot));

    // Exits are seen from before berthd starts, so none is missed.
    DockerRuntimeOptions docker;
    docker.endpoint.url = options_.docker_url;
    docker.instance = instance;
    ASSIGN_OR_RETURN(std::unique_ptr<DockerRuntime> runtime, DockerRuntime::Create(docker));
    ExitLog exits;
    std::unique_ptr<EventSubscription> events =
        runtime->SubscribeEvents([&exits](const RuntimeEvent& e) { exits.Add(e); });

    ASSIGN_OR_RETURN(
        berthd_, Subprocess::Start({options_.berthd, absl::StrCat("--listen=127.0.0.1:", port),
                                    absl::StrCat("--token_file=", dir_, "/tokens"),
                                    absl::StrCat("--data_dir=", dir_, "/state"),
                                    absl::StrCat("--instance=", instance),
                                    "--allowed_images=berth-test/*", "--tick=500ms",
                                    "--aging_interval=0s", "--memory=1Gi", "--cpus=2",
                                    "--max_workers=24",
                                    absl::StrCat("--metrics_listen=127.0.0.1:", port + 1)}));
    KeptRun run;
    absl::Status status = Drive(absl::StrCat("http://127.0.0.1:", port + 1, "/metrics"), &run);
    StopBerthd();
    if (!status.ok()) return status;
    // Every container has ended (each job's outcome is recorded) and berthd
    // is gone; give the events stream a moment to deliver the last "die".
    absl::SleepFor(absl::Milliseconds(500));
    events.reset();
    RETURN_IF_ERROR(WriteDieFile(dir_, exits.Exits()));
    for (const auto& [nanos, job] : exits.Exits()) run.died.emplace(job, nanos / 1e9);
    run.scale = options_.workload.scale;
    run.seed = options_.workload.seed;
    double load[1];
    if (getloadavg(load, 1) == 1) run.load_average = load[0];
    RETURN_IF_ERROR(WriteRealJson(dir_, run));
    return run;
  }

 private:
  ProcessResult Ctl(const std::vector<std::string>& args) {
    std::vector<std::string> argv;
    argv.reserve(args.size() + 1);
    argv.push_back(options_.berthctl);
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv, env_, absl::Seconds(60));
  }

  absl::StatusOr<v1::ListJobsResponse> List(std::vector<std::string> args) {
    args.insert(args.begin(), "--json");
    args.insert(args.begin() + 1, "list");
    args.push_back("--all");
    const ProcessResult r = Ctl(args);
    if (r.exit_code != 0) return absl::UnavailableError(absl::StrCat("berthctl list: ", r.err));
    v1::ListJobsResponse response;
    RETURN_IF_ERROR(ParseJsonMessage(r.out, "berthctl --json list", &response));
    return response;
  }

  absl::Status Drive(const std::string& metrics_url, KeptRun* run) {
    const absl::Time ready_deadline = absl::Now() + options_.ready_timeout;
    while (Ctl({"list"}).exit_code != 0) {  // berthd answers once it has recovered
      if (!berthd_->Running() || absl::Now() > ready_deadline) {
        const std::string log = berthd_->Stderr();
        return absl::UnavailableError(absl::StrCat(
            "berthd did not come up: ", log.substr(log.size() > 2000 ? log.size() - 2000 : 0)));
      }
      absl::SleepFor(absl::Milliseconds(100));
    }
    const absl::Time t0 = absl::Now();
    run->t0 = absl::ToDoubleSeconds(t0 - absl::UnixEpoch());
    const ProcessResult pushed = Ctl({"push", absl::StrCat(dir_, "/snapshot.json")});
    if (pushed.exit_code != 0) return absl::UnavailableError(absl::StrCat("push failed: ", pushed.err));
    const absl::Time limit =
        t0 + absl::Seconds(60 + 40 * options_.workload.scale * options_.workload.jobs);
    while (true) {
      ASSIGN_OR_RETURN(v1::ListJobsResponse active,
                       List({"--state", "QUEUED", "--state", "ADMITTED", "--state", "RUNNING"}));
      if (active.jobs().empty()) break;
      if (absl::Now() > limit) return absl::DeadlineExceededError("jobs did not finish in time");
      absl::SleepFor(absl::Milliseconds(200));
    }
    ASSIGN_OR_RETURN(v1::ListJobsResponse all, List({}));
    for (const v1::Job& job : all.jobs()) run->jobs[job.spec().id()] = job;
    // What berth-plan --executor-metrics reads from a live berthd.
    ASSIGN_OR_RETURN(std::string metrics, plan::ReadMetrics(metrics_url));
    return WriteFileAtomically(absl::StrCat(dir_, "/metrics.txt"), metrics);
  }

  void StopBerthd() {
    berthd_->Signal(SIGTERM);
    const ProcessResult r = berthd_->Wait(absl::Minutes(2));
    absl::Status log = WriteFileAtomically(absl::StrCat(dir_, "/berthd.log"), r.err);
    (void)log;  // best effort: the run's result does not depend on it
  }

  const RealRunOptions& options_;
  const std::string dir_;
  std::map<std::string, std::string> env_;
  std::unique_ptr<Subprocess> berthd_;
};

}  // namespace

absl::StatusOr<KeptRun> RunReal(const RealRunOptions& options, std::string* dir_out) {
  ASSIGN_OR_RETURN(std::string dir, MakeDir(options.dir));
  *dir_out = dir;
  Run run(options, dir);
  return run.Execute();
}

}  // namespace berth::fidelity
