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
Definition witnessed (l : log) (p : phase) : Prop :=
  (forall n k s, p = PIntent n k s -> nth_error l s = Some (EffectIntent n k)) /\
  (forall n k s, p = PDone n k s -> exists res, nth_error l s = Some (EffectDone n k res)) /\
  (forall n id s, p = PParked n id s -> nth_error l s = Some (InterruptParked n id)) /\
  (forall n id s, p = PClaimed n id s -> exists v, nth_error l s = Some (ResumeClaimed id v)).

Lemma witnessed_snoc : forall l x p, witnessed l p -> witnessed (l ++ [x]) p.
Proof.
  intros l x p [W1 [W2 [W3 W4]]]; repeat split; intros.
  - apply nth_error_snoc_old; eauto.
  - destruct (W2 _ _ _ H) as [res Hr]; exists res; apply nth_error_snoc_old; exact Hr.
  - apply nth_error_snoc_old; eauto.
  - destruct (W4 _ _ _ H) as [v Hr]; exists v; apply nth_error_snoc_old; exact Hr.
Qed.

Lemma witnessed_plain : forall l p,
  (forall n k s, p <> PIntent n k s) -> (forall n k s, p <> PDone n k s) ->
  (forall n id s, p <> PParked n id s) -> (forall n id s, p <> PClaimed n id s) -> witnessed l p.
Proof.
  intros l p A B C D; repeat split; intros n a b E; subst;
    [exfalso; eapply A | exfalso; eapply B | exfalso; eapply C | exfalso; eapply D]; reflexivity.
Qed.

Theorem phase_witness : forall l r, recover l = Recovered r -> witnessed l (r_phase r).
Proof.
  induction l as [|x l IH] using rev_ind; intros r H.
  - inversion H; subst; apply witnessed_plain; discriminate.
  - destruct (recover_snoc_next l x r H) as [r0 [H0 S]].
    pose proof (IH r0 H0) as W.
    pose proof (recover_count l r0 H0) as C.
    pose proof (step_phase r0 x r S) as P.
    destruct x.
    + rewrite P; apply witnessed_plain; discriminate.
    + destruct P as [P _]; rewrite P; destruct next; apply witnessed_plain; discriminate.
    + rewrite P; repeat split; intros; try discriminate.
      match goal with E : PIntent _ _ _ = _ |- _ => inversion E; subst end.
      rewrite C; apply nth_error_snoc_last.
    + destruct P as [P _]; rewrite P; repeat split; intros; try discriminate.
      match goal with E : PDone _ _ _ = _ |- _ => inversion E; subst end.
      rewrite C; eexists; apply nth_error_snoc_last.
    + rewrite P; repeat split; intros; try discriminate.
      match goal with E : PParked _ _ _ = _ |- _ => inversion E; subst end.
      rewrite C; apply nth_error_snoc_last.
    + destruct P as [n [s [_ P]]]; rewrite P; repeat split; intros; try discriminate.
      match goal with E : PClaimed _ _ _ = _ |- _ => inversion E; subst end.
      rewrite C; eexists; apply nth_error_snoc_last.
    + rewrite P; apply witnessed_snoc; exact W.
    + rewrite P; apply witnessed_plain; discriminate.
    + rewrite P; apply witnessed_plain; discriminate.
    + exact (False_ind _ P).
Qed.

(** ** The decision, record by record *)

Lemma action_phase : forall r,
  match action_of r with
  | ANone => True
  | ARunPure n => r_phase r = PAt n /\ kind_of (r_table r) n = Some Pure
  | ABeginEffect n => r_phase r = PAt n /\ kind_of (r_table r) n = Some Effect
  | AInvokeEffect n k s => r_phase r = PIntent n k s
  | AFinishEffect n k s => r_phase r = PDone n k s
  | APark n => r_phase r = PAt n /\ kind_of (r_table r) n = Some Interrupt
  | AAwaitResume n id s => r_phase r = PParked n id s
  | AFinishInterrupt n id s => r_phase r = PClaimed n id s
  | AFinishRun => r_phase r = PEnded
  end.
