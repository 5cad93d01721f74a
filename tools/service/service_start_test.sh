#!/usr/bin/env bash
# A first start of the installed service works: install.sh puts the unit,
# flags and tokens into a fresh root (BERTH_ROOT; a copy of this host's
# /etc/passwd and /etc/group stands for a Debian with docker.io installed),
# and berthd is started from the installed unit's directives, as the
# service user, on the empty state directory systemd would create.
#
# systemd is not PID 1 here, so the unit's sandbox is emulated, reading the
# directives from the installed unit file:
#   User=, Group=, SupplementaryGroups=  setpriv --reuid/--regid/--groups
#   NoNewPrivileges=yes                  setpriv --no-new-privs
#   CapabilityBoundingSet=, Ambient...   setpriv --bounding-set/--inh-caps/--ambient-caps
#   UMask=                               umask
#   StateDirectory=, StateDirectoryMode= install -d -o User -m MODE /var/lib/<dir>
#   ProtectSystem=strict                 a mount namespace where the root is
#                                        read-only but the state directory
#   PrivateTmp=, PrivateDevices=         a fresh tmpfs /tmp; only null, zero,
#                                        random, urandom in /dev
#   ExecStart=                           run in a chroot of the fresh root
#                                        (the host's /usr/lib, /usr/bin bound
#                                        read-only for the loader and setpriv)
# Not emulated: the seccomp, namespace and kernel-protection directives,
# ProtectHome (the root has no /home), Restart= and the journal.
#   tools/service/service_start_test.sh BERTHD BERTHCTL
set -euo pipefail
# useradd, chroot: /usr/sbin is not on the PATH Bazel gives tests.
export PATH="/usr/sbin:/usr/bin:/sbin:/bin:$PATH"
[ "$(id -u)" -eq 0 ] || { echo "FAIL: needs root (mount namespace, chroot, setpriv)"; exit 1; }
for t in unshare setpriv chroot; do
  command -v "$t" >/dev/null || { echo "FAIL: $t missing (util-linux, coreutils)"; exit 1; }
done
berthd="$(pwd)/$1"
berthctl="$(pwd)/$2"
work="$(mktemp -d "${TEST_TMPDIR:-/tmp}/service-start.XXXXXX")"
root="$work/root"
pid=
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid"; wait "$pid" || true; fi
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$work/berthd.log" ] && tail -5 "$work/berthd.log"; exit 1; }

mkdir -p "$root/etc" "$work/bin"
cp /etc/passwd /etc/group /etc/shadow /etc/gshadow "$root/etc/"
cp "$berthd" "$work/bin/berthd"
cp "$berthctl" "$work/bin/berthctl"
BERTH_ROOT="$root" BERTH_BIN="$work/bin" bash tools/service/install.sh 2>"$work/install.log" ||
  fail "install.sh: $(cat "$work/install.log")"
unit="$root/etc/systemd/system/berthd.service"
[ -f "$unit" ] || fail "no unit installed"

