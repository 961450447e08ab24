#!/usr/bin/env bash
# `npm run bench [-- --full]`: the tinybench suites. The commit and gate suites also run on a
# PostgreSQL server that this script starts on loopback and stops after, unless the caller set
# REMIT_PG_URL (their own server) or REMIT_BENCH_NO_PG=1 (then the bench says it skipped them).
# A server of scripts/pg.sh that was already running is used and left running.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
pg_started=0
if [ "${REMIT_BENCH_NO_PG:-0}" != "1" ] && [ -z "${REMIT_PG_URL:-}" ]; then
  if ! bash scripts/pg.sh status >/dev/null 2>&1; then pg_started=1; fi
  bash scripts/pg.sh start
  REMIT_PG_URL=$(bash scripts/pg.sh url)
  export REMIT_PG_URL
fi
cleanup() { if [ "$pg_started" = 1 ]; then bash scripts/pg.sh stop || true; fi; }
trap cleanup EXIT
npx tsx bench/run.ts "$@"
