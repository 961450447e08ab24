#!/usr/bin/env bash
# A private PostgreSQL server for REMIT's tests: its own data directory (outside the repository),
# its own port, loopback only unless asked otherwise. Never touches the Debian "main" cluster.
#
#   scripts/pg.sh start     install PostgreSQL from Debian if missing, create the cluster once,
#                           start it, create role "remit" and database "remit_test"; idempotent
#   scripts/pg.sh stop      stop it (fast shutdown, then immediate if needed) and check it is down
#   scripts/pg.sh restart   restart it (used by the server-restart fault test)
#   scripts/pg.sh status    exit 0 if running, 3 if not
#   scripts/pg.sh url       print the connection URL (postgres://remit:...@127.0.0.1:54329/remit_test)
#   scripts/pg.sh destroy   stop it and delete its data directory
#
# Environment (all optional):
#   REMIT_PG_PORT      TCP port (default 54329)
#   REMIT_PG_DIR       base directory (default /var/tmp/remit-pg-$REMIT_PG_PORT); holds data/, run/,
#                      server.log
#   REMIT_PG_LISTEN    listen_addresses, comma-separated (default 127.0.0.1), e.g.
#                      "127.0.0.1,10.77.0.1" to also serve a veth in a network namespace
#   REMIT_PG_ALLOW     extra client CIDRs admitted with password auth, comma-separated
#                      (default none; loopback is always admitted), e.g. "10.77.0.0/24"
#   REMIT_PG_URL_HOST  host written into the URL (default: first address of REMIT_PG_LISTEN)
#   REMIT_PG_DB, REMIT_PG_USER, REMIT_PG_PASSWORD   (default remit_test, remit, remit)
#
# PostgreSQL refuses to run as root: as root this script runs the server as the "postgres" account
# (created by the Debian package); as any other user it runs the server as that user.
set -euo pipefail

PORT="${REMIT_PG_PORT:-54329}"
BASE="${REMIT_PG_DIR:-/var/tmp/remit-pg-$PORT}"
DATA="$BASE/data"
SOCKET_DIR="$BASE/run"
LOG_FILE="$BASE/server.log"
LISTEN="${REMIT_PG_LISTEN:-127.0.0.1}"
ALLOW="${REMIT_PG_ALLOW:-}"
DB_NAME="${REMIT_PG_DB:-remit_test}"
DB_USER="${REMIT_PG_USER:-remit}"
DB_PASSWORD="${REMIT_PG_PASSWORD:-remit}"
URL_HOST="${REMIT_PG_URL_HOST:-${LISTEN%%,*}}"
[ "$URL_HOST" = "*" ] && URL_HOST=127.0.0.1

die() { echo "pg.sh: $*" >&2; exit 1; }

case "$DB_NAME$DB_USER" in *[!A-Za-z0-9_]*) die "REMIT_PG_DB and REMIT_PG_USER must be [A-Za-z0-9_]";; esac
case "$PORT" in ''|*[!0-9]*) die "REMIT_PG_PORT must be a number, got '$PORT'";; esac

if [ "$(id -u)" = 0 ]; then OWNER=postgres; else OWNER="$(id -un)"; fi

# Run a command as the account that owns the cluster. File descriptor 9 (the lock) is closed so
# that a server started here does not hold the lock for its whole life.
as_owner() {
  if [ "$(id -un)" = "$OWNER" ]; then "$@" 9>&-
  elif command -v runuser >/dev/null; then runuser -u "$OWNER" -- "$@" 9>&-
  else su -s /bin/sh "$OWNER" -c "$(printf '%q ' "$@")" 9>&-
  fi
}

# Highest installed major version's bin directory (Debian layout), or empty.
find_bin_dir() {
  local dir
  dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
  if [ -n "$dir" ] && [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ]; then echo "$dir"; fi
}

ensure_installed() {
  BIN="$(find_bin_dir)"
  if [ -z "$BIN" ]; then
    [ "$(id -u)" = 0 ] || die "PostgreSQL is not installed; run as root once, or: sudo apt-get install -y postgresql"
    echo "pg.sh: installing PostgreSQL from Debian (apt-get install -y postgresql)" >&2
    export DEBIAN_FRONTEND=noninteractive
    local apt_log
    apt_log="$(mktemp)"
    if ! apt-get install -y -q postgresql >"$apt_log" 2>&1; then
      apt-get update -q >>"$apt_log" 2>&1 || true
      apt-get install -y -q postgresql >>"$apt_log" 2>&1 || { tail -n 30 "$apt_log" >&2; die "apt-get install -y postgresql failed"; }
    fi
    rm -f "$apt_log"
    # The package may have created and started Debian's default cluster; this script installed it
    # only to get the binaries, so that server is stopped again (our own cluster is separate).
    if command -v pg_lsclusters >/dev/null; then
      pg_lsclusters -h 2>/dev/null | while read -r version name _; do
        [ "$name" = main ] && pg_ctlcluster "$version" main stop >/dev/null 2>&1 || true
      done
    fi
    BIN="$(find_bin_dir)"
    [ -n "$BIN" ] || die "PostgreSQL installed but no /usr/lib/postgresql/*/bin/initdb found"
  fi
  getent passwd "$OWNER" >/dev/null || die "account '$OWNER' does not exist (it comes with the postgresql package)"
}

pg_ctl_() { as_owner "$BIN/pg_ctl" -D "$DATA" "$@"; }

is_running() { [ -f "$DATA/PG_VERSION" ] && pg_ctl_ status >/dev/null 2>&1; }

