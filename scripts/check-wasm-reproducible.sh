#!/usr/bin/env bash
# Builds the Wasm core module, the component and the jco bindings twice from clean, in two
# separate cargo target directories, and compares their sha256. Exits 1 on any difference.
# Takes about two full wasm32 builds (standard library included): ~1 minute each on 2 cores.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$root/target/repro"
rm -rf "$work"

for side in a b; do
  echo "== build $side (clean target dir $work/$side/target)"
  REMIT_WASM_TARGET_DIR="$work/$side/target" \
    REMIT_WASM_OUT_DIR="$work/$side/out" \
    REMIT_WASM_PKG_DIR="$work/$side/pkg" \
    bash "$root/scripts/build-wasm.sh" --force
done

status=0
for f in out/remit_core.core.wasm out/remit_core.component.wasm \
  pkg/remit_core.core.wasm pkg/remit_core.js pkg/remit_core.d.ts; do
  a="$(sha256sum "$work/a/$f" | cut -d' ' -f1)"
  b="$(sha256sum "$work/b/$f" | cut -d' ' -f1)"
  if [ "$a" = "$b" ]; then
    echo "same      $f  $a"
  else
    echo "DIFFERENT $f  $a vs $b"
    status=1
  fi
done
if [ "$status" = 0 ]; then
  echo "reproducible: both clean builds are byte-identical"
else
  echo "NOT reproducible" >&2
fi
exit "$status"
