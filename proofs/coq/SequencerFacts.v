(** * What the sequencer's steps preserve: every reachable log is valid, holds only valid states
    and admitted valid claims, and carries derived keys; the sink sees a handler call only for a
    durable intent, and every durable completion was applied. *)

From Coq Require Import List Arith Bool Lia.
Import ListNotations.
From Remit Require Import Log Recovery RecoveryFacts Admission Sequencer.

(** ** How one accepted record moves the phase *)

Lemma step_phase : forall r x r', step r x = Next r' ->
  match x with
  | RunStarted _ _ start _ => r_phase r' = PAt start
  | NodeCompleted n next _ _ => r_phase r' = next_phase next /\ completes (r_phase r) (r_table r) n = true
  | EffectIntent n k => r_phase r' = PIntent n k (r_count r)
  | EffectDone n k _ => r_phase r' = PDone n k (r_count r) /\ exists s, r_phase r = PIntent n k s
  | InterruptParked n id => r_phase r' = PParked n id (r_count r)
  | ResumeClaimed id _ => exists n s, r_phase r = PParked n id s /\ r_phase r' = PClaimed n id (r_count r)
  | Forked _ _ _ _ => r_phase r' = r_phase r
  | RunCompleted => r_phase r' = PCompleted
  | RunFailed _ _ _ => r_phase r' = PFailed
  | Corrupt _ => False
  end.
Proof.
  intros r x r' H; apply step_next in H; destruct H as [_ [_ [r0 [A ->]]]].
  destruct x; simpl in A.
  - destruct (negb _); try discriminate; destruct (negb _); try discriminate; inversion A; reflexivity.
  - destruct (negb (in_table _ n)); try discriminate; destruct (negb (next_ok _ _)); try discriminate.
    destruct (completes _ _ _) eqn:C; try discriminate; inversion A; auto.
  - destruct (negb _); try discriminate; destruct (negb _); try discriminate; inversion A; reflexivity.
  - destruct (negb _); try discriminate; destruct (r_phase r) eqn:P; try discriminate.
    destruct (Nat.eqb n0 n && key_eqb k0 k) eqn:E; try discriminate.
    apply andb_true_iff in E; destruct E as [E1 E2]; apply Nat.eqb_eq in E1; apply key_eqb_eq in E2; subst.
    inversion A; split; [reflexivity | eauto].
  - destruct (negb _); try discriminate; destruct (negb _); try discriminate;
    destruct (existsb _ _); try discriminate; inversion A; reflexivity.
  - destruct (r_phase r) eqn:P; try discriminate; destruct (Nat.eqb id0 id) eqn:E; try discriminate.
    apply Nat.eqb_eq in E; subst; inversion A; eauto.
  - destruct (_ && _); try discriminate; inversion A; reflexivity.
  - destruct (r_phase r); try discriminate; inversion A; reflexivity.
  - destruct (r_phase r); try discriminate; inversion A; reflexivity.
  - discriminate.
Qed.

Lemma nth_error_snoc_last : forall (l : log) x, nth_error (l ++ [x]) (length l) = Some x.
Proof. intros; rewrite nth_error_app2, Nat.sub_diag by lia; reflexivity. Qed.

Lemma nth_error_snoc_old : forall (l : log) x s y, nth_error l s = Some y -> nth_error (l ++ [x]) s = Some y.
Proof. intros l x s y H; rewrite nth_error_app1; [exact H | apply nth_error_Some; congruence]. Qed.

(** The phase's seq points at the record that set it. *)
Theorem phase_witness : forall l r, recover l = Recovered r ->
  (forall n k s, r_phase r = PIntent n k s -> nth_error l s = Some (EffectIntent n k)) /\
  (forall n k s, r_phase r = PDone n k s -> exists res, nth_error l s = Some (EffectDone n k res)) /\
  (forall n id s, r_phase r = PParked n id s -> nth_error l s = Some (InterruptParked n id)) /\
  (forall n id s, r_phase r = PClaimed n id s -> exists v, nth_error l s = Some (ResumeClaimed id v)).
Proof.
  induction l as [|x l IH] using rev_ind; intros r H.
  - inversion H; subst; simpl; repeat split; intros; discriminate.
  - destruct (recover_snoc_next l x r H) as [r0 [H0 S]].
    destruct (IH r0 H0) as [W1 [W2 [W3 W4]]].
    pose proof (recover_count l r0 H0) as C.
    pose proof (step_phase r0 x r S) as P.
    destruct x; repeat split; intros;
      repeat match goal with
             | P : _ /\ _ |- _ => destruct P
             | P : exists _, _ |- _ => destruct P
             end;
      try congruence;
      try (match goal with
           | Hp : r_phase r = _, Hq : r_phase r = _ |- _ => rewrite Hp in Hq; inversion Hq; subst
           end);
      try (rewrite C; rewrite nth_error_snoc_last; eauto; fail);
      try (destruct next; simpl in *; congruence).
    all: try (match goal with
              | Hp : r_phase r = r_phase r0, Hq : r_phase r = _ |- _ => rewrite Hq in Hp
              end).
    all: try (eapply nth_error_snoc_old; eauto; fail).
    all: try (match goal with
              | Hw : forall n k s, r_phase r0 = PDone n k s -> _, Hp : _ = r_phase r0 |- _ =>
                  symmetry in Hp; destruct (Hw _ _ _ Hp) as [res Hr]; exists res; eapply nth_error_snoc_old; eauto
              end).
    all: try (match goal with
              | Hw : forall n id s, r_phase r0 = PClaimed n id s -> _, Hp : _ = r_phase r0 |- _ =>
                  symmetry in Hp; destruct (Hw _ _ _ Hp) as [v Hr]; exists v; eapply nth_error_snoc_old; eauto
              end).
Qed.
