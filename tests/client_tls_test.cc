// berthctl and the Python client against a berthd serving TLS with client
// certificates required (mTLS): certificates made with openssl for this
// test, berthd started here (BerthdProcess probes in plaintext).
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/berthd_process.h"
#include "tools/base/subprocess.h"
#include "planner/base/proto_json.h"

namespace berth {
namespace {

const char kBerthctl[] = "tools/berthctl";

std::string Describe(const ProcessResult& r) {
  return absl::StrCat("exit ", r.exit_code, "\n--- stdout:\n", r.out, "\n--- stderr:\n", r.err);
}

class ClientTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TEST_TMPDIR");
    dir_ = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/tls-", getpid());
    ASSERT_EQ(mkdir(dir_.c_str(), 0700), 0);
    ASSERT_TRUE(WriteFileAtomically(dir_ + "/san.cnf", "subjectAltName=IP:127.0.0.1\n").ok());
    // A CA, a server certificate for 127.0.0.1 and a client certificate.
    const std::vector<std::vector<std::string>> steps = {
        {"req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
         "-days", "2", "-subj", "/CN=berth-test-ca"},
        {"req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr",
         "-subj", "/CN=127.0.0.1"},
        {"x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
         "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "san.cnf"},
        {"req", "-newkey", "rsa:2048", "-nodes", "-keyout", "client.key", "-out", "client.csr",
         "-subj", "/CN=berth-test-client"},
        {"x509", "-req", "-in", "client.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
         "-CAcreateserial", "-out", "client.pem", "-days", "2"},
    };
    for (const auto& step : steps) {
      std::vector<std::string> argv = {"/bin/sh", "-c", "cd \"$0\" && exec /usr/bin/openssl \"$@\"",
                                       dir_};
      argv.insert(argv.end(), step.begin(), step.end());
      ProcessResult r = RunProcess(argv, {}, absl::Seconds(60));
      ASSERT_EQ(r.exit_code, 0) << step[0] << ": " << Describe(r);
    }
    std::string tokens;
    for (Role role : {Role::kPusher, Role::kOperator, Role::kReader}) {
      absl::StrAppend(&tokens, RoleName(role), " tls-", RoleName(role), " ", TokenFor(role), "\n");
    }
    ASSERT_TRUE(WriteFileAtomically(dir_ + "/tokens", tokens).ok());
    ASSERT_EQ(chmod((dir_ + "/tokens").c_str(), 0600), 0);
    target_ = absl::StrCat("127.0.0.1:", PickFreePort());
    // Random: pids repeat across Bazel's sandboxes.
    instance_ = absl::StrCat("tls-", absl::Uniform<uint32_t>(absl::BitGen(), 0, 1u << 30));
    absl::StatusOr<std::unique_ptr<Subprocess>> p = Subprocess::Start({
        "server/berthd",
        "--listen=" + target_,
        "--metrics_listen=",
        "--token_file=" + dir_ + "/tokens",
        "--data_dir=" + dir_ + "/data",
        "--instance=" + instance_,
        "--allowed_images=berth-test/*",
        "--memory=1Gi",
        "--cpus=2",
        "--max_workers=4",
        "--tls_cert=" + dir_ + "/server.pem",
        "--tls_key=" + dir_ + "/server.key",
        "--tls_client_ca=" + dir_ + "/ca.pem",
    });
    ASSERT_TRUE(p.ok()) << p.status();
    berthd_ = std::move(*p);
  }

  void TearDown() override {
    if (berthd_ != nullptr) {
      berthd_->Signal(SIGTERM);
      ProcessResult r = berthd_->Wait(absl::Seconds(30));
      EXPECT_EQ(r.exit_code, 0) << r.err;
    }
    RemoveInstanceContainers(instance_);
  }

  ProcessResult Ctl(std::vector<std::string> args, Role role = Role::kReader) {
    std::vector<std::string> argv = {kBerthctl, "--server", target_, "--timeout", "10s"};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv, {{"BERTH_TOKEN", TokenFor(role)}}, absl::Seconds(60));
  }

  std::vector<std::string> Mtls() const {
    return {"--tls-ca", dir_ + "/ca.pem", "--tls-cert", dir_ + "/client.pem", "--tls-key",
            dir_ + "/client.key"};
  }

  std::string dir_;
  std::string target_;
  std::string instance_;
  std::unique_ptr<Subprocess> berthd_;
};

TEST_F(ClientTlsTest, BerthctlAndPythonOverMutualTls) {
  std::vector<std::string> get = Mtls();
  get.insert(get.end(), {"budgets", "get", "--json"});
  ProcessResult r;
  ASSERT_TRUE(WaitFor(
      [&] {
        r = Ctl(get);
        return r.exit_code == 0;
      },
      absl::Seconds(60)))
      << Describe(r) << "\n--- berthd:\n" << berthd_->Stderr();
  v1::Budgets budgets;
  ASSERT_TRUE(ParseJsonMessage(r.out, "berthctl output", &budgets).ok()) << r.out;
  EXPECT_EQ(budgets.max_workers(), 4);

  // Without a client certificate the handshake fails: unreachable, with a hint.
  r = Ctl({"--tls-ca", dir_ + "/ca.pem", "budgets", "get"});
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.err, "--tls-cert")) << r.err;
  // Plaintext against a TLS server: unreachable.
  r = Ctl({"budgets", "get"});
  EXPECT_EQ(r.exit_code, 3) << Describe(r);
  // Flag mistakes: usage errors.
  r = Ctl({"--tls-ca", dir_ + "/ca.pem", "--tls-cert", dir_ + "/client.pem", "budgets", "get"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.err, "--tls-key")) << r.err;
  r = Ctl({"--tls-ca", dir_ + "/missing.pem", "budgets", "get"});
  EXPECT_EQ(r.exit_code, 2) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.err, "missing.pem")) << r.err;
  // The token still decides the role over mTLS.
  std::vector<std::string> pause = Mtls();
  pause.push_back("pause");
  r = Ctl(pause, Role::kReader);
  EXPECT_EQ(r.exit_code, 1) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.err, "PERMISSION_DENIED")) << r.err;

  // The Python example over mTLS: an empty snapshot is a valid sync.
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/pusher.token", TokenFor(Role::kPusher)).ok());
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/records.json", "[]").ok());
  r = RunProcess({"/usr/bin/python3", "examples/job_server_client.py", "--server", target_,
                  "--token-file", dir_ + "/pusher.token", "--tls-ca", dir_ + "/ca.pem",
                  "--tls-cert", dir_ + "/client.pem", "--tls-key", dir_ + "/client.key",
                  "--state-dir", dir_ + "/py", "sync", dir_ + "/records.json"},
                 {{"PYTHONPATH", absl::StrCat(cwd, "/tools/python/gen:", cwd, "/tools/python")},
                  {"PYTHONDONTWRITEBYTECODE", "1"}},
                 absl::Seconds(60));
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.out, "\"generation\": 1")) << r.out;
}

}  // namespace
}  // namespace berth
