#!/usr/bin/env bash
# npm run proofs [-- --ci | --full]
#
# Checks the machine-checked models of proofs/README.md and prints their figures:
#   1. Coq: compiles proofs/coq (order of _CoqProject), prints every theorem's statement and
#      `Print Assumptions` for each; fails unless each is "Closed under the global context" and
#      no Admitted/admit/Axiom/Parameter appears in the sources.
#   2. SPIN: proofs/spin/remit.pml at one or two bounds, exhaustive (no bitstate): the assertion
#      run (all properties at once), each LTL claim on its own (liveness under weak fairness),
#      the canaries (mutant models that must each produce a counterexample trail), the fence's
#      bounds (two sequencers on one run: kills, a throwing handler, a restart under a new
#      instance id, a lease that expires under a live owner) and the fence's canary (no fence:
#      two sequencers both call the handler).
#
#   --ci    (default) Coq + the CI bound (2.1 million states) + every claim + the fence bounds +
#           canaries (545 s of CPU; see proofs/README.md for wall times)
#   --full  Coq + the headline bound (every claim) + the scaled bound (one more crash; the
#           assertion run) + the fence bounds + canaries (46 min before the fence; MEMLIM 7.5 GB)
#
# Figures go to the console and to proofs/results/{coq,spin-ci|spin-full}.json. Installs spin,
# coq and gcc from Debian when one is missing.
set -euo pipefail

mode=ci
case "${1:-}" in
  ""|--ci) mode=ci ;;
  --full) mode=full ;;
  *) echo "usage: bash proofs/run.sh [--ci | --full]" >&2; exit 2 ;;
esac

proofs="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$proofs/spin/work"
results="$proofs/results"
mkdir -p "$work" "$results"

say() { printf '[proofs] %s\n' "$*"; }
die() { printf '[proofs] FAIL: %s\n' "$*" >&2; exit 1; }