Proof.
  intros r; unfold action_of; destruct (r_phase r) eqn:P; auto;
  destruct (kind_of (r_table r) n) as [[]|] eqn:K; auto.
Qed.

Lemma step_accepts : forall r x r0,
  (forall e, x <> Corrupt e) -> is_terminal (r_phase r) = false -> r_count r <> 0 ->
  is_run_started x = false -> apply r x = Next r0 -> step r x = Next (advance x r0).
Proof.
  intros r x r0 Hc T Z R A; unfold step.
  destruct x; try (exfalso; eapply Hc; reflexivity);
  rewrite T; apply Nat.eqb_neq in Z; rewrite Z; simpl in R |- *; try discriminate R; rewrite A; reflexivity.
Qed.

Lemma fresh_id_fresh : forall l, existsb (Nat.eqb (fresh_id l)) l = false.
Proof.
  intros l; unfold fresh_id; destruct (existsb _ l) eqn:E; [|reflexivity].
  apply existsb_exists in E; destruct E as [y [Hy Hq]]; apply Nat.eqb_eq in Hq; subst y.
  assert (Hf : Forall (fun k => k <= list_max l) l) by (apply list_max_le; lia).
  rewrite Forall_forall in Hf; specialize (Hf _ Hy); lia.
Qed.

Lemma running_count : forall r, rec_inv r -> r_phase r <> PEmpty -> r_count r <> 0.
Proof. intros r I P Z; apply (inv_empty r I) in Z; contradiction. Qed.

Lemma kind_of_in_table : forall t n k, kind_of t n = Some k -> in_table t n = true.
Proof. intros t n k H; unfold in_table; rewrite H; reflexivity. Qed.

Lemma finish_node_accepted : forall wf r n st,
  rec_inv r -> r_phase r <> PEmpty -> is_terminal (r_phase r) = false ->
  completes (r_phase r) (r_table r) n = true -> in_table (r_table r) n = true ->
  exists x r', finish_node wf r n st = [x] /\ step r x = Next r'.
Proof.
  intros wf r n st I P T Cm Tn.
  pose proof (running_count r I P) as Z.
  unfold finish_node.
  destruct (wf_state_ok wf st).
  - destruct (wf_route wf n st) as [m|].
    + destruct (in_table (r_table r) m) eqn:M.
      * do 2 eexists; split; [reflexivity|]; eapply step_accepts; eauto; try discriminate.
        simpl; rewrite Tn, M, Cm; reflexivity.
      * do 2 eexists; split; [reflexivity|]; eapply step_accepts; eauto; try discriminate.
        simpl; destruct (r_phase r); try (exfalso; apply P; reflexivity); reflexivity.
    + do 2 eexists; split; [reflexivity|]; eapply step_accepts; eauto; try discriminate.
      simpl; rewrite Tn, Cm; reflexivity.
  - do 2 eexists; split; [reflexivity|]; eapply step_accepts; eauto; try discriminate.
    simpl; destruct (r_phase r); try (exfalso; apply P; reflexivity); reflexivity.
Qed.

(** Whatever the sequencer decides to write is one record that the core accepts: the sequencer
    never produces a log that recovery rejects. *)
Theorem decided_record_accepted : forall wf h l r recs,
  recover l = Recovered r ->
  (decide wf h l = DWrite recs \/ exists k, decide wf h l = DInvoke k recs) ->
  exists x r', recs = [x] /\ step r x = Next r' /\ recover (l ++ [x]) = Recovered r'.
