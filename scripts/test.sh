#!/usr/bin/env bash
# The test suite: typecheck, the Rust core's host tests, every vitest suite (cores, equivalence,
# shell, stores including PostgreSQL on a server this script starts and stops, the library's import
# boundary), and the consumer test (the packed packages installed into an empty project).
# REMIT_SKIP_PG=1 skips the PostgreSQL tests explicitly and REMIT_SKIP_NETNS=1 the cross-host tests
# (they need root to make network namespaces); neither is ever skipped silently.
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf '[test] %s\n' "$*"; }

log "typecheck"
npx tsc --noEmit -p tsconfig.json

log "Rust core: host tests"
(cd verus-core && cargo test --release --quiet)

# PostgreSQL: a project-owned cluster on loopback, unless the caller points REMIT_PG_URL at one.
# Stopped after only if this script started it (a server already running is left running).
pg_started=0
if [ "${REMIT_SKIP_PG:-0}" != "1" ] && [ -z "${REMIT_PG_URL:-}" ]; then
  if ! bash scripts/pg.sh status >/dev/null 2>&1; then pg_started=1; fi
  bash scripts/pg.sh start
  REMIT_PG_URL=$(bash scripts/pg.sh url)
  export REMIT_PG_URL
fi
cleanup() {
  if [ "$pg_started" = 1 ]; then bash scripts/pg.sh stop || true; fi
  # The restart test runs a second cluster of its own; never leave it behind.
  REMIT_PG_PORT=54339 bash scripts/pg.sh stop >/dev/null 2>&1 || true
  # The cross-host tests run a cluster behind a bridge and make network namespaces.
  REMIT_PG_PORT=54349 bash scripts/pg.sh stop >/dev/null 2>&1 || true
  if [ "$(id -u)" = 0 ]; then bash scripts/netns.sh down >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

log "vitest"
mkdir -p .remit
results=.remit/vitest-results.json
status=0
npx vitest run --reporter=default --reporter=json --outputFile.json="$results" "$@" || status=$?
# One plain closing line that any CI reader understands.
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`);
' "$results" || true

log "consumer test: packed packages in an empty project, plain node"
bash scripts/consumer-test.sh || status=$?
exit "$status"
