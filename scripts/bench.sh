#!/usr/bin/env bash
# `npm run bench [-- --full]`: the tinybench suites. The commit and gate suites also run on a
# PostgreSQL server that this script starts on loopback and stops after, unless the caller set
# REMIT_PG_URL or --pg (their own server) or REMIT_BENCH_NO_PG=1 (then the bench says it skipped
# them). A server of scripts/pg.sh that was already running is used and left running. A run that
# uses neither suite (--suite without commit or gate, --render, --help) starts no server.
set -euo pipefail
cd "$(dirname "$0")/.."

# Whether the command line runs the commit or gate suite against a server of this script.
needs_pg() {
  local suites="" prev="" a
  for a in "$@"; do
    case "$a" in
      --render | --help | -h | --pg | --pg=*) return 1 ;;
      --suite=*) suites="$suites,${a#--suite=}" ;;
    esac
    if [ "$prev" = "--suite" ]; then suites="$suites,$a"; fi
    prev="$a"
  done
  if [ -z "$suites" ]; then return 0; fi
  case ",$suites," in *,commit,* | *,gate,*) return 0 ;; esac
  return 1
}

bash scripts/setup.sh
pg_started=0
if [ "${REMIT_BENCH_NO_PG:-0}" != "1" ] && [ -z "${REMIT_PG_URL:-}" ] && needs_pg "$@"; then
  if ! bash scripts/pg.sh status >/dev/null 2>&1; then pg_started=1; fi
  bash scripts/pg.sh start
  REMIT_PG_URL=$(bash scripts/pg.sh url)
  export REMIT_PG_URL
fi
cleanup() { if [ "$pg_started" = 1 ]; then bash scripts/pg.sh stop || true; fi; }
trap cleanup EXIT
npx tsx bench/run.ts "$@"
