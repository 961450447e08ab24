#!/usr/bin/env bash
# Builds the recovery core as a WebAssembly component and its jco bindings:
#
#   verus-core/ + wasm/  --cargo (wasm32, no_std, build-std)-->  wasm/build/remit_core.core.wasm
#                        --componentEmbed + componentNew------->  wasm/build/remit_core.component.wasm
#                        --jco transpile------------------------>  wasm/pkg/remit_core.{js,d.ts,core.wasm}
#
# Skips all work when a content stamp of the inputs (sources, manifests, lock file, WIT, this
# script, toolchain versions) matches the last build. `--force` rebuilds anyway.
# Environment (used by scripts/check-wasm-reproducible.sh):
#   REMIT_WASM_TARGET_DIR  cargo target dir          (default: target/wasm)
#   REMIT_WASM_OUT_DIR     core module + component    (default: wasm/build)
#   REMIT_WASM_PKG_DIR     transpiled bindings        (default: wasm/pkg)
#
# Toolchain: Debian's rustc-web/cargo-web (1.96) with rust-web-src and lld-19, because rustup's
# toolchain here has no wasm32 standard library (details:
# wasm/README.md). scripts/setup.sh installs those packages on a fresh machine.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target_dir="${REMIT_WASM_TARGET_DIR:-$root/target/wasm}"
out_dir="${REMIT_WASM_OUT_DIR:-$root/wasm/build}"
pkg_dir="${REMIT_WASM_PKG_DIR:-$root/wasm/pkg}"
force=0
if [ "${1:-}" = "--force" ]; then force=1; fi

rustc_bin=/usr/bin/rustc
cargo_bin=/usr/bin/cargo
linker=wasm-ld-19

die() { echo "build-wasm: $*" >&2; exit 1; }
[ -x "$rustc_bin" ] || die "$rustc_bin missing: apt-get install -y rustc-web cargo-web rust-web-src lld-19"
[ -x "$cargo_bin" ] || die "$cargo_bin missing: apt-get install -y cargo-web"
command -v "$linker" >/dev/null || die "$linker missing: apt-get install -y lld-19"
sysroot="$("$rustc_bin" --print sysroot)"
[ -d "$sysroot/lib/rustlib/src/rust/library" ] || die "standard library source missing: apt-get install -y rust-web-src"
[ -d "$root/node_modules/@bytecodealliance/jco" ] || die "node_modules/@bytecodealliance/jco missing: npm install"

# Content stamp: every input file's hash, in a fixed order, plus the tool versions.
inputs() {
  cd "$root"
  {
    printf '%s\n' Cargo.toml Cargo.lock .cargo/config.toml scripts/build-wasm.sh \
      verus-core/Cargo.toml wasm/Cargo.toml wasm/remit-core.wit wasm/build-component.mjs
    find verus-core/src wasm/src -type f -name '*.rs'
  } | LC_ALL=C sort
}
stamp="$(
  {
    "$rustc_bin" -vV
    "$linker" --version
    node --version
    grep '"version"' "$root/node_modules/@bytecodealliance/jco/package.json"
    grep '"version"' "$root/node_modules/@bytecodealliance/jco-transpile/package.json"
    echo "$target_dir"
    inputs | while read -r f; do
      [ -f "$root/$f" ] || die "input missing: $f"
      sha256sum "$root/$f" | sed "s|$root/||"
    done
  } | sha256sum | cut -d' ' -f1
)"

core_out="$out_dir/remit_core.core.wasm"
component_out="$out_dir/remit_core.component.wasm"
stamp_file="$out_dir/stamp"
if [ "$force" = 0 ] && [ -f "$stamp_file" ] && [ "$(cat "$stamp_file")" = "$stamp" ] \
  && [ -f "$core_out" ] && [ -f "$component_out" ] && [ -f "$pkg_dir/remit_core.js" ]; then
  echo "wasm: up to date ($(sha256sum "$component_out" | cut -c1-16) component)"
  exit 0
fi

started_s=$SECONDS
# Reproducibility: absolute paths are remapped (later flags win, so the target dir last);
# one codegen unit; no debug info; the wasm-release profile strips names (Cargo.toml).
cargo_home="${CARGO_HOME:-$HOME/.cargo}"
rustflags=(
  "-C" "linker=$linker"
  "-C" "codegen-units=1"
  "--remap-path-prefix=$cargo_home=/cargo"
  "--remap-path-prefix=$sysroot/lib/rustlib/src/rust=/rustc"
  "--remap-path-prefix=$(readlink -f "$sysroot/lib/rustlib/src/rust")=/rustc"
  "--remap-path-prefix=$root=/remit"
  "--remap-path-prefix=$target_dir=/target"
)
(
  cd "$root"
  RUSTC="$rustc_bin" RUSTC_BOOTSTRAP=1 CARGO_TARGET_DIR="$target_dir" \
    CARGO_ENCODED_RUSTFLAGS="$(IFS=$'\x1f'; echo "${rustflags[*]}")" \
    SOURCE_DATE_EPOCH=0 \
    "$cargo_bin" build --locked -p remit-core-wasm --profile wasm-release \
    --target wasm32-unknown-unknown -Zbuild-std=core,alloc
)
mkdir -p "$out_dir"
cp "$target_dir/wasm32-unknown-unknown/wasm-release/remit_core.wasm" "$core_out"
node "$root/wasm/build-component.mjs" "$core_out" "$component_out" "$pkg_dir"
echo "$stamp" >"$stamp_file"
echo "wasm: built in $((SECONDS - started_s)) s"
for f in "$core_out" "$component_out"; do
  printf '  %-40s %7d bytes  sha256 %s\n' "${f#"$root"/}" "$(stat -c %s "$f")" "$(sha256sum "$f" | cut -d' ' -f1)"
done
