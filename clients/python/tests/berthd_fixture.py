"""A real berthd for the package's live tests: its own data dir, tokens and
ports, a unique instance label (its containers are removed at the end), and
stopped by PID. The binary is $BERTH_BERTHD (Bazel's //server:berthd)."""

import os
import secrets
import signal
import socket
import subprocess
import tempfile
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(condition, timeout, what):
    """Polls condition() until it is true; AssertionError naming `what`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError("timed out after %g s waiting for %s" % (timeout, what))


class Berthd:
    def __init__(self, max_workers=4, memory="2Gi", extra=()):
        self.dir = tempfile.mkdtemp(prefix="berthd-", dir=os.environ.get("TEST_TMPDIR"))
        self.instance = "py" + secrets.token_hex(4)
        self.tokens = {role: role + "-" + secrets.token_hex(12)
                       for role in ("pusher", "operator", "reader")}
        self.token_file = os.path.join(self.dir, "tokens")
        with open(self.token_file, "w") as f:
            for role, token in self.tokens.items():
                f.write("%s test-%s %s\n" % (role, role, token))
        os.chmod(self.token_file, 0o600)
        self.port = free_port()
        self.target = "127.0.0.1:%d" % self.port
        self.args = [os.environ["BERTH_BERTHD"], "--listen=" + self.target,
                     "--metrics_listen=127.0.0.1:%d" % free_port(),
                     "--token_file=" + self.token_file,
                     "--data_dir=" + os.path.join(self.dir, "data"),
                     "--instance=" + self.instance, "--allowed_images=berth-test/*",
                     "--memory=" + memory, "--cpus=2", "--max_workers=%d" % max_workers,
                     "--tick=500ms", "--stop_grace=2s"] + list(extra)
        self.log = os.path.join(self.dir, "berthd.log")
        self.proc = None
        self.start()

    def start(self):
        with open(self.log, "a") as log:
            self.proc = subprocess.Popen(self.args, stdout=log, stderr=log)

    def kill9(self):
        """kill -9 by PID and reap it."""
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def restart(self):
        self.kill9()
        self.start()

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGCONT)
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.kill9()
        ids = subprocess.run(["docker", "ps", "-aq", "--filter",
                              "label=berth.instance=" + self.instance],
                             capture_output=True, text=True).stdout.split()
        if ids:
            subprocess.run(["docker", "rm", "-f"] + ids, capture_output=True)

    def log_text(self):
        with open(self.log) as f:
            return f.read()[-4000:]


def busybox_record(job_id, seconds=1, workspace="ws"):
    return {"id": job_id, "workspace": workspace, "image": "berth-test/busybox:1",
            "argv": ["sh", "-c", "echo %s; sleep %g" % (job_id, seconds)],
            "memory": "32Mi", "cpu": 0.1, "expected_duration": "%gs" % max(seconds, 1)}
