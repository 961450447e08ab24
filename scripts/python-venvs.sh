#!/usr/bin/env bash
# Build the Python adapters' virtual environments (.remit/venvs/<name>) from the committed lock
# files (conformance/adapters/python/locks/<name>.txt): exact pins, every wheel checked against
# its sha256 (pip --require-hashes), no dependency resolution at install time (--no-deps).
#
# Idempotent: an environment whose stamp matches its lock file and interpreter is left alone
# (a second run takes well under a second). One that cannot be built is not fatal: its reason
# goes to .remit/venvs/<name>.unavailable, which the conformance harness prints as
# "NOT RUN <system>: <reason>". Exit status: 0, or 1 if an environment could not be built.
#
# Usage: bash scripts/python-venvs.sh [name ...]     (default: every lock file)
# The three builds run in parallel (downloads dominate); REMIT_PYTHON picks the interpreter.
set -uo pipefail
cd "$(dirname "$0")/.."
locks=conformance/adapters/python/locks
root=.remit/venvs
python=${REMIT_PYTHON:-python3}
mkdir -p "$root"
log() { printf '[python-venvs] %s\n' "$*"; }

names=("$@")
if ((${#names[@]} == 0)); then
  for lock in "$locks"/*.txt; do names+=("$(basename "$lock" .txt)"); done
fi

unavailable() { # name reason
  printf '%s\n' "$2" > "$root/$1.unavailable"
  log "NOT BUILT $1: $2"
  return 1
}

build() { # name
  local name=$1 lock="$locks/$1.txt" venv="$root/$1"
  [ -f "$lock" ] || { unavailable "$name" "no lock file $lock"; return 1; }
  if ! command -v "$python" >/dev/null 2>&1; then
    unavailable "$name" "no Python interpreter ($python) on PATH; the lock wants CPython $(sed -n 's/^# python-version: //p' "$lock")"
    return 1
  fi
  local have want_py stamp_value
  have=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || echo '?')
  want_py=$(sed -n 's/^# python-version: //p' "$lock")
  if [ "$have" != "$want_py" ]; then
    unavailable "$name" "$python is CPython $have; $lock was resolved for CPython $want_py (regenerate it with scripts/python-locks.sh)"
    return 1
  fi
  stamp_value="$(sha256sum "$lock" | cut -d' ' -f1) $("$python" -c 'import sys; print(sys.version.split()[0])')"
  if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.remit-stamp" 2>/dev/null)" = "$stamp_value" ]; then
    rm -f "$root/$name.unavailable"
    return 0
  fi
  local started=$SECONDS
  log "building $name from $lock"
  rm -rf "$venv" "$root/$name.unavailable"
  if ! "$python" -m venv "$venv" > "$root/$name.log" 2>&1; then
    unavailable "$name" "python3 -m venv failed: $(tail -n 1 "$root/$name.log")"
    return 1
  fi
  if ! "$venv/bin/python" -m pip install --no-input --disable-pip-version-check --quiet \
      --require-hashes --no-deps --only-binary=:all: -r "$lock" >> "$root/$name.log" 2>&1; then
    local why
    why=$(grep -E 'ERROR|error' "$root/$name.log" | tail -n 1)
    rm -rf "$venv"
    unavailable "$name" "pip install from $lock failed: ${why:-see $root/$name.log}"
    return 1
  fi
  echo "$stamp_value" > "$venv/.remit-stamp"
  log "built $name in $((SECONDS - started)) s ($(du -sm "$venv" | cut -f1) MB)"
}

pids=()
for name in "${names[@]}"; do
  build "$name" &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
exit $status
