#!/usr/bin/python3
"""Runs every block of docs/job-server.md "The Python client (job-server)" as
written, in order, in a fresh copy of the repository's client, protos,
VERSION and examples, against a live berthd: the ```sh blocks with bash, the
```python blocks with the virtualenv the first block creates. Only these
stand-ins are replaced: `<pusher token>` by the berthd's pusher token and
127.0.0.1:7070 by its address. Checks the version printed, the guide's job
succeeding, and the example command's sync and follow.

    /usr/bin/python3 tests/python_guide_test.py --berthd bazel-bin/server/berthd

tools/run_operator_tests.sh runs it. Exit status 0 when it passed.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "clients", "python", "tests"))
SECTION = "## The Python client (job-server)\n"


def blocks(path):
    with open(path) as f:
        text = f.read()
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    section = text[start:end if end >= 0 else len(text)]
    return re.findall(r"```(sh|python)\n(.*?)```", section, re.S)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--berthd", required=True)
    args = parser.parse_args()
    os.environ["BERTH_BERTHD"] = os.path.abspath(args.berthd)
    from berthd_fixture import Berthd  # needs BERTH_BERTHD

    found = blocks(os.path.join(ROOT, "docs", "job-server.md"))
    if not any(lang == "python" for lang, _ in found) or len(found) < 3:
        print("FAILED: expected sh and python blocks in the section, found %d" % len(found))
        return 1
    work = tempfile.mkdtemp(prefix="python-guide-")
    berthd = Berthd(max_workers=4)
    try:
        shutil.copytree(os.path.join(ROOT, "clients"), os.path.join(work, "clients"),
                        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
        for name in ("proto", "examples"):
            shutil.copytree(os.path.join(ROOT, name), os.path.join(work, name))
        shutil.copy(os.path.join(ROOT, "VERSION"), work)
        script = ["set -euo pipefail"]
        for i, (lang, code) in enumerate(found):
            code = code.replace("<pusher token>", berthd.tokens["pusher"])
            code = code.replace("127.0.0.1:7070", berthd.target)
            if lang == "sh":
                script.append(code)
            else:
                name = "guide_%d.py" % i
                with open(os.path.join(work, name), "w") as f:
                    f.write(code)
                script.append(".venv/bin/python %s" % name)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
        env.update(PIP_NO_CACHE_DIR="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
        r = subprocess.run(["bash", "-c", "\n".join(script)], cwd=work, env=env,
                           capture_output=True, text=True, timeout=300)
        out = r.stdout
        with open(os.path.join(ROOT, "VERSION")) as f:
            version = f.read().strip()
        checks = [
            ("exit status 0", r.returncode == 0),
            ("the version printed is VERSION (%s)" % version,
             re.search(r"^%s$" % re.escape(version), out, re.M) is not None),
            ("the guide's push added its job", "generation 1 added 1" in out),
            ("the guide's job succeeded", "guide-3 JOB_STATE_SUCCEEDED" in out),
            ("the example's sync added both records", '"added": 2' in out),
            ("the example's follow waited for them", "last revision" in r.stderr),
        ]
        failed = [what for what, ok in checks if not ok]
        for what, ok in checks:
            print("%s: %s" % ("ok" if ok else "FAILED", what))
        if failed:
            print("--- stdout\n%s\n--- stderr\n%s\n--- berthd\n%s" % (out, r.stderr[-4000:],
                                                                      berthd.log_text()))
            return 1
        print("python guide: %d blocks run as written" % len(found))
        return 0
    finally:
        berthd.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
