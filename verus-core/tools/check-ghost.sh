#!/usr/bin/env bash
# Type-checks the crate's Verus specifications (spec fns, proof fns, requires/ensures) with
# stock rustc by keeping ghost code (tools/rustc-ghost.sh explains how). Catches misspelt
# names and type errors in the specifications; PROVES NOTHING.
#
# Stock rustc also runs the borrow checker over ghost code, which Verus exempts (spec values
# are freely copyable there), so ownership errors (moves and borrows) are expected and
# filtered out; every other error fails the check. Uses the Debian rustc 1.96 with
# RUSTC_BOOTSTRAP for the unstable attributes vstd's ghost code needs.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
root="$(cd "$here/.." && pwd)"
rustc_bin="${REMIT_RUSTC:-/usr/bin/rustc}"
cargo_bin="${REMIT_CARGO:-/usr/bin/cargo}"
cd "$root" || exit 2
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
RUSTC="$rustc_bin" RUSTC_BOOTSTRAP=1 RUSTC_WRAPPER="$here/tools/rustc-ghost.sh" \
  CARGO_TARGET_DIR="$root/target/ghost-check" \
  "$cargo_bin" check -p remit-verus-core --lib --message-format short "$@" >"$log" 2>&1
ownership='E0382|E0505|E0507|E0499|E0502|E0506|E0716|E0597|E0373|E0384|E0381'
real_errors="$(grep -E 'error(\[E[0-9]+\])?:' "$log" | grep -vE "error\[($ownership)\]" \
  | grep -vE 'could not compile|aborting due to')"
ownership_count="$(grep -cE "error\[($ownership)\]" "$log")"
if [ -n "$real_errors" ]; then
  echo "$real_errors"
  echo "ghost code does NOT type-check"
  exit 1
fi
if ! grep -q 'remit-verus-core\|remit_verus_core' "$log" && ! grep -q 'Finished\|could not compile' "$log"; then
  cat "$log"
  echo "check did not run"
  exit 2
fi
echo "ghost code type-checks ($ownership_count ownership diagnostics ignored; this is not a Verus verification)"
