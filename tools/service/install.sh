#!/usr/bin/env bash
# Installs berthd as a systemd service on Debian 12 (docs/OPERATIONS.md
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
set -euo pipefail
cd "$(dirname "$0")/../.."

[ "$(id -u)" -eq 0 ] || { echo "install.sh: run as root" >&2; exit 2; }
log() { printf 'install: %s\n' "$*" >&2; }

bazel build -c opt --copt=-O2 --copt=-DNDEBUG //server:berthd //tools:berthctl
install -m 0755 bazel-bin/server/berthd /usr/local/bin/berthd
install -m 0755 bazel-bin/tools/berthctl /usr/local/bin/berthctl
log "$(/usr/local/bin/berthd --version)"

getent group docker >/dev/null || groupadd --system docker
if ! id berth >/dev/null 2>&1; then
  useradd --system --home-dir /var/lib/berth --no-create-home \
    --shell /usr/sbin/nologin --user-group --groups docker berth
  log "created user berth (groups: $(id -nG berth))"
fi

install -d -m 0750 -o root -g berth /etc/berth
if [ ! -e /etc/berth/berthd.flags ]; then
  install -m 0640 -o root -g berth tools/service/berthd.flags /etc/berth/berthd.flags
  log "wrote /etc/berth/berthd.flags (edit --allowed_images and the budgets)"
fi
if [ ! -e /etc/berth/tokens ]; then
  umask 077
  tmp=$(mktemp /etc/berth/.tokens.XXXXXX)
  for role in pusher operator reader; do
    printf '%s %s %s\n' "$role" "$role" "$(head -c 24 /dev/urandom | base64 | tr -d '/+=')" >>"$tmp"
  done
  chown berth:berth "$tmp"
  chmod 0600 "$tmp"
  mv "$tmp" /etc/berth/tokens
  log "wrote /etc/berth/tokens (mode 0600, owner berth); the tokens:"
  cat /etc/berth/tokens >&2
fi

install -m 0644 tools/service/berthd.service /etc/systemd/system/berthd.service
if [ "${BERTH_NO_START:-0}" != 1 ] && [ -d /run/systemd/system ]; then
  systemctl daemon-reload
  systemctl enable --now berthd
  log "berthd enabled and started: systemctl status berthd; journalctl -u berthd"
else
  log "installed; start with: systemctl daemon-reload && systemctl enable --now berthd"
fi
