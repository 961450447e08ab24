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
# npm links a workspace's bin only when its target exists, and `npm ci` runs before dist/ is
# built: link `remit` into node_modules/.bin (and make it executable) so `npx remit` in a clone
# runs this build, not a package of that name from the registry.
# tsc writes main.js without the execute bit, and npm does not set it again on a link that is
# already there (a rebuild after the first): set it here.
link_bin() {
  chmod +x ts-shell/dist/cli/main.js
  if [ ! -x node_modules/.bin/remit ]; then npm rebuild remit --ignore-scripts --no-audit --no-fund >/dev/null; fi
}
if [ "$force" != "--force" ] && [ -f "$stamp_file" ] && [ "$(cat "$stamp_file")" = "$stamp" ]; then
  echo "library: up to date (ts-shell/dist)"
  link_bin
  exit 0
fi
rm -rf ts-shell/dist
npx tsc -p ts-shell/tsconfig.build.json
echo "$stamp" >"$stamp_file"
link_bin
echo "library: built ts-shell/dist"
