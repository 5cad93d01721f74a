#!/usr/bin/env bash
# Checks the service install (tools/service): the unit passes
# `systemd-analyze verify` with no message at all (verify exits 0 on unknown
# keys and bad values, so any output fails), its offline security exposure
# stays at or below 4.0, the flags file parses (berthd --flagfile ...
# --version exits 0), and install.sh is valid bash.
#   tools/service/service_test.sh BERTHD
set -euo pipefail
berthd="$(pwd)/$1"
dir=tools/service
work="${TEST_TMPDIR:-$(mktemp -d)}"
fail=0
no() { echo "FAIL: $*"; fail=1; }

command -v systemd-analyze >/dev/null || { echo "FAIL: systemd-analyze missing (tools/setup.sh installs systemd)"; exit 1; }
unit="$work/berthd.service"
sed "s#/usr/local/bin/berthd#$berthd#" "$dir/berthd.service" >"$unit"
out=$(systemd-analyze verify "$unit" 2>&1) || no "systemd-analyze verify exited $?"
[ -z "$out" ] || no "systemd-analyze verify said: $out"
# The check must see a typo: the same unit with a misspelt key.
sed 's/^NoNewPrivileges=/NoNewPrivilegez=/' "$unit" >"$work/typo.service"
typo=$(systemd-analyze verify "$work/typo.service" 2>&1 || true)
[ -n "$typo" ] || no "systemd-analyze verify did not report a misspelt key"
security=$(systemd-analyze security --offline=yes --threshold=40 "$unit" 2>&1) ||
  no "exposure above 4.0: $(echo "$security" | tail -1)"
echo "$security" | tail -1
"$berthd" --flagfile="$dir/berthd.flags" --version >/dev/null || no "berthd refuses $dir/berthd.flags"
bash -n "$dir/install.sh" || no "install.sh does not parse"
grep -q '^ExecReload=/bin/kill -HUP \$MAINPID' "$dir/berthd.service" || no "no SIGHUP reload"
[ "$fail" -eq 0 ] && echo "PASS"
exit "$fail"