# ------------------------------------------------------------------------------ tools
ensure_tools() {
  local missing=()
  command -v spin >/dev/null || missing+=(spin)
  command -v coqc >/dev/null || missing+=(coq)
  command -v gcc >/dev/null || missing+=(gcc)
  [ ${#missing[@]} -eq 0 ] && return 0
  say "installing from Debian: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y "${missing[@]}"
}

# ------------------------------------------------------------------------------ Coq
coq_theorem_names() {
  # Every Theorem/Lemma/Corollary, qualified by its file's module: Remit.File.name
  local f
  for f in $(grep -v '^-' "$proofs/coq/_CoqProject"); do
    grep -hE '^(Theorem|Lemma|Corollary) ' "$proofs/coq/$f" |
      sed -E "s/^(Theorem|Lemma|Corollary) ([A-Za-z0-9_']+).*/Remit.${f%.v}.\\2/"
  done
}

run_coq() {
  say "Coq $(coqc --version | head -1 | sed 's/.*version //')"
  local forbidden
  forbidden=$(grep -nE '(^|[;|[]|^\s*[-+*]+)\s*admit\s*[.;]|\bAdmitted\b|^\s*(Axiom|Axioms|Parameter|Parameters|Conjecture)\b' \
    "$proofs"/coq/*.v || true)
  [ -z "$forbidden" ] || die "unproved or assumed statements in proofs/coq:
$forbidden"
  local start_s=$SECONDS f
  (
    cd "$proofs/coq"
    for f in $(grep -v '^-' _CoqProject); do
      coqc -R . Remit "$f" || exit 1
    done
  ) || die "coqc failed"
  local compile_s=$((SECONDS - start_s))

  # The printing script is generated from the sources, so it covers every theorem there is.
  local names script out
  names=$(coq_theorem_names)
  script="$work/PrintTheorems.v"
  {
    echo "From Remit Require Import $(grep -v '^-' "$proofs/coq/_CoqProject" | sed 's/\.v$//' | paste -sd' ')."
    for n in $names; do
      echo "Check $n."
      echo "Print Assumptions $n."
    done
  } > "$script"
  out="$work/coq-assumptions.txt"
  (cd "$proofs/coq" && coqc -R . Remit "$script") > "$out" 2>&1 || { cat "$out"; die "printing theorems failed"; }
  local count closed
  count=$(echo "$names" | wc -l)
  closed=$(grep -c 'Closed under the global context' "$out" || true)
  [ "$closed" -eq "$count" ] || { grep -B2 -A8 -E 'Axioms:|Section Variables' "$out" | head -40; \
    die "$((count - closed)) of $count theorems depend on axioms or section variables"; }
  local files
  files=$(grep -vc '^-' "$proofs/coq/_CoqProject")
  say "Coq: $count theorems/lemmas/corollaries in $files files, each 'Closed under the global context' (compile ${compile_s} s)"
  say "     statements and assumptions: $out"
  COQ_THEOREMS=$count
  {
    printf '{\n  "coq_version": "%s",\n  "files": %s,\n  "theorems_checked": %s,\n' \
      "$(coqc --version | head -1 | sed 's/.*version //')" "$files" "$count"
    printf '  "closed_under_global_context": %s,\n  "compile_s": %s,\n  "theorems": [\n' "$closed" "$compile_s"
    echo "$names" | sed 's/.*/    "&"/' | paste -sd, | sed 's/,/,\n/g'
    printf '  ]\n}\n'
  } > "$results/coq.json"
}

# ------------------------------------------------------------------------------ SPIN
SPIN_ROWS=()     # JSON objects, one per pan run
TABLE_ROWS=()    # console table lines

# spin_run LABEL BOUND_DEFINES RUN_KIND CLAIM EXPECT [MUTANT]
#   RUN_KIND: safety (assertions + invalid end states, no claim) | ltl | live (ltl with weak fairness)
#   EXPECT:   pass | fail
spin_run() {
  local label="$1" defines="$2" kind="$3" claim="$4" expect="$5" mutant="${6:-0}"
  local dir="$work/$label"
  rm -rf "$dir"; mkdir -p "$dir"; cp "$proofs/spin/remit.pml" "$dir/model.pml"
  local cflags="-O2 -DCOLLAPSE -DMEMLIM=$SPIN_MEMLIM_MB -DVECTORSZ=2048 -DNFAIR=4"
  local panflags="-m20000 -w$SPIN_HASH_LOG2"
  case "$kind" in
    safety) cflags="$cflags -DSAFETY -DNOCLAIM" ;;
    # No -A: SPIN compiles a safety claim ([] !bad) into an assert inside the never claim, which
    # -A would silence. The model is built with FLAGS_ONLY: its checks only set the flags, so a
    # run reports its own claim.
    ltl) panflags="$panflags -a -N $claim" ;;
    live) panflags="$panflags -a -f -N $claim" ;;
  esac
  (
    cd "$dir"
    local flags_only=""
    [ "$kind" != safety ] && flags_only="-DFLAGS_ONLY"
    spin $defines $flags_only -DMUTANT=$mutant -a model.pml > spin.out 2>&1 || { cat spin.out; exit 1; }
    gcc $cflags -o pan pan.c 2> gcc.out || { cat gcc.out; exit 1; }
    local t0=$SECONDS
    ./pan $panflags > pan.out 2>&1 || true
    echo $((SECONDS - t0)) > wall_s
  ) || die "$label: could not build the model"
  local o="$dir/pan.out"
  if grep -q 'reached -DMEMLIM bound' "$o"; then die "$label: ran out of memory (MEMLIM ${SPIN_MEMLIM_MB} MB)"; fi
  if grep -q 'max search depth too small' "$o"; then die "$label: search depth limit reached"; fi
  local errors states transitions depth mem_mb elapsed_s violation
  errors=$(grep -oE 'errors: [0-9]+' "$o" | tail -1 | grep -oE '[0-9]+' || true)
  states=$(grep -E 'states, stored' "$o" | head -1 | awk '{print $1}' || true)
  transitions=$(grep -E 'transitions \(= (stored|visited)\+matched\)' "$o" | head -1 | awk '{print $1}' || true)
  depth=$(grep -oE 'depth reached [0-9]+' "$o" | head -1 | grep -oE '[0-9]+' || true)
  mem_mb=$(grep -E 'total actual memory usage' "$o" | head -1 | awk '{print $1}' || true)
  elapsed_s=$(grep -oE 'elapsed time [0-9.e+]+' "$o" | head -1 | awk '{print $3}' || true)
  violation=$(grep -E '^pan:1: ' "$o" | head -1 | sed -E 's/^pan:1: //; s/ \(at depth [0-9]+\)//; s/"/'"'"'/g' || true)
  [ -n "$states" ] || { cat "$o"; die "$label: pan printed no statistics"; }
  local verdict
  if [ "$errors" = "0" ]; then verdict=holds; else verdict=violated; fi
  if [ "$expect" = pass ] && [ "$verdict" != holds ]; then
    cat "$o" | head -30; die "$label: expected no error, got: $violation"
  fi
  if [ "$expect" = fail ] && [ "$verdict" != violated ]; then
    die "$label: a canary produced no counterexample (the check cannot fail?)"
  fi
  local trail="-"
  if [ "$verdict" = violated ]; then
    [ -f "$dir/model.pml.trail" ] || die "$label: violated but no trail written"
    trail="proofs/spin/work/$label/model.pml.trail"
    # The model's TRAIL lines (claims, handler calls, outcomes, lease expiries, kills) of the
    # counterexample, replayed: a readable account of it.
    (cd "$dir" && spin -t $defines $([ "$kind" != safety ] && echo -DFLAGS_ONLY) -DMUTANT=$mutant model.pml 2>&1 |
      grep -E 'TRAIL|violated' | sed -E 's/^\s+//' > trail.txt) || true
  fi
  TABLE_ROWS+=("$(printf '%-34s %-22s %-9s %12s %13s %6s %9s %8s  %s' \
    "$label" "$claim" "$verdict" "$states" "$transitions" "$depth" "$mem_mb" "$elapsed_s" "${violation:-}")")
  SPIN_ROWS+=("$(printf '{"run": "%s", "defines": "%s", "kind": "%s", "claim": "%s", "mutant": %s, "expect": "%s", "verdict": "%s", "states_stored": %s, "transitions": %s, "depth": %s, "memory_mb": %s, "time_s": %s, "errors": %s, "violation": "%s", "trail": "%s"}' \
    "$label" "$defines" "$kind" "$claim" "$mutant" "$expect" "$verdict" "$states" "$transitions" "$depth" "$mem_mb" "$elapsed_s" "$errors" "${violation:-}" "$trail")")
  say "$(printf '%-34s %-22s %s  states=%s depth=%s mem=%sMB t=%ss %s' "$label" "$claim" "$verdict" "$states" "$depth" "$mem_mb" "$elapsed_s" "${violation:-}")"
}

