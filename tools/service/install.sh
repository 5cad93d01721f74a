#!/usr/bin/env bash
# Installs berthd as a systemd service on Debian 12 (docs/install-and-service.md
# "Install as a service"). Idempotent; never overwrites an existing
# /etc/berth/berthd.flags or token file. Run as root from the repository:
#
#   bash tools/service/install.sh            # build (-c opt), install, enable, start
#   BERTH_NO_START=1 bash tools/service/install.sh   # install only
#
# What it does:
#   - builds berthd and berthctl optimised and copies them to /usr/local/bin;
#   - creates the system user "berth" (no login, home /var/lib/berth) in the
#     docker group (the Docker socket's group);
#   - /etc/berth/berthd.flags from tools/service/berthd.flags, and
#     /etc/berth/tokens with one fresh random token per role (mode 0600,
#     owned by berth; the tokens are printed once, keep them);
#   - /etc/systemd/system/berthd.service, then daemon-reload and
#     enable --now (unless BERTH_NO_START=1 or systemd is not running).
#
# Into another root (an image being prepared, a test): BERTH_ROOT=DIR puts
# every file under DIR and the user in DIR/etc/passwd (useradd --prefix);
# nothing is started. BERTH_BIN=DIR takes berthd and berthctl from DIR
# instead of building them.
set -euo pipefail
cd "$(dirname "$0")/../.."

[ "$(id -u)" -eq 0 ] || { echo "install.sh: run as root" >&2; exit 2; }
log() { printf 'install: %s\n' "$*" >&2; }
root="${BERTH_ROOT:-}"
prefix=()
[ -z "$root" ] || prefix=(--prefix "$root")
# Numeric ids from the (possibly other) root's own files.
id_of() { awk -F: -v n="$2" '$1 == n { print $3 }' "$root/etc/$1"; }

bin="${BERTH_BIN:-}"
if [ -z "$bin" ]; then
  bazel build -c opt --copt=-O2 --copt=-DNDEBUG //server:berthd //tools:berthctl
  bin=bazel-bin
  bin_berthd=$bin/server/berthd
  bin_berthctl=$bin/tools/berthctl
else
  bin_berthd=$bin/berthd
  bin_berthctl=$bin/berthctl
fi
install -d -m 0755 "$root/usr/local/bin"
install -m 0755 "$bin_berthd" "$root/usr/local/bin/berthd"
install -m 0755 "$bin_berthctl" "$root/usr/local/bin/berthctl"
log "$("$root/usr/local/bin/berthd" --version)"

[ -n "$(id_of group docker)" ] || groupadd "${prefix[@]}" --system docker
if [ -z "$(id_of passwd berth)" ]; then
  useradd "${prefix[@]}" --system --home-dir /var/lib/berth --no-create-home \
    --shell /usr/sbin/nologin --user-group --groups docker berth
  log "created user berth (uid $(id_of passwd berth))"
fi
uid=$(id_of passwd berth)
gid=$(id_of group berth)

install -d -m 0750 -o root -g "$gid" "$root/etc/berth"
if [ ! -e "$root/etc/berth/berthd.flags" ]; then
  install -m 0640 -o root -g "$gid" tools/service/berthd.flags "$root/etc/berth/berthd.flags"
  log "wrote /etc/berth/berthd.flags (edit --allowed_images and the budgets)"
fi
if [ ! -e "$root/etc/berth/tokens" ]; then
  umask 077
  tmp=$(mktemp "$root/etc/berth/.tokens.XXXXXX")
  for role in pusher operator reader; do
    printf '%s %s %s\n' "$role" "$role" "$(head -c 24 /dev/urandom | base64 | tr -d '/+=')" >>"$tmp"
  done
  chown "$uid:$gid" "$tmp"
  chmod 0600 "$tmp"
  mv "$tmp" "$root/etc/berth/tokens"
  log "wrote /etc/berth/tokens (mode 0600, owner berth); the tokens:"
  cat "$root/etc/berth/tokens" >&2
fi

install -d -m 0755 "$root/etc/systemd/system"
install -m 0644 tools/service/berthd.service "$root/etc/systemd/system/berthd.service"
if [ -z "$root" ] && [ "${BERTH_NO_START:-0}" != 1 ] && [ -d /run/systemd/system ]; then
  systemctl daemon-reload
  systemctl enable --now berthd
  log "berthd enabled and started: systemctl status berthd; journalctl -u berthd"
else
  log "installed; start with: systemctl daemon-reload && systemctl enable --now berthd"
fi