# Settings this script owns; rewritten on every start so env changes take effect.
desired_conf() {
  cat <<EOF
# Written by scripts/pg.sh; edits are overwritten.
port = $PORT
listen_addresses = '$LISTEN'
unix_socket_directories = '$SOCKET_DIR'
max_connections = 200
# Lets fault tests hold a lock across a server restart (PREPARE TRANSACTION).
max_prepared_transactions = 10
password_encryption = 'scram-sha-256'
logging_collector = off
log_min_messages = warning
log_connections = off
EOF
}

desired_hba() {
  echo "# Written by scripts/pg.sh; edits are overwritten."
  echo "local all all trust"
  echo "host  all all 127.0.0.1/32 scram-sha-256"
  echo "host  all all ::1/128      scram-sha-256"
  local cidr
  for cidr in ${ALLOW//,/ }; do echo "host  all all $cidr scram-sha-256"; done
}

# Write $2 (content) to file $1 as the owner; succeed with status 10 if the content changed.
write_owned() {
  local file="$1" content="$2"
  if [ -f "$file" ] && [ "$(cat "$file")" = "$content" ]; then return 0; fi
  printf '%s\n' "$content" | as_owner tee "$file" >/dev/null
  return 10
}

psql_admin() {
  as_owner "$BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$SOCKET_DIR" -p "$PORT" -U postgres -d postgres "$@"
}

cmd_start() {
  ensure_installed
  as_owner mkdir -p "$SOCKET_DIR"
  if [ ! -f "$DATA/PG_VERSION" ]; then
    echo "pg.sh: creating cluster in $DATA" >&2
    as_owner "$BIN/initdb" -D "$DATA" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
      --encoding=UTF8 --locale=C >/dev/null
    echo "include_if_exists = 'remit.conf'" | as_owner tee -a "$DATA/postgresql.conf" >/dev/null
  fi
  local changed=0
  local rc
  write_owned "$DATA/remit.conf" "$(desired_conf)" || { rc=$?; [ "$rc" = 10 ] || die "cannot write remit.conf"; changed=1; }
  write_owned "$DATA/pg_hba.conf" "$(desired_hba)" || { rc=$?; [ "$rc" = 10 ] || die "cannot write pg_hba.conf"; changed=1; }
  if is_running; then
    if [ "$changed" = 1 ]; then
      echo "pg.sh: settings changed; restarting" >&2
      pg_ctl_ restart -m fast -w -t 60 -l "$LOG_FILE" >/dev/null
    fi
  else
    rm -f "$SOCKET_DIR"/.s.PGSQL.* 2>/dev/null || true
    if ! pg_ctl_ start -w -t 60 -l "$LOG_FILE" >/dev/null; then
      tail -n 20 "$LOG_FILE" >&2 || true
      die "server did not start (port $PORT in use? see $LOG_FILE)"
    fi
  fi
  # Role and database: created once; the password is reset every time so the URL always works.
  # CREATEROLE: the tests create the least-privileged application role docs/postgres.md describes.
  psql_admin <<EOF
SELECT format('CREATE ROLE %I LOGIN', '$DB_USER')
  WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '$DB_USER') \gexec
ALTER ROLE "$DB_USER" LOGIN CREATEROLE PASSWORD '$DB_PASSWORD';
SELECT format('CREATE DATABASE %I OWNER %I', '$DB_NAME', '$DB_USER')
  WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = '$DB_NAME') \gexec
EOF
  echo "pg.sh: running on $LISTEN port $PORT (data $DATA)" >&2
}

cmd_stop() {
  BIN="$(find_bin_dir)"
  if [ -z "$BIN" ] || [ ! -f "$DATA/PG_VERSION" ]; then echo "pg.sh: no cluster at $DATA" >&2; return 0; fi
  if is_running; then
    pg_ctl_ stop -m fast -w -t 30 >/dev/null 2>&1 || pg_ctl_ stop -m immediate -w -t 30 >/dev/null 2>&1 || true
  fi
  if is_running || [ -f "$DATA/postmaster.pid" ]; then die "server in $DATA is still running after stop"; fi
  echo "pg.sh: stopped (data kept in $DATA)" >&2
}

cmd_restart() {
  ensure_installed
  is_running || die "server in $DATA is not running; use start"
  pg_ctl_ restart -m fast -w -t 60 -l "$LOG_FILE" >/dev/null
}

cmd_status() {
  BIN="$(find_bin_dir)"
  if [ -n "$BIN" ] && is_running; then echo "running: port $PORT, data $DATA"; return 0; fi
  echo "not running (data $DATA)"
  return 3
}

cmd_url() { echo "postgres://$DB_USER:$DB_PASSWORD@$URL_HOST:$PORT/$DB_NAME"; }

cmd_destroy() {
  cmd_stop
  case "$BASE" in /|/var|/var/tmp|/tmp|"") die "refusing to delete '$BASE'";; esac
  rm -rf "$BASE"
  echo "pg.sh: deleted $BASE" >&2
}

# One invocation at a time per cluster, so two test runs starting together do not race initdb.
# The lock file lives in the base directory (created here for start; absent means nothing to do).
with_lock() {
  if [ "$1" = cmd_start ]; then mkdir -p "$BASE"; [ "$(id -u)" = 0 ] && chown "$OWNER" "$BASE"; chmod 700 "$BASE"; fi
  if [ ! -d "$BASE" ]; then "$@"; return; fi
  exec 9>>"$BASE/.lock"
  flock -w 120 9 || die "could not lock $BASE/.lock"
  "$@"
}

case "${1:-}" in
  start) with_lock cmd_start ;;
  stop) with_lock cmd_stop ;;
  restart) with_lock cmd_restart ;;
  status) cmd_status ;;
  url) cmd_url ;;
  destroy) with_lock cmd_destroy ;;
  *) echo "usage: scripts/pg.sh start|stop|restart|status|url|destroy" >&2; exit 2 ;;
esac