CLAIMS="prefix_continuation effect_exactly_once fork_determinism checkpoint_validity consume_once recovery_determinism fork_intent no_late_invocation invocation_bound"
# The fence's own claims, checked one by one at the fence's bounds (their assertion run checks every
# other property at once; forks and the traveller are off there, the CI and headline bounds check
# those with the fence in place).
FENCE_CLAIMS="no_late_invocation invocation_bound"

spin_bound() {   # NAME DEFINES WITH_CLAIMS(yes|no)
  local name="$1" defines="$2" claims="$3" c
  say "SPIN bound '$name': $defines"
  spin_run "$name-assertions" "$defines" safety "(all assertions)" pass
  if [ "$claims" = yes ]; then
    for c in $CLAIMS; do spin_run "$name-$c" "$defines" ltl "$c" pass; done
    spin_run "$name-live" "$defines" live "live" pass
  fi
}

spin_canaries() {   # DEFINES: each mutant must produce a trail, on the property it breaks
  local defines="$1" m flag claim
  say "SPIN canaries (mutant models; each must produce a counterexample trail, as an assertion and as its LTL claim)"
  for m in 1 2 3 4; do
    case $m in
      1) flag=bad_consume; claim=consume_once ;;           # the claim is not a conditional append
      2) flag=bad_effect; claim=effect_exactly_once ;;     # effect completion not checked before re-running
      3) flag=bad_fork; claim=fork_determinism ;;          # fork appends to the source
      4) flag=bad_valid; claim=checkpoint_validity ;;      # state persisted without validation
    esac
    spin_run "canary-$m" "$defines" safety "(all assertions)" fail "$m"
    grep -q "assertion violated  !($flag)" "$work/canary-$m/pan.out" ||
      die "canary-$m: the trail violates $(grep -E '^pan:1:' "$work/canary-$m/pan.out"), expected $flag"
    spin_run "canary-$m-ltl" "$defines" ltl "$claim" fail "$m"
    grep -q "assertion violated.*($flag)" "$work/canary-$m-ltl/pan.out" ||
      die "canary-$m-ltl: the trail violates $(grep -E '^pan:1:' "$work/canary-$m-ltl/pan.out"), expected claim $claim"
  done
}

