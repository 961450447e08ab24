#!/usr/bin/env bash
# What a Node service gets from installing REMIT's packed tarballs (README, "In a Node service"): pack the publishable packages (remit and
# @remit/core-wasm), install the tarballs into an empty project with --omit=dev, and then
#   1. run the README quickstart (examples/quickstart/quickstart.mjs) with plain `node`, once on the
#      Wasm core and once on the reference core, and the installed `remit` bin on its database;
#   2. type-check a strict TypeScript consumer (scripts/consumer/) with skipLibCheck false and no
#      @types packages, also in a project whose own zod is a zod 4 other than the one remit pins;
#   3. check the published types with @arethetypeswrong/cli (ESM-only profile);
#   4. report installed size and package count (SQLite only, and with pg) and the cold import
#      time of 'remit' under plain node (median of 9 fresh processes).
# Figures go to stdout and to $REMIT_CONSUMER_REPORT (default .remit/consumer-report.json).
#
# better-sqlite3's install script compiles a native addon (minutes on two cores; its prebuilt
# download is blocked on this project's machines). The tarballs are installed with
# --ignore-scripts and the addon the repository's own install compiled, for the same version of
# better-sqlite3 and the same Node, is copied in. Everything else is exactly what npm installs.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
log() { printf '[consumer] %s\n' "$*"; }
report="${REMIT_CONSUMER_REPORT:-$root/.remit/consumer-report.json}"
work="$(mktemp -d "${TMPDIR:-/tmp}/remit-consumer-XXXXXX")"
trap 'rm -rf "$work"' EXIT
# The repository's `remit-source` condition must not leak into the consumer: it gets dist/.
unset NODE_OPTIONS

log "packing remit and @remit/core-wasm (prepack builds dist/ and checks the Wasm build)"
mkdir -p "$work/tarballs"
npm pack --workspace wasm --workspace ts-shell --pack-destination "$work/tarballs" --silent >/dev/null
remit_tgz="$(ls "$work"/tarballs/remit-[0-9]*.tgz)"
wasm_tgz="$(ls "$work"/tarballs/remit-core-wasm-*.tgz)"
# Both packages declare Apache-2.0: each ships the licence's text.
for tgz in "$remit_tgz" "$wasm_tgz"; do
  listing="$(tar -tzf "$tgz")" # read whole: grep -q would stop tar early (SIGPIPE, a failure under pipefail)
  grep -qx 'package/LICENSE' <<<"$listing" || { echo "$(basename "$tgz") has no LICENSE" >&2; exit 1; }
done

install_app() { # $1: folder, rest: extra packages
  local dir="$1"; shift
  mkdir -p "$dir"
  printf '{ "name": "consumer", "private": true, "type": "module" }\n' >"$dir/package.json"
  (cd "$dir" && npm install --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error \
    "$wasm_tgz" "$remit_tgz" "$@" >/dev/null)
  local want have
  want="$(node -p "require('$root/node_modules/better-sqlite3/package.json').version")"
  have="$(node -p "require('$dir/node_modules/better-sqlite3/package.json').version")"
  [ "$want" = "$have" ] || { echo "better-sqlite3 $have installed, the repository built $want" >&2; exit 1; }
  cp -r "$root/node_modules/better-sqlite3/build" "$dir/node_modules/better-sqlite3/"
}
size_mb() { du -sb "$1/node_modules" | awk '{ printf "%.1f", $1 / 1048576 }'; }
package_count() { (cd "$1" && npm ls --all --parseable --omit=dev 2>/dev/null | tail -n +2 | wc -l); }
has_package() { [ -d "$1/node_modules/$2" ] && echo yes || echo no; }

app="$work/app"
log "installing the tarballs into an empty project (--omit=dev)"
install_app "$app"
sqlite_mb="$(size_mb "$app")"; sqlite_packages="$(package_count "$app")"
langchain_installed="$(has_package "$app" @langchain/core)"; pg_installed="$(has_package "$app" pg)"
[ "$langchain_installed" = no ] || { echo "the SQLite-only install contains LangChain" >&2; exit 1; }
[ "$pg_installed" = no ] || { echo "the SQLite-only install contains pg" >&2; exit 1; }
log "SQLite-only install: $sqlite_packages packages, $sqlite_mb MB (no LangChain, no pg)"

log "README quickstart with plain node"
cp examples/quickstart/quickstart.mjs "$app/quickstart.mjs"
for core in wasm reference; do
  out="$(cd "$app" && REMIT_CORE=$core node quickstart.mjs)"
  case "$out" in completed*) log "  $core core: $out" ;; *) echo "quickstart on the $core core printed: $out" >&2; exit 1 ;; esac
done
runs="$(cd "$app" && ./node_modules/.bin/remit --db ./.remit/app.db runs --json)"
node -e 'const r = JSON.parse(process.argv[1]); if (r.length !== 2 || !r.every((x) => x.status === "completed")) { console.error(r); process.exit(1); }' "$runs"
log "  the installed remit bin lists both runs as completed"
# The README's form: with `--`, npm leaves --db (and --workflow, --help) to remit.
runs_npx="$(cd "$app" && npx --no -- remit --db ./.remit/app.db runs --json)"
[ "$runs_npx" = "$runs" ] || { echo "npx --no -- remit printed: $runs_npx" >&2; exit 1; }
log "  npx --no -- remit, as the README writes it, gives the same listing"

