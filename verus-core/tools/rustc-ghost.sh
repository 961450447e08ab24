#!/bin/sh
# RUSTC_WRAPPER that compiles with Verus's ghost code KEPT, using a stock rustc.
#
# Why: in a normal build the `verus!` macro erases every spec fn, proof fn, requires/ensures
# and invariant, so rustc never even type-checks them. The Verus driver instead passes
# `--cfg verus_keep_ghost` (and `verus_keep_ghost_body` for the crate being verified) plus a few
# unstable crate attributes. This wrapper passes the same cfgs and attributes so that stock
# rustc (with RUSTC_BOOTSTRAP=1) type-checks the specifications. It is NOT verification: no
# SMT solver runs, and Verus's own mode checks (spec/proof/exec) are not applied.
rustc="$1"; shift
crate=""
prev=""
for arg in "$@"; do
  if [ "$prev" = "--crate-name" ]; then crate="$arg"; fi
  prev="$arg"
done
extra="--cfg verus_keep_ghost -Zcrate-attr=feature(stmt_expr_attributes) -Zcrate-attr=feature(proc_macro_hygiene) -Zcrate-attr=allow(internal_features) -Zcrate-attr=allow(unused_features)"
case "$crate" in
  remit_verus_core) extra="$extra --cfg verus_keep_ghost_body" ;;
esac
case "$crate" in
  # verus_builtin registers the `verus`/`verifier` tools itself.
  verus_builtin) ;;
  *) extra="$extra -Zcrate-attr=feature(register_tool) -Zcrate-attr=register_tool(verus) -Zcrate-attr=register_tool(verifier) -Zcrate-attr=register_tool(verusfmt) -Zcrate-attr=feature(rustc_attrs) -Zcrate-attr=feature(negative_impls) -Zcrate-attr=feature(unboxed_closures) -Zcrate-attr=feature(fn_traits) -Zcrate-attr=feature(tuple_trait) -Zcrate-attr=feature(never_type) -Zcrate-attr=feature(try_trait_v2)" ;;
esac
# shellcheck disable=SC2086 # word splitting of $extra is intended
exec "$rustc" "$@" $extra