expect_trail_on() {   # LABEL FLAG: the run's counterexample violates FLAG
  grep -q "assertion violated.*($2)" "$work/$1/pan.out" ||
    die "$1: the trail violates $(grep -E '^pan:1:' "$work/$1/pan.out"), expected $2"
}

spin_fence() {   # NAME DEFINES WITH_LIVE(yes|no): two sequencers on one run, through the invocation fence
  local name="$1" defines="$2" live="$3" c
  say "SPIN fence bound '$name': $defines"
  spin_run "$name-assertions" "$defines" safety "(all assertions)" pass
  for c in $FENCE_CLAIMS; do spin_run "$name-$c" "$defines" ltl "$c" pass; done
  [ "$live" = yes ] && spin_run "$name-live" "$defines" live "live" pass
  return 0
}

spin_lease() {   # DEFINES: the fence bound with a lease that expires while its owner holds the attempt
  local defines="$1"
  say "SPIN lease bound: $defines"
  spin_run "lease-assertions" "$defines" safety "(all assertions)" pass
  spin_run "lease-invocation_bound" "$defines" ltl invocation_bound pass
  # The guide counts this case: a lease that expires under a live owner lets a second sequencer
  # call the handler (the strong reading does not hold then; the bound does).
  spin_run "lease-no_late_invocation" "$defines" ltl no_late_invocation fail
  expect_trail_on lease-no_late_invocation late_invocation
  # Finding (resolved 2026-12-01): the bound with the guide's former wording of its lease term
  # ("leases that expired while their handler was still running") fails: a lease that expires
  # after the attempt committed and before the handler started lets the taker call too. The guide
  # now counts leases that expired while their owner held the attempt (invocation_bound above);
  # this run checks that the narrower wording stays wrong (proofs/README.md, "Findings").
  spin_run "lease-docs_invocation_bound" "$defines" ltl docs_invocation_bound fail
  expect_trail_on lease-docs_invocation_bound docs_bound
}

spin_fence_canary() {   # without the fence, two sequencers that read one attempt both call the handler
  local defines="$1"
  say "SPIN canary 5 (no invocation fence: an attempt without an outcome is invoked, not claimed)"
  spin_run "canary-5" "$defines" safety "(all assertions)" fail 5
  grep -q "assertion violated  !(late_invocation)" "$work/canary-5/pan.out" ||
    die "canary-5: the trail violates $(grep -E '^pan:1:' "$work/canary-5/pan.out"), expected late_invocation"
  spin_run "canary-5-ltl" "$defines" ltl no_late_invocation fail 5
  expect_trail_on canary-5-ltl late_invocation
}

