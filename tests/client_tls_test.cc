// berthctl and the Python client against a berthd serving TLS with client
// certificates required (mTLS): certificates made with openssl for this
// test, berthd started here (BerthdProcess probes in plaintext).
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "httplib.h"
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
    // httplib's TLS client writes through OpenSSL (write(2), no MSG_NOSIGNAL):
    // a server that drops the handshake (no client certificate) would kill
    // this process with SIGPIPE (exit 141 in a CI run) instead of failing the
    // request. berthd ignores SIGPIPE for the same reason (berthd_main.cc).
    signal(SIGPIPE, SIG_IGN);
    const char* tmp = std::getenv("TEST_TMPDIR");
    // One per test: each test of the process starts its own berthd.
    dir_ = absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/tls-", getpid(), "-",
                        absl::Uniform<uint32_t>(absl::BitGen(), 0, 1u << 30));
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
    http_port_ = PickFreePort();
    // Random: pids repeat across Bazel's sandboxes.
    instance_ = absl::StrCat("tls-", absl::Uniform<uint32_t>(absl::BitGen(), 0, 1u << 30));
    absl::StatusOr<std::unique_ptr<Subprocess>> p = Subprocess::Start({
        "server/berthd",
        "--listen=" + target_,
        absl::StrCat("--metrics_listen=127.0.0.1:", http_port_),
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

  // An HTTPS client of berthd's HTTP port trusting the test CA; with the
  // client certificate if `with_cert`.
  std::unique_ptr<httplib::SSLClient> Https(bool with_cert) const {
    auto client = with_cert ? std::make_unique<httplib::SSLClient>(
                                  "127.0.0.1", http_port_, dir_ + "/client.pem",
                                  dir_ + "/client.key")
                            : std::make_unique<httplib::SSLClient>("127.0.0.1", http_port_);
    client->set_ca_cert_path((dir_ + "/ca.pem").c_str());
    client->enable_server_certificate_verification(true);
    client->set_connection_timeout(10);
    return client;
  }

  std::string dir_;
  std::string target_;
  int http_port_ = 0;
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
                 {{"PYTHONPATH", absl::StrCat(cwd, "/clients/python")},
                  {"PYTHONDONTWRITEBYTECODE", "1"}},
                 absl::Seconds(60));
  EXPECT_EQ(r.exit_code, 0) << Describe(r);
  EXPECT_TRUE(absl::StrContains(r.out, "\"generation\": 1")) << r.out;
}

// With TLS configured, the HTTP port (/metrics and the dashboard) serves TLS
// with the same certificate and requires a client certificate (mTLS) as
// gRPC does; the token still decides the role, and the session cookie is
// marked Secure.
TEST_F(ClientTlsTest, HttpPortServesTlsLikeGrpc) {
  std::string metrics;
  ASSERT_TRUE(WaitFor(
      [&] {
        httplib::Result r = Https(true)->Get("/metrics");
        if (!r || r->status != 200) return false;
        metrics = r->body;
        return true;
      },
      absl::Seconds(60)))
      << "--- berthd:\n" << berthd_->Stderr();
  EXPECT_TRUE(absl::StrContains(metrics, "berth_build_info")) << metrics;

  // The dashboard over TLS: a token is still needed, and decides the role.
  auto client = Https(true);
  httplib::Result page = client->Get("/ui");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 401);
  page = client->Get("/ui", {{"Authorization", "Bearer " + TokenFor(Role::kReader)}});
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_TRUE(absl::StrContains(page->body, "Budgets")) << page->body;
  httplib::Result login =
      client->Post("/ui/login", "token=" + TokenFor(Role::kReader),
                   "application/x-www-form-urlencoded");
  ASSERT_TRUE(login);
  EXPECT_TRUE(absl::StrContains(login->get_header_value("Set-Cookie"), "Secure"))
      << login->get_header_value("Set-Cookie");

  // No client certificate: the handshake fails. Plaintext: no answer.
  EXPECT_FALSE(Https(false)->Get("/metrics"));
  httplib::Client plain("127.0.0.1", http_port_);
  plain.set_connection_timeout(10);
  plain.set_read_timeout(10);
  httplib::Result p = plain.Get("/metrics");
  EXPECT_FALSE(p && p->status == 200);
}

}  // namespace
}  // namespace berth
