#!/usr/bin/env bash
# The README's "run the main job" command.
#
# berthd (the service) does not exist yet (issue 7). Until it does, this script
# sets the machine up, builds everything, and validates the example snapshot
# against the API; it says so plainly.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
bazel build --color=no --curses=no //...
echo
echo "berthd is not built yet (see README 'Status'). Built every target and"
echo "parsed examples/snapshot-small.json against berth.v1.Snapshot:"
bazel test --color=no --curses=no //tools/files:proto_json_test
