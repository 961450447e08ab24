(** Extraction of the proved model's recovery, next action and admission to OCaml, from the
    same definitions the proofs use (proofs/coq). No extraction directive maps a Coq type to an
    OCaml one: naturals stay Peano numbers, so every seq, attempt and interned name is exact
    (no overflow argument needed). build.sh runs this file; it fails if any extracted definition
    depends on an axiom (the [Print Assumptions] lines below). *)

From Remit Require Import Log Recovery Admission.
Require Extraction.
Extraction Language OCaml.

Print Assumptions recover.
Print Assumptions action_of.
Print Assumptions status_of.
Print Assumptions admit.

(* Keep the constant a top-level value (computed once when the module loads), not inlined into
   table_ok where it would be rebuilt from its decimal digits at every call. *)
Extraction NoInline max_node_count.

Extraction "remit_model.ml" recover action_of status_of admit.