Proof.
  intros wf h l r recs H D.
  pose proof (recover_inv l r H) as I.
  assert (Fin : forall x r', recs = [x] -> step r x = Next r' ->
            exists x r', recs = [x] /\ step r x = Next r' /\ recover (l ++ [x]) = Recovered r').
  { intros x r' -> S; exists x, r'; rewrite recover_snoc, H, S; auto. }
  unfold decide in D; rewrite H in D.
  pose proof (action_phase r) as A.
  destruct (action_of r) eqn:Ea; simpl in D;
    try (destruct D as [D|[k D]]; discriminate D).
  - (* RunPure *)
    destruct A as [P K]; destruct D as [D|[k D]]; [|discriminate]; inversion D; subst.
    destruct (finish_node_accepted wf r n (wf_pure wf n (head_state l)) I) as [x [r' [E S]]];
      try (rewrite P; discriminate); try (rewrite P; reflexivity).
    + rewrite P; simpl; rewrite Nat.eqb_refl; apply kind_of_kind_is; exact K.
    + eapply kind_of_in_table; eauto.
    + eapply Fin; eauto.
  - (* BeginEffect *)
    destruct A as [P K]; destruct D as [D|[k D]]; [|discriminate]; inversion D; subst.
    assert (S : exists r', step r (EffectIntent n (derive_key r n)) = Next r').
    { eexists; eapply step_accepts; try discriminate; try (rewrite P; reflexivity).
      - apply running_count; auto; rewrite P; discriminate.
      - simpl; rewrite (kind_of_in_table _ _ _ K), P; simpl; rewrite Nat.eqb_refl.
        rewrite (kind_of_kind_is _ _ _ K); reflexivity. }
    destruct S as [r' S]; eapply Fin; eauto.
  - (* InvokeEffect *)
    destruct D as [D|[k' D]]; [discriminate|]; inversion D; subst.
    pose proof (inv_intent r I n k intent_seq A) as K.
    assert (S : exists r', step r (EffectDone n k (h k)) = Next r').
    { eexists; eapply step_accepts; try discriminate; try (rewrite A; reflexivity).
      - apply running_count; auto; rewrite A; discriminate.
      - simpl; rewrite (kind_of_in_table _ _ _ K), A; simpl; rewrite Nat.eqb_refl, key_eqb_refl; reflexivity. }
    destruct S as [r' S]; eapply Fin; eauto.
  - (* FinishEffect *)
    destruct D as [D|[k' D]]; [|discriminate]; inversion D; subst.
    pose proof (inv_done r I n k done_seq A) as K.
    destruct (finish_node_accepted wf r n (wf_effect wf n (head_state l) (result_at l done_seq)) I)
      as [x [r' [E S]]]; try (rewrite A; discriminate); try (rewrite A; reflexivity).
    + rewrite A; simpl; apply Nat.eqb_refl.
    + eapply kind_of_in_table; eauto.
    + eapply Fin; eauto.
  - (* Park *)
    destruct A as [P K]; destruct D as [D|[k D]]; [|discriminate]; inversion D; subst.
    assert (S : exists r', step r (InterruptParked n (fresh_id (r_parked r))) = Next r').
    { eexists; eapply step_accepts; try discriminate; try (rewrite P; reflexivity).
      - apply running_count; auto; rewrite P; discriminate.
      - simpl; rewrite (kind_of_in_table _ _ _ K), P; simpl; rewrite Nat.eqb_refl.
        rewrite (kind_of_kind_is _ _ _ K), fresh_id_fresh; reflexivity. }
    destruct S as [r' S]; eapply Fin; eauto.
  - (* FinishInterrupt *)
    destruct D as [D|[k' D]]; [|discriminate]; inversion D; subst.
    pose proof (inv_claimed_phase r I n id claim_seq A) as K.
    destruct (finish_node_accepted wf r n (wf_resume wf n (head_state l) (claim_value_at l claim_seq)) I)
      as [x [r' [E S]]]; try (rewrite A; discriminate); try (rewrite A; reflexivity).
    + rewrite A; simpl; apply Nat.eqb_refl.
    + eapply kind_of_in_table; eauto.
    + eapply Fin; eauto.
  - (* FinishRun *)
    destruct D as [D|[k D]]; [|discriminate]; inversion D; subst.
    assert (S : exists r', step r RunCompleted = Next r').
    { eexists; eapply step_accepts; try discriminate; try (rewrite A; reflexivity).
      - apply running_count; auto; rewrite A; discriminate.
      - simpl; rewrite A; reflexivity. }
    destruct S as [r' S]; eapply Fin; eauto.
Qed.