log "remit/postgres without pg installed: the import works, opening a store says what to install"
pg_missing="$(cd "$app" && node --input-type=module -e '
  const { openPostgresStore } = await import("remit/postgres");
  const { StoreError } = await import("remit");
  const error = await openPostgresStore({ connectionString: "postgres://u@127.0.0.1:1/db" }).catch((e) => e);
  if (!(error instanceof StoreError) || error.storeCode !== "PG_NOT_INSTALLED") { console.error(error); process.exit(1); }
  console.log(error.message);
')"
case "$pg_missing" in *"npm install pg"*) log "  $pg_missing" ;; *) echo "without pg, openPostgresStore said: $pg_missing" >&2; exit 1 ;; esac

log "type-checking a strict TypeScript consumer (skipLibCheck false, no @types)"
cp scripts/consumer/consumer.ts scripts/consumer/tsconfig.json "$app/"
"$root/node_modules/.bin/tsc" -p "$app/tsconfig.json"
log "  tsc: no errors"

log "a service with its own zod 4 of another release than the one remit pins"
# remit keeps its pinned zod (the fingerprints depend on what zod writes) in its own node_modules;
# the service's schemas come from the service's zod. The quickstart must run and the strict
# consumer must type-check (the state and resume types inferred, not lost to a class mismatch).
other_zod=4.1.12
zod_app="$work/app-other-zod"
install_app "$zod_app" "zod@$other_zod"
have_zod="$(node -p "require('$zod_app/node_modules/zod/package.json').version")"
pinned_zod="$(node -p "require('$zod_app/node_modules/remit/node_modules/zod/package.json').version")"
[ "$have_zod" = "$other_zod" ] && [ "$pinned_zod" != "$other_zod" ] ||
  { echo "expected the service's zod $other_zod beside remit's own, got $have_zod and $pinned_zod" >&2; exit 1; }
cp examples/quickstart/quickstart.mjs scripts/consumer/consumer.ts scripts/consumer/tsconfig.json "$zod_app/"
out="$(cd "$zod_app" && node quickstart.mjs)"
case "$out" in completed*) ;; *) echo "quickstart with zod $other_zod printed: $out" >&2; exit 1 ;; esac
"$root/node_modules/.bin/tsc" -p "$zod_app/tsconfig.json"
log "  zod $other_zod beside remit's $pinned_zod: quickstart completed, tsc: no errors"
# What README says of upgrading zod: remit's pinned copy writes the fingerprinted JSON Schema, so a
# plain schema fingerprints the same under either zod, but a string format's pattern comes from
# the zod that built the schema.
(cd "$zod_app" && node --input-type=module -e '
  import { createRequire } from "node:module";
  import * as theirs from "zod";
  import { END, workflow } from "remit";
  const ours = await import(createRequire(import.meta.resolve("remit")).resolve("zod"));
  const fp = (z, email) => workflow({ name: "w", version: "1", state: z.object({ n: z.number().int().optional(), s: z.string(), ...(email ? { e: z.email() } : {}) }) })
    .pure("a", { run: () => ({}), next: END }).build().fingerprintHex;
  if (fp(theirs.z, false) !== fp(ours.z, false)) throw new Error("a plain schema fingerprints differently under two zod releases");
  if (fp(theirs.z, true) === fp(ours.z, true)) throw new Error("z.email() fingerprints the same under two zod releases: README says otherwise");
')
log "  a plain schema has one fingerprint under both; z.email() one per zod release (README)"

log "checking the published types (@arethetypeswrong/cli, esm-only profile)"
"$root/node_modules/.bin/attw" "$remit_tgz" --profile esm-only --format ascii
"$root/node_modules/.bin/attw" "$wasm_tgz" --profile esm-only --format ascii

log "cold import of 'remit' under plain node (median of 9 processes)"
import_ms() { # $1: what to time (a module body); prints the median in ms
  local samples=()
  for _ in 1 2 3 4 5 6 7 8 9; do
    samples+=("$(cd "$app" && node --input-type=module -e "const t = performance.now(); $1; console.log((performance.now() - t).toFixed(2));")")
  done
  printf '%s\n' "${samples[@]}" | sort -n | sed -n 5p
}
import_ms_median="$(import_ms "await import('remit')")"
wasm_ready_ms_median="$(import_ms "const { createCore } = await import('remit/core'); await createCore('wasm')")"
log "  import('remit'): $import_ms_median ms; import('remit/core') + load the Wasm core: $wasm_ready_ms_median ms"

pg_app="$work/app-pg"
install_app "$pg_app" pg
pg_mb="$(size_mb "$pg_app")"; pg_packages="$(package_count "$pg_app")"
(cd "$pg_app" && node --input-type=module -e "const m = await import('remit/postgres'); if (typeof m.openPostgresStore !== 'function') process.exit(1);")
log "with pg: $pg_packages packages, $pg_mb MB (remit/postgres imports)"

mkdir -p "$(dirname "$report")"
cat >"$report" <<JSON
{
  "node": "$(node --version)",
  "sqlite_only": { "packages": $sqlite_packages, "installed_mb": $sqlite_mb, "langchain": false, "pg": false },
  "with_pg": { "packages": $pg_packages, "installed_mb": $pg_mb },
  "cold_import_ms_median": $import_ms_median,
  "import_and_wasm_core_ms_median": $wasm_ready_ms_median,
  "tarballs_kb": { "remit": $(( $(stat -c %s "$remit_tgz") / 1024 )), "core_wasm": $(( $(stat -c %s "$wasm_tgz") / 1024 )) }
}
JSON
log "passed; figures in ${report#"$root"/}"
