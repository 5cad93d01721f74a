#!/bin/sh
# Runs a Python test with Debian's interpreter (which has python3-grpcio and
# python3-protobuf) and the generated stubs on the path.
set -eu
here="$(pwd)"
export PYTHONPATH="$here/tools/python/gen:$here/tools/python"
exec /usr/bin/python3 "$@"