# The operator's edit the docs ask for, plus free ports (others may listen
# on the defaults here).
ports=$(/usr/bin/python3 -c 'import socket
s=[socket.socket() for _ in range(2)]
[x.bind(("127.0.0.1",0)) for x in s]
print(" ".join(str(x.getsockname()[1]) for x in s))')
read -r port mport <<<"$ports"
flags="$root/etc/berth/berthd.flags"
sed -i "s/^--listen=.*/--listen=127.0.0.1:$port/; s/^--metrics_listen=.*/--metrics_listen=127.0.0.1:$mport/" "$flags"
sed -i 's/^--memory=auto/--memory=1Gi/; s/^--cpus=auto/--cpus=1/' "$flags"
echo "--instance=svc-$$" >>"$flags"

directive() { sed -n "s/^$1=//p" "$unit" | tail -1; }
id_of() { awk -F: -v n="$2" '$1 == n { print $3 }' "$root/etc/$1"; }
user=$(directive User) group=$(directive Group)
uid=$(id_of passwd "$user") gid=$(id_of group "$group")
[ -n "$uid" ] && [ -n "$gid" ] || fail "install.sh created no user $user / group $group"
groups=""
for g in $(directive SupplementaryGroups); do groups="$groups${groups:+,}$(id_of group "$g")"; done
state="/var/lib/$(directive StateDirectory)"
# "CAP_CHOWN CAP_FOWNER" -> "+chown,+fowner" (setpriv's spelling).
capset() { directive "$1" | tr 'A-Z' 'a-z' | sed 's/cap_/+/g; s/ /,/g'; }
caps=$(capset AmbientCapabilities)
bounding=$(capset CapabilityBoundingSet)
[ "$(directive NoNewPrivileges)" = yes ] || fail "unit without NoNewPrivileges=yes"
[ "$(directive ProtectSystem)" = strict ] || fail "unit without ProtectSystem=strict"

# What systemd does before ExecStart: the state directory, owned by User.
install -d -m 0755 "$root/var/lib"
install -d -o "$uid" -g "$gid" -m "$(directive StateDirectoryMode)" "$root$state"

mkdir -p "$root/usr/lib" "$root/usr/bin" "$root/proc" "$root/dev" "$root/tmp" "$root/run"
[ -e "$root/lib" ] || ln -s usr/lib "$root/lib"
if [ -d /usr/lib64 ]; then mkdir -p "$root/usr/lib64"; [ -e "$root/lib64" ] || ln -s usr/lib64 "$root/lib64"; fi
cp /etc/ld.so.cache "$root/etc/"
for d in null zero random urandom; do touch "$root/dev/$d"; done
touch "$root/run/docker.sock"
[ -e "$root/var/run" ] || ln -s ../run "$root/var/run"
find "$root" -path "$root$state" -prune -o -print | sort >"$work/before.txt"

sandbox() {
  set -e
  mount --make-rprivate /
  mount --bind "$root" "$root"
  for d in /usr/lib /usr/bin /usr/lib64; do
    [ -d "$d" ] || continue
    mount --bind "$d" "$root$d"
    mount -o remount,bind,ro "$root$d"
  done
  for d in null zero random urandom; do mount --bind "/dev/$d" "$root/dev/$d"; done
  mount --bind /var/run/docker.sock "$root/run/docker.sock"
  mount -t proc proc "$root/proc"
  mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
  mount --bind "$root$state" "$root$state"
  mount -o remount,bind,ro "$root"
  umask "$(directive UMask)"
  local exec_start
  read -r -a exec_start <<<"$(directive ExecStart)"
  exec chroot "$root" /usr/bin/setpriv --reuid="$uid" --regid="$gid" --groups="${groups:-$gid}" \
    --no-new-privs --bounding-set="-all,$bounding" --inh-caps="-all,$caps" \
    --ambient-caps="-all,$caps" "${exec_start[@]}"
}
export root state uid gid groups caps bounding unit
export -f sandbox directive
unshare --mount bash -c sandbox 2>"$work/berthd.log" &
pid=$!

reader=$(awk '$1 == "reader" { print $3 }' "$root/etc/berth/tokens")
deadline=$((SECONDS + 30))
until "$berthctl" --server "127.0.0.1:$port" --token "$reader" --timeout 2s budgets get >/dev/null 2>&1; do
  kill -0 "$pid" 2>/dev/null || { wait "$pid" && rc=0 || rc=$?; fail "berthd exited with status $rc on its first start"; }
  [ "$SECONDS" -lt "$deadline" ] || fail "berthd did not answer within 30 s"
  sleep 0.2
done
echo "berthd answered (pid $pid)"

# It runs as the service user, with the unit's capabilities and no more.
[ "$(stat -c %u "/proc/$pid")" = "$uid" ] || fail "berthd runs as uid $(stat -c %u "/proc/$pid"), not $uid"
grep -q '^NoNewPrivs:[[:space:]]*1' "/proc/$pid/status" || fail "no_new_privs not set"
# The store is in the state directory, owned by the service user, and
# nothing was created anywhere else in the root.
[ -f "$root$state/CURRENT" ] || fail "no store in $state"
[ "$(stat -c %u "$root$state/CURRENT")" = "$uid" ] || fail "store not owned by $user"
find "$root" -path "$root$state" -prune -o -print | sort >"$work/after.txt"
added=$(comm -13 "$work/before.txt" "$work/after.txt")
[ -z "$added" ] || fail "berthd created files outside $state: $added"

kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
pid=
[ "$rc" -eq 0 ] || fail "berthd exited $rc on SIGTERM"
echo "PASS"
