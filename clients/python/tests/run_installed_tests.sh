#!/usr/bin/env bash
# Runs the package's tests against the INSTALLED package: copies what
# `pip install ./clients/python` reads (the package, ../../proto, ../../VERSION)
# to a temporary tree, installs it offline into a fresh
# `python3 -m venv --system-site-packages` (Debian's grpcio and protobuf) and
# runs `python -m unittest ARGS...` from a directory holding only the tests.
# Environment: BERTH_BERTHD and BERTH_JOBSERVER_PG (paths, optional) are
# passed on, absolute.
set -euo pipefail
root="$(pwd)"
tmp="${TEST_TMPDIR:-$(mktemp -d)}/installed"
rm -rf "$tmp"
mkdir -p "$tmp/src/clients" "$tmp/run"
cp -rL clients/python "$tmp/src/clients/python"
rm -rf "$tmp/src/clients/python/tests"
cp -rL proto "$tmp/src/proto"
cp -L VERSION "$tmp/src/VERSION"
cp -L clients/python/tests/*.py "$tmp/run/"
export HOME="$tmp" PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1
/usr/bin/python3 -m venv --system-site-packages "$tmp/venv"
"$tmp/venv/bin/pip" install -q --no-index --no-build-isolation "$tmp/src/clients/python"
export BERTH_EXPECTED_VERSION="$(tr -d ' \n' < VERSION)"
if [ -n "${BERTH_BERTHD:-}" ]; then export BERTH_BERTHD="$root/$BERTH_BERTHD"; fi
if [ -n "${BERTH_JOBSERVER_PG:-}" ]; then export BERTH_JOBSERVER_PG="$root/$BERTH_JOBSERVER_PG"; fi
cd "$tmp/run"
exec "$tmp/venv/bin/python" -m unittest -v "$@"
