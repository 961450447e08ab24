#!/usr/bin/env bash
# Builds what the packages ship: the Wasm core and its jco bindings (wasm/pkg, package
# @remit/core-wasm) and the library's compiled ESM with declarations (ts-shell/dist, package
# remit). Each step skips when its inputs are unchanged; `--force` rebuilds both.
set -euo pipefail
cd "$(dirname "$0")/.."
force=${1:-}
bash scripts/build-wasm.sh $force

# The library: tsc, skipped when a content stamp of its sources and configs is unchanged.
stamp_file=ts-shell/dist/.build-stamp
stamp="$(
  {
    node --version
    sha256sum tsconfig.json ts-shell/tsconfig.build.json ts-shell/package.json package-lock.json
    find ts-shell/src -type f -name '*.ts' ! -name '*.test.ts' | LC_ALL=C sort | xargs sha256sum
  } | sha256sum | cut -d' ' -f1
)"
if [ "$force" != "--force" ] && [ -f "$stamp_file" ] && [ "$(cat "$stamp_file")" = "$stamp" ]; then
  echo "library: up to date (ts-shell/dist)"
  exit 0
fi
rm -rf ts-shell/dist
npx tsc -p ts-shell/tsconfig.build.json
echo "$stamp" >"$stamp_file"
echo "library: built ts-shell/dist"
