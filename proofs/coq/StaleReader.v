(** * A witness, checked by computation: with two processes on one run, a process that read the
    log before a completion became durable can still call the handler after it did. The sink's
    deduplication keeps the effect applied once; raw invocations reach two. This is why the
    contract's "never invoked again once its completion is durable" is proved for the log the
    invoking process read (Contract.effect_exactly_once_decision) and for fresh readers
    (Contract.fresh_reader_never_reinvokes), not for every interleaving. SPIN finds the same
    interleaving (claim no_late_invocation, two sequencer processes). *)

From Coq Require Import List Arith Bool Lia.
Import ListNotations.
From Remit Require Import Log Recovery Sequencer.

(** One effect node that ends the workflow. *)
Definition one_effect : workflow :=
  mk_workflow [(0, Effect)] 0 (fun _ st => st) (fun _ st _ => st) (fun _ st _ => st)
    (fun _ _ => None) (fun _ _ => false) (fun _ => true) (fun _ _ => true).

Definition result_7 (_ : key) : value := 7.

Definition w_start := start_world one_effect 0 0.
Definition w_intent := exec one_effect result_7 w_start (Step 1).          (* EFFECT_INTENT *)
Definition w_done := exec one_effect result_7 w_intent (Step 2).           (* invoke, EFFECT_DONE *)
Definition the_key := mk_key 0 0 1.   (* run 0, node 0, the intent at seq 1 *)

Theorem stale_reader_invokes_after_done :
  reachable one_effect result_7 w_start w_done /\
  In (EffectDone 0 the_key 7) (w_log w_done) /\
  (* a second process read 2 records (before the completion) and acts now *)
  w_invoked (exec one_effect result_7 w_done (Step 2)) = w_invoked w_done ++ [the_key] /\
  w_log (exec one_effect result_7 w_done (Step 2)) = w_log w_done /\
  w_applied (exec one_effect result_7 w_done (Step 2)) = [the_key].
Proof.
  split; [apply reach_exec, reach_exec, reach_start|].
  vm_compute; repeat split; auto.
Qed.
