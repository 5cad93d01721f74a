"""A PostgreSQL 15 cluster of a test's own (Debian's postgresql-15): initdb
in a temporary directory, served on a unix socket in that directory only (no
TCP), run as the user postgres through runuser when the test runs as root
(postgres refuses root), and stopped by its PID."""

import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time

BIN = "/usr/lib/postgresql/15/bin"


class Postgres:
    def __init__(self):
        # Under /tmp, not the test's own temp dir: the postgres user must be
        # able to reach it (root's home is closed to it).
        self.dir = tempfile.mkdtemp(prefix="berth-pg-", dir="/tmp")
        as_user = []
        if os.geteuid() == 0:
            pw = pwd.getpwnam("postgres")
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
            as_user = [shutil.which("runuser", path="/usr/sbin:/sbin:/usr/bin:/bin") or "runuser",
                       "-u", "postgres", "--"]
        data = os.path.join(self.dir, "data")
        self.port = 5432  # only names the socket file: no TCP listener
        run = lambda argv: subprocess.run(as_user + argv, check=True, capture_output=True,
                                          text=True)
        run([BIN + "/initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8"])
        run([BIN + "/pg_ctl", "-D", data, "-l", os.path.join(self.dir, "log"), "-w", "-o",
             "-k %s -c listen_addresses= -p %d" % (self.dir, self.port), "start"])
        with open(os.path.join(data, "postmaster.pid")) as f:
            self.pid = int(f.readline())
        self.dsn = "host=%s port=%d dbname=postgres user=postgres" % (self.dir, self.port)

    def stop(self):
        """Fast shutdown (SIGINT) by PID, then waits for it to be gone."""
        try:
            os.kill(self.pid, signal.SIGINT)
            deadline = time.monotonic() + 30
            while os.path.exists("/proc/%d" % self.pid) and time.monotonic() < deadline:
                time.sleep(0.05)
        except ProcessLookupError:
            pass
        shutil.rmtree(self.dir, ignore_errors=True)
