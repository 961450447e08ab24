#!/usr/bin/env bash
# Idempotent set-up: Debian packages, npm dependencies, the Wasm core and the library's dist/.
# Every step checks first and skips when its output is current, so a re-run on a ready machine
# takes seconds.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '[setup] %s\n' "$*"; }

# Debian packages: the Rust-to-Wasm route (wasm/README.md, "Build": rustup's toolchain here has no
# wasm32 standard library, Debian's rustc-web does) and the C/C++ toolchain that better-sqlite3
# compiles with (its prebuilt download is blocked on this project's machines).
apt_packages=(rustc-web cargo-web rust-web-src lld-19 python3 make g++)
missing=()
for pkg in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
if ((${#missing[@]})); then
  log "installing Debian packages: ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then sudo=sudo; else sudo=; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# npm dependencies: reinstall only when package-lock.json changed since the last install.
lock_hash=$(sha256sum package-lock.json | cut -d' ' -f1)
stamp=node_modules/.remit-lock-sha256
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$lock_hash" ]; then
  log "installing npm dependencies (better-sqlite3 compiles from source: a few minutes the first time)"
  npm ci --no-audit --no-fund
  echo "$lock_hash" > "$stamp"
fi

# The Wasm component and its jco bindings, and the library's dist/ (each skips when unchanged).
bash scripts/build.sh

# The conformance harness's Python peers (LangGraph, CrewAI Flows, pydantic-graph): one virtual
# environment each, from the committed lock files (about 1.5 minutes the first time, under a second
# after). Not fatal: a system whose environment is missing is reported "NOT RUN <system>: <reason>".
if [ "${REMIT_SKIP_PYTHON:-0}" = "1" ]; then
  log "REMIT_SKIP_PYTHON=1: the Python virtual environments are not built"
else
  bash scripts/python-venvs.sh || log "a Python virtual environment could not be built (above); its system will be NOT RUN"
fi
log "ready"