write_spin_json() {
  local file="$1"
  {
    printf '{\n  "mode": "%s",\n  "spin_version": "%s",\n  "gcc_version": "%s",\n  "compression": "COLLAPSE (exhaustive, no bitstate)",\n  "runs": [\n' \
      "$mode" "$(spin -V | head -1)" "$(gcc -dumpfullversion)"
    local i
    for i in "${!SPIN_ROWS[@]}"; do
      printf '    %s' "${SPIN_ROWS[$i]}"
      [ "$i" -lt $((${#SPIN_ROWS[@]} - 1)) ] && printf ','
      printf '\n'
    done
    printf '  ]\n}\n'
  } > "$file"
}

print_table() {
  printf '\n%-34s %-22s %-9s %12s %13s %6s %9s %8s  %s\n' run claim verdict states transitions depth mem_MB time_s violation
  printf '%s\n' "${TABLE_ROWS[@]}"
  printf '\nCoq: %s theorems/lemmas checked, all closed under the global context.\n' "$COQ_THEOREMS"
}

# ------------------------------------------------------------------------------ main
ensure_tools
say "spin $(spin -V | head -1 | awk '{print $3}'), $(gcc --version | head -1)"
run_coq

CI_BOUND="-DK=2 -DSEQS=1 -DCRASHES=1 -DFORKS=1 -DTRAVEL=1"
HEADLINE_BOUND="-DK=3 -DSEQS=1 -DCRASHES=1 -DFORKS=1 -DTRAVEL=1"
SCALED_BOUND="-DK=3 -DSEQS=1 -DCRASHES=2 -DFORKS=1 -DTRAVEL=1"
# Two sequencers on run 0 and one kill. fence: one handler call throws, restarted processes keep
# their instance id (STABLE_IDS=1: own attempts are taken over at once). fence-newid: a restarted
# process gets a new id and must wait for the lease of its own abandoned attempt (liveness).
FENCE_BOUND="-DK=1 -DSEQS=2 -DCRASHES=1 -DFORKS=0 -DTRAVEL=0 -DTHROWS=1"
FENCE_NEWID_BOUND="-DK=1 -DSEQS=2 -DCRASHES=1 -DFORKS=0 -DTRAVEL=0 -DTHROWS=0 -DSTABLE_IDS=0"
FENCE_NEWID_FULL_BOUND="-DK=1 -DSEQS=2 -DCRASHES=1 -DFORKS=0 -DTRAVEL=0 -DTHROWS=1 -DSTABLE_IDS=0"
LEASE_BOUND="-DK=1 -DSEQS=2 -DCRASHES=0 -DFORKS=0 -DTRAVEL=0 -DTHROWS=0 -DSLOW=1"
LEASE_FULL_BOUND="-DK=1 -DSEQS=2 -DCRASHES=1 -DFORKS=0 -DTRAVEL=0 -DTHROWS=1 -DSLOW=1"
TWO_SEQ_BOUND="-DK=1 -DSEQS=2 -DCRASHES=0 -DFORKS=0 -DTRAVEL=0"

if [ "$mode" = ci ]; then
  SPIN_MEMLIM_MB=${SPIN_MEMLIM_MB:-3000}; SPIN_HASH_LOG2=${SPIN_HASH_LOG2:-22}
  spin_bound ci "$CI_BOUND" yes
  spin_fence fence "$FENCE_BOUND" no
  spin_fence fence-newid "$FENCE_NEWID_BOUND" yes
  spin_lease "$LEASE_BOUND"
  spin_canaries "$CI_BOUND"
  spin_fence_canary "$TWO_SEQ_BOUND"
  write_spin_json "$results/spin-ci.json"
else
  SPIN_MEMLIM_MB=${SPIN_MEMLIM_MB:-7500}; SPIN_HASH_LOG2=${SPIN_HASH_LOG2:-24}
  spin_bound headline "$HEADLINE_BOUND" yes
  SPIN_HASH_LOG2=${SPIN_SCALED_HASH_LOG2:-26}
  spin_bound scaled "$SCALED_BOUND" no
  SPIN_HASH_LOG2=24
  spin_fence fence "$FENCE_BOUND" yes
  spin_fence fence-newid "$FENCE_NEWID_FULL_BOUND" yes
  spin_lease "$LEASE_FULL_BOUND"
  SPIN_HASH_LOG2=22
  spin_canaries "$CI_BOUND"
  spin_fence_canary "$TWO_SEQ_BOUND"
  write_spin_json "$results/spin-full.json"
fi
print_table
say "all checks passed ($mode) in ${SECONDS} s"
