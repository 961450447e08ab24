#!/usr/bin/env bash
# Regenerate the Python adapters' lock files from their .in files (conformance/adapters/python/locks/).
# Resolves with pip in a throw-away virtual environment on this machine's python3 and records, for
# every distribution, the exact version and the sha256 of the wheel pip picked. Run it after
# changing a .in file, then rebuild the environments with scripts/python-venvs.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
locks=conformance/adapters/python/locks
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m venv "$tmp/venv"
for source in "$locks"/*.in; do
  name=$(basename "$source" .in)
  echo "[locks] resolving $name"
  "$tmp/venv/bin/pip" install --quiet --no-input --dry-run --ignore-installed --only-binary=:all: \
    --report "$tmp/$name.json" -r "$source"
  "$tmp/venv/bin/python" conformance/adapters/python/tools/report_to_lock.py "$tmp/$name.json" "$(basename "$source")" > "$locks/$name.txt"
  echo "[locks] $locks/$name.txt: $(grep -c -- '--hash=' "$locks/$name.txt") distributions"
done
