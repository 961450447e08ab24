#!/usr/bin/env bash
# bash proofs/extract/build.sh [--check]
#
# Builds the extracted model: Coq 8.16 compiles proofs/coq (the files the proofs use, in
# _CoqProject order), Extract.v extracts recover, action_of, status_of and admit to OCaml
# (failing unless each is "Closed under the global context"), ocamlc links them with oracle.ml
# (the JavaScript boundary), and js_of_ocaml turns the bytecode into a CommonJS module that Node
# imports: proofs/extract/build/remit-model.cjs, with build/stamp (the sha-256 of every input and
# the tool versions) so a stale build is recognised.
#
# The module is built twice, in two fresh directories, and the two must be byte-identical (the
# reproducibility check); --check only reports whether build/ matches the sources (exit 1 if not).
# Installs coq, ocaml-nox, ocaml-findlib, js-of-ocaml and libjs-of-ocaml-dev from Debian when
# missing. The generated JavaScript is not committed: it is built on demand.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
coq_dir="$here/../coq"
out="$here/build"
say() { printf '[extract] %s\n' "$*"; }
die() { printf '[extract] FAIL: %s\n' "$*" >&2; exit 1; }

COQ_SERIES="8.16"

inputs_digest() {
  {
    for f in $(grep -v '^-' "$coq_dir/_CoqProject"); do sha256sum "$coq_dir/$f" | cut -d' ' -f1; done
    sha256sum "$coq_dir/_CoqProject" "$here/Extract.v" "$here/oracle.ml" "$here/build.sh" | cut -d' ' -f1
    coqc --version | head -1
    ocamlc -version
    js_of_ocaml --version
  } | sha256sum | cut -d' ' -f1
}

ensure_tools() {
  local missing=()
  command -v coqc >/dev/null || missing+=(coq)
  command -v ocamlc >/dev/null || missing+=(ocaml-nox)
  command -v ocamlfind >/dev/null || missing+=(ocaml-findlib)
  command -v js_of_ocaml >/dev/null || missing+=(js-of-ocaml)
  ocamlfind query js_of_ocaml >/dev/null 2>&1 || missing+=(libjs-of-ocaml-dev)
  if [ ${#missing[@]} -gt 0 ]; then
    say "installing from Debian: ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y "${missing[@]}"
  fi
  local v
  v=$(coqc --version | head -1 | sed 's/.*version //')
  case "$v" in "$COQ_SERIES".*) ;; *) die "Coq $COQ_SERIES is required (Debian bookworm's coq), found $v" ;; esac
}

build_once() {   # DIR: compile, extract, link, translate; leaves DIR/remit-model.cjs
  local dir="$1" f
  mkdir -p "$dir/coq" "$dir/ml"
  cp "$coq_dir"/_CoqProject "$coq_dir"/*.v "$dir/coq/"
  (cd "$dir/coq" && for f in $(grep -v '^-' _CoqProject); do coqc -q -w -all -R . Remit "$f" || exit 1; done) ||
    die "coqc failed on proofs/coq"
  cp "$here/Extract.v" "$dir/ml/"
  (cd "$dir/ml" && coqc -q -R ../coq Remit Extract.v > assumptions.txt 2>&1) || { cat "$dir/ml/assumptions.txt"; die "extraction failed"; }
  local printed closed
  printed=$(grep -c '^Print Assumptions' "$here/Extract.v")
  closed=$(grep -c 'Closed under the global context' "$dir/ml/assumptions.txt" || true)
  [ "$closed" -eq "$printed" ] || { cat "$dir/ml/assumptions.txt"; die "an extracted definition depends on an axiom ($closed of $printed closed)"; }
  cp "$here/oracle.ml" "$dir/ml/"
  (cd "$dir/ml" &&
    ocamlfind ocamlc -package js_of_ocaml -linkpkg -w -a -o oracle.byte remit_model.mli remit_model.ml oracle.ml &&
    js_of_ocaml --opt 3 --no-sourcemap -o remit-model.cjs oracle.byte) > "$dir/ml/build.log" 2>&1 ||
    { cat "$dir/ml/build.log"; die "OCaml or js_of_ocaml failed"; }
}

ensure_tools
digest=$(inputs_digest)
if [ "${1:-}" = "--check" ]; then
  [ -f "$out/stamp" ] && [ "$(cat "$out/stamp")" = "$digest" ] && [ -f "$out/remit-model.cjs" ] &&
    { say "build/ matches the sources"; exit 0; }
  say "build/ is missing or stale"; exit 1
fi

say "Coq $(coqc --version | head -1 | sed 's/.*version //'), OCaml $(ocamlc -version), js_of_ocaml $(js_of_ocaml --version)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
build_once "$tmp/a"
build_once "$tmp/b"
cmp "$tmp/a/ml/remit-model.cjs" "$tmp/b/ml/remit-model.cjs" || die "two builds differ: the build is not reproducible"
cmp "$tmp/a/ml/remit_model.ml" "$tmp/b/ml/remit_model.ml" || die "two extractions differ"
mkdir -p "$out"
cp "$tmp/a/ml/remit-model.cjs" "$tmp/a/ml/remit_model.ml" "$tmp/a/ml/remit_model.mli" "$tmp/a/ml/assumptions.txt" "$out/"
echo "$digest" > "$out/stamp"
node -e "const m = require(process.argv[1]); if (typeof m.remitModel?.recover !== 'function') process.exit(1)" "$out/remit-model.cjs" ||
  die "node cannot load build/remit-model.cjs"
say "extracted definitions: $(grep -c '^Print Assumptions' "$here/Extract.v"), each closed under the global context"
say "two builds byte-identical: sha256 $(sha256sum "$out/remit-model.cjs" | cut -d' ' -f1), $(wc -c < "$out/remit-model.cjs") bytes"
say "wrote proofs/extract/build/remit-model.cjs"
