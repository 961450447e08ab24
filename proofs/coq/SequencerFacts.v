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
  | EffectAttempt n k a => exists si, r_phase r' = PAttempted n k si a (r_count r)
  | EffectReleased n k a =>
      exists si s, r_phase r = PAttempted n k si a s /\ r_phase r' = PReleased n k si a
  | EffectDoneFenced n k _ =>
      r_phase r' = PDone n k (r_count r) /\ exists si a s, r_phase r = PAttempted n k si a s
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
  - destruct (negb _); try discriminate; destruct (r_phase r) eqn:P; try discriminate;
    match type of A with context [if ?c then _ else _] => destruct c; try discriminate end;
    inversion A; eexists; reflexivity.
  - destruct (negb _); try discriminate; destruct (r_phase r) eqn:P; try discriminate.
    match type of A with context [if ?c then _ else _] => destruct c eqn:E; try discriminate end.
    apply andb_true_iff in E; destruct E as [E E3]; apply andb_true_iff in E; destruct E as [E1 E2].
    apply Nat.eqb_eq in E1; apply key_eqb_eq in E2; apply Nat.eqb_eq in E3; subst.
    inversion A; do 2 eexists; split; reflexivity.
  - destruct (negb _); try discriminate; destruct (r_phase r) eqn:P; try discriminate.
    match type of A with context [if ?c then _ else _] => destruct c eqn:E; try discriminate end.
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
  (forall n k s, p = PDone n k s -> exists res,
     nth_error l s = Some (EffectDone n k res) \/ nth_error l s = Some (EffectDoneFenced n k res)) /\
  (forall n id s, p = PParked n id s -> nth_error l s = Some (InterruptParked n id)) /\
  (forall n id s, p = PClaimed n id s -> exists v, nth_error l s = Some (ResumeClaimed id v)).

Lemma witnessed_snoc : forall l x p, witnessed l p -> witnessed (l ++ [x]) p.
Proof.
  intros l x p [W1 [W2 [W3 W4]]]; repeat split; intros.
  - apply nth_error_snoc_old; eauto.
  - destruct (W2 _ _ _ H) as [res [Hr|Hr]]; exists res; [left|right]; apply nth_error_snoc_old; exact Hr.
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
      rewrite C; eexists; left; apply nth_error_snoc_last.
    + destruct P as [si P]; rewrite P; apply witnessed_plain; discriminate.
    + destruct P as [si [s [_ P]]]; rewrite P; apply witnessed_plain; discriminate.
    + destruct P as [P _]; rewrite P; repeat split; intros; try discriminate.
      match goal with E : PDone _ _ _ = _ |- _ => inversion E; subst end.
      rewrite C; eexists; right; apply nth_error_snoc_last.
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
  | AInvokeEffect n k s na =>
      (r_phase r = PIntent n k s /\ na = 1) \/ exists a, r_phase r = PReleased n k s a /\ na = S a
  | AAwaitAttempt n k si a s => r_phase r = PAttempted n k si a s
  | AFinishEffect n k s => r_phase r = PDone n k s
  | APark n => r_phase r = PAt n /\ kind_of (r_table r) n = Some Interrupt
  | AAwaitResume n id s => r_phase r = PParked n id s
  | AFinishInterrupt n id s => r_phase r = PClaimed n id s
  | AFinishRun => r_phase r = PEnded
  end.
Proof.
  intros r; unfold action_of; destruct (r_phase r) eqn:P; eauto;
  destruct (kind_of (r_table r) n) as [[]|] eqn:K; auto.
Qed.

Lemma step_accepts : forall r x r0,
  (forall e, x <> Corrupt e) -> is_terminal (r_phase r) = false -> r_count r <> 0 ->
  is_run_started x = false -> apply r x = Next r0 -> step r x = Next (advance x r0).
Proof.
  intros r x r0 Hc T Z R A; unfold step.
  destruct x; try (exfalso; eapply Hc; reflexivity);
  simpl in R; try discriminate R;
  rewrite T; apply Nat.eqb_neq in Z; rewrite Z, A; reflexivity.
Qed.

Lemma fresh_id_fresh : forall l, existsb (Nat.eqb (fresh_id l)) l = false.
Proof.
  intros l; unfold fresh_id; destruct (existsb (Nat.eqb (S (list_max l))) l) eqn:E; [|reflexivity].
  apply existsb_exists in E; destruct E as [y [Hy Hq]]; apply Nat.eqb_eq in Hq; subst y.
  assert (Hf : Forall (fun k => k <= list_max l) l) by (apply list_max_le; lia).
  rewrite Forall_forall in Hf; specialize (Hf _ Hy); lia.
Qed.

Lemma running_count : forall r, rec_inv r -> r_phase r <> PEmpty -> r_count r <> 0.
Proof. intros r I P Z; apply (inv_empty r I) in Z; contradiction. Qed.

Lemma kind_of_in_table : forall t n k, kind_of t n = Some k -> in_table t n = true.
Proof. intros t n k H; unfold in_table; rewrite H; reflexivity. Qed.

Lemma finish_node_accepted : forall wf r n st recs,
  rec_inv r -> r_phase r <> PEmpty -> is_terminal (r_phase r) = false ->
  completes (r_phase r) (r_table r) n = true -> in_table (r_table r) n = true ->
  finish_node wf r n st = DWrite recs ->
  exists x r', recs = [x] /\ step r x = Next r'.
Proof.
  intros wf r n st recs I P T Cm Tn F.
  pose proof (running_count r I P) as Z.
  unfold finish_node in F.
  destruct (wf_state_ok wf st); [|discriminate].
  destruct (wf_route wf n st) as [m|].
  - destruct (in_table (r_table r) m) eqn:M; [|discriminate]; injection F as <-.
    do 2 eexists; split; [reflexivity|]; eapply step_accepts;
      [intros e; discriminate | exact T | exact Z | reflexivity |].
    simpl; rewrite Tn, M, Cm; reflexivity.
  - injection F as <-.
    do 2 eexists; split; [reflexivity|]; eapply step_accepts;
      [intros e; discriminate | exact T | exact Z | reflexivity |].
    simpl; rewrite Tn, Cm; reflexivity.
Qed.

Lemma finish_node_shape : forall wf r n st d,
  finish_node wf r n st = d ->
  d = DReject n \/ exists next, d = DWrite [NodeCompleted n next Snapshot st] /\ wf_state_ok wf st = true.
Proof.
  intros wf r n st d <-; unfold finish_node.
  destruct (wf_state_ok wf st) eqn:V; [|left; reflexivity].
  destruct (wf_route wf n st) as [m|]; [destruct (in_table (r_table r) m)|]; eauto.
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
  assert (NoInv : forall n st k, finish_node wf r n st <> DInvoke k recs).
  { intros n st k E; destruct (finish_node_shape _ _ _ _ _ E) as [E'|[? [E' _]]]; discriminate. }
  unfold decide in D; rewrite H in D.
  pose proof (action_phase r) as A.
  destruct (action_of r) as [|n|n|n k intent_seq na|n k si a s|n k done_seq|n|n id parked_seq|n id claim_seq|] eqn:Ea;
    simpl in D;
    try (destruct D as [D|[k9 D]]; discriminate D).
  - (* RunPure: a TerminalFailure, or the node's completion *)
    destruct A as [P K].
    assert (Z : r_count r <> 0) by (apply running_count; auto; rewrite P; discriminate).
    destruct (wf_fails wf n (head_state l)).
    + destruct D as [D|[k D]]; [|discriminate]; injection D as D; subst recs.
      assert (S : exists r', step r (RunFailed (Some n) code_terminal 0) = Next r').
      { eexists; eapply step_accepts;
          [intros e; discriminate | rewrite P; reflexivity | exact Z | reflexivity |].
        simpl; rewrite P; reflexivity. }
      destruct S as [r' S]; eapply Fin; eauto.
    + destruct D as [D|[k D]]; [|exfalso; eapply NoInv; exact D].
      destruct (finish_node_accepted wf r n (wf_pure wf n (head_state l)) recs I) as [x [r' [E S]]];
        try (rewrite P; discriminate); try (rewrite P; reflexivity); try exact D.
      * rewrite P; simpl; rewrite Nat.eqb_refl; apply kind_of_kind_is; exact K.
      * eapply kind_of_in_table; eauto.
      * eapply Fin; eauto.
  - (* BeginEffect *)
    destruct A as [P K]; destruct D as [D|[k D]]; [|discriminate]; injection D as Er; subst recs.
    assert (S : exists r', step r (EffectIntent n (derive_key r n)) = Next r').
    { eexists; eapply step_accepts;
        [intros e; discriminate | rewrite P; reflexivity | apply running_count; auto; rewrite P; discriminate
        | reflexivity |].
      simpl; rewrite (kind_of_in_table _ _ _ K), P; simpl; rewrite Nat.eqb_refl.
        rewrite (kind_of_kind_is _ _ _ K); reflexivity. }
    destruct S as [r' S]; eapply Fin; eauto.
  - (* InvokeEffect: from the intent (the protocol without the fence) *)
    destruct A as [[A _]|[a [A _]]]; rewrite A in D; simpl in D; [|destruct D as [D|[k' D]]; discriminate D].
    destruct D as [D|[k' D]]; [discriminate|]; injection D as Ek Er; subst k' recs.
    pose proof (inv_intent r I n k intent_seq A) as K.
    assert (S : exists r', step r (EffectDone n k (h k)) = Next r').
    { eexists; eapply step_accepts;
        [intros e; discriminate | rewrite A; reflexivity | apply running_count; auto; rewrite A; discriminate
        | reflexivity |].
      simpl; rewrite (kind_of_in_table _ _ _ K), A; simpl; rewrite Nat.eqb_refl, key_eqb_refl; reflexivity. }
    destruct S as [r' S]; eapply Fin; eauto.
  - (* FinishEffect *)
    destruct D as [D|[k' D]]; [|exfalso; eapply NoInv; exact D].
    pose proof (inv_done r I n k done_seq A) as K.
    destruct (finish_node_accepted wf r n (wf_effect wf n (head_state l) (result_at l done_seq)) recs I)
      as [x [r' [E S]]]; try (rewrite A; discriminate); try (rewrite A; reflexivity); try exact D.
    + rewrite A; simpl; apply Nat.eqb_refl.
    + eapply kind_of_in_table; eauto.
    + eapply Fin; eauto.
  - (* Park *)
    destruct A as [P K]; destruct D as [D|[k D]]; [|discriminate]; injection D as Er; subst recs.
    assert (S : exists r', step r (InterruptParked n (fresh_id (r_parked r))) = Next r').
    { eexists; eapply step_accepts;
        [intros e; discriminate | rewrite P; reflexivity | apply running_count; auto; rewrite P; discriminate
        | reflexivity |].
      simpl; rewrite (kind_of_in_table _ _ _ K), P; simpl; rewrite Nat.eqb_refl.
        rewrite (kind_of_kind_is _ _ _ K).
        pose proof (fresh_id_fresh (r_parked r)) as F; unfold fresh_id in *; simpl in F |- *; rewrite F; reflexivity. }
    destruct S as [r' S]; eapply Fin; eauto.
  - (* FinishInterrupt *)
    destruct D as [D|[k' D]]; [|exfalso; eapply NoInv; exact D].
    pose proof (inv_claimed_phase r I n id claim_seq A) as K.
    destruct (finish_node_accepted wf r n (wf_resume wf n (head_state l) (claim_value_at l claim_seq)) recs I)
      as [x [r' [E S]]]; try (rewrite A; discriminate); try (rewrite A; reflexivity); try exact D.
    + rewrite A; simpl; apply Nat.eqb_refl.
    + eapply kind_of_in_table; eauto.
    + eapply Fin; eauto.
  - (* FinishRun *)
    destruct D as [D|[k D]]; [|discriminate]; injection D as Er; subst recs.
    assert (S : exists r', step r RunCompleted = Next r').
    { eexists; eapply step_accepts;
        [intros e; discriminate | rewrite A; reflexivity | apply running_count; auto; rewrite A; discriminate
        | reflexivity |].
      simpl; rewrite A; reflexivity. }
    destruct S as [r' S]; eapply Fin; eauto.
Qed.

(** ** Facts about the records the decision writes *)

(** The kinds of record a decision can write: never a claim, never a fork, never a start, and an
    effect completion only when the handler was called for its key. *)
Lemma decided_record_shape : forall wf h l r x,
  recover l = Recovered r ->
  (decide wf h l = DWrite [x] ->
     state_ok_rec wf x /\ (forall id v, x <> ResumeClaimed id v) /\ (forall n k res, x <> EffectDone n k res) /\
     (forall n k, x = EffectIntent n k -> k = derive_key r n)) /\
  (forall k, decide wf h l = DInvoke k [x] -> exists n, x = EffectDone n k (h k) /\ exists s, r_phase r = PIntent n k s).
Proof.
  intros wf h l r x H; unfold decide; rewrite H.
  pose proof (action_phase r) as A.
  assert (Fn : forall n st d, finish_node wf r n st = d -> d = DWrite [x] ->
            state_ok_rec wf x /\ (forall id v, x <> ResumeClaimed id v) /\
            (forall n k res, x <> EffectDone n k res) /\ (forall n k, x = EffectIntent n k -> k = derive_key r n)).
  { intros n st d F ->; destruct (finish_node_shape _ _ _ _ _ F) as [E|[next [E V]]]; [discriminate|].
    injection E as E; subst x; split; [exact V | split; [intros; discriminate | split; intros; discriminate]]. }
  assert (Fi : forall n st d k, finish_node wf r n st = d -> d <> DInvoke k [x]).
  { intros n st d k F ->; destruct (finish_node_shape _ _ _ _ _ F) as [E|[? [E _]]]; discriminate. }
  assert (Plain : forall y, y = x -> (forall id v, y <> ResumeClaimed id v) -> (forall n k res, y <> EffectDone n k res) ->
            (forall n k, y <> EffectIntent n k) -> state_ok_rec wf y ->
            state_ok_rec wf x /\ (forall id v, x <> ResumeClaimed id v) /\
            (forall n k res, x <> EffectDone n k res) /\ (forall n k, x = EffectIntent n k -> k = derive_key r n)).
  { intros y <- C D E S; split; [exact S | split; [exact C | split; [exact D | intros n k Ex; exfalso; eapply E; exact Ex]]]. }
  destruct (action_of r) as [|n|n|n k s na|n k si a s|n k s|n|n id s|n id s|]; split; intros k0 D || intros D;
    try discriminate D;
    (* InvokeEffect: the decision invokes only from the intent *)
    try (destruct A as [[A _]|[a [A _]]]; rewrite A in D; simpl in D; try discriminate D).
  - destruct (wf_fails wf n (head_state l)).
    + injection D as D; subst x; apply (Plain _ eq_refl); try (intros; discriminate); exact I.
    + exact (Fn _ _ _ eq_refl D).
  - destruct (wf_fails wf n (head_state l)); [discriminate D | exfalso; exact (Fi _ _ _ _ eq_refl D)].
  - injection D as D; subst x; split; [exact I | split; [intros; discriminate | split; [intros; discriminate|]]].
    intros n' k' E; inversion E; subst; reflexivity.
  - injection D as D1 D2; subst; exists n; split; [reflexivity | eauto].
  - exact (Fn _ _ _ eq_refl D).
  - exfalso; exact (Fi _ _ _ _ eq_refl D).
  - injection D as D; subst x; apply (Plain _ eq_refl); try (intros; discriminate); exact I.
  - exact (Fn _ _ _ eq_refl D).
  - exfalso; exact (Fi _ _ _ _ eq_refl D).
  - injection D as D; subst x; apply (Plain _ eq_refl); try (intros; discriminate); exact I.
Qed.

Lemma in_firstn : forall (l : log) k x, In x (firstn k l) -> In x l.
Proof. intros l k x H; rewrite <- (firstn_skipn k l); apply in_or_app; left; exact H. Qed.

Lemma nth_error_firstn_some : forall (l : log) k j x, nth_error (firstn k l) j = Some x -> nth_error l j = Some x /\ j < k.
Proof.
  induction l as [|y l IH]; intros k j x H; destruct k; destruct j; simpl in *; try discriminate.
  - inversion H; subst; split; [reflexivity | lia].
  - destruct (IH k j x H); split; [assumption | lia].
Qed.

Lemma firstn_firstn_le : forall (l : log) j k, j <= k -> firstn j (firstn k l) = firstn j l.
Proof. intros l j k H; rewrite firstn_firstn; f_equal; lia. Qed.

Lemma firstn_app_le : forall (l l' : log) j, j <= length l -> firstn j (l ++ l') = firstn j l.
Proof. intros l l' j H; rewrite firstn_app; replace (j - length l) with 0 by lia; simpl; apply app_nil_r. Qed.

Lemma firstn_length_self : forall (l : log) k, length (firstn k l) = length l -> firstn k l = l.
Proof.
  intros l k H; rewrite firstn_length in H; apply firstn_all2; lia.
Qed.

(** The three log properties hold of every prefix. *)
Lemma states_valid_prefix : forall wf l k, states_valid wf l -> states_valid wf (firstn k l).
Proof.
  intros wf l k H; unfold states_valid in *; rewrite Forall_forall in *; intros x Hx.
  apply H; eapply in_firstn; eauto.
Qed.

Lemma claims_valid_prefix : forall wf l k, claims_valid wf l -> claims_valid wf (firstn k l).
Proof.
  intros wf l k H j id v E; apply nth_error_firstn_some in E; destruct E as [E Hj].
  rewrite firstn_firstn_le by lia; apply H; exact E.
Qed.

Lemma keys_ok_prefix : forall l k, keys_ok l -> keys_ok (firstn k l).
Proof.
  intros l k H j n key E; apply nth_error_firstn_some in E; destruct E as [E Hj].
  rewrite firstn_firstn_le by lia; apply H; exact E.
Qed.

Lemma NoDup_snoc : forall (A : Type) (l : list A) a, NoDup l -> ~ In a l -> NoDup (l ++ [a]).
Proof.
  intros A l a; induction l as [|b l IH]; intros Nd Ha; simpl; [constructor; [intros []|constructor]|].
  inversion Nd as [|? ? Hb Nd']; subst; constructor.
  - intros H; apply in_app_or in H; destruct H as [H|[H|[]]]; [contradiction | subst; apply Ha; left; reflexivity].
  - apply IH; [exact Nd' | intros H; apply Ha; right; exact H].
Qed.

(** ** The invariant of every reachable world *)

Record world_inv (wf : workflow) (w : world) : Prop := {
  wi_valid : valid_log (w_log w);
  wi_states : states_valid wf (w_log w);
  wi_claims : claims_valid wf (w_log w);
  wi_keys : keys_ok (w_log w);
  wi_invoked : forall k, In k (w_invoked w) -> exists n, In (EffectIntent n k) (w_log w);
  wi_done_applied : forall n k res, In (EffectDone n k res) (w_log w) -> In k (w_applied w);
  wi_applied_nodup : NoDup (w_applied w);
  wi_applied_invoked : forall k, In k (w_applied w) -> In k (w_invoked w)
}.

Lemma world_inv_start : forall wf rid st0, wf_ok wf st0 -> world_inv wf (start_world wf rid st0).
Proof.
  intros wf rid st0 [Tb [St V]]; constructor; simpl.
  - eexists; unfold recover; simpl; unfold step; simpl; rewrite Tb, St; simpl; reflexivity.
  - constructor; [exact V | constructor].
  - intros j id v E; destruct j as [|[|j]]; simpl in E; discriminate.
  - intros j n k E; destruct j as [|[|j]]; simpl in E; discriminate.
  - intros k [].
  - intros n k res [E|[]]; discriminate.
  - constructor.
  - intros k [].
Qed.

Lemma sink_call_inv : forall wf w n k,
  world_inv wf w -> In (EffectIntent n k) (w_log w) -> world_inv wf (sink_call k w).
Proof.
  intros wf w n k I Hin; destruct I; constructor; simpl; auto.
  - intros k' H; apply in_app_or in H; destruct H as [H|[H|[]]]; [auto | subst; eauto].
  - intros n' k' res H; specialize (wi_done_applied0 n' k' res H).
    destruct (existsb (key_eqb k) (w_applied w)); [exact wi_done_applied0 | apply in_or_app; left; exact wi_done_applied0].
  - destruct (existsb (key_eqb k) (w_applied w)) eqn:E; [exact wi_applied_nodup0|].
    apply NoDup_snoc; auto; intros Hy.
    assert (existsb (key_eqb k) (w_applied w) = true) by (apply existsb_exists; exists k; split; [exact Hy | apply key_eqb_refl]).
    congruence.
  - intros k' H; apply in_or_app.
    destruct (existsb (key_eqb k) (w_applied w)); [left; auto|].
    apply in_app_or in H; destruct H as [H|[H|[]]]; [left; auto | right; left; exact H].
Qed.

(** Appending one record the decision wrote (on the whole log) keeps the invariant. *)
Lemma append_decided_inv : forall wf h w r x,
  world_inv wf w -> recover (w_log w) = Recovered r ->
  (decide wf h (w_log w) = DWrite [x] \/ exists k, decide wf h (w_log w) = DInvoke k [x] /\ In k (w_applied w)) ->
  world_inv wf (mk_world (w_log w ++ [x]) (w_invoked w) (w_applied w)).
Proof.
  intros wf h w r x I H D.
  destruct (decided_record_shape wf h (w_log w) r x H) as [Sw Si].
  assert (Acc : exists r', recover (w_log w ++ [x]) = Recovered r').
  { destruct D as [D|[k [D _]]];
    destruct (decided_record_accepted wf h (w_log w) r [x] H) as [y [r' [E [_ R]]]]; eauto;
    injection E as E; subst; eauto. }
  destruct I; constructor; simpl.
  - exact Acc.
  - unfold states_valid in *; apply Forall_app; split; auto; constructor; [|constructor].
    destruct D as [D|[k [D _]]]; [apply Sw; exact D|].
    destruct (Si k D) as [n [-> _]]; exact I.
  - intros j id v E.
    destruct (Nat.lt_ge_cases j (length (w_log w))) as [Lt|Ge].
    + rewrite nth_error_app1 in E by exact Lt; rewrite firstn_app_le by lia; apply wi_claims0; exact E.
    + rewrite nth_error_app2 in E by exact Ge.
      destruct (j - length (w_log w)) as [|i]; simpl in E; [|destruct i; discriminate].
      injection E as E; subst x.
      destruct D as [D|[k [D _]]]; [destruct Sw as [_ [Nc _]]; [exact D | exfalso; eapply Nc; reflexivity]|].
      destruct (Si k D) as [n [Ex _]]; discriminate.
  - intros j n k E.
    destruct (Nat.lt_ge_cases j (length (w_log w))) as [Lt|Ge].
    + rewrite nth_error_app1 in E by exact Lt; rewrite firstn_app_le by lia; apply wi_keys0; exact E.
    + rewrite nth_error_app2 in E by exact Ge.
      assert (Ej : j = length (w_log w)) by (destruct (j - length (w_log w)) eqn:Z; simpl in E;
                                              [lia | destruct n0; discriminate]).
      subst j; rewrite Nat.sub_diag in E; simpl in E; injection E as E; subst x.
      rewrite firstn_app_le, firstn_all by lia; exists r; split; [exact H|].
      destruct D as [D|[k' [D _]]]; [destruct Sw as [_ [_ [_ Kd]]]; [exact D | apply Kd; reflexivity]|].
      destruct (Si k' D) as [n' [Ex _]]; discriminate.
  - intros k Hk; destruct (wi_invoked0 k Hk) as [n Hn]; exists n; apply in_or_app; left; exact Hn.
  - intros n k res Hin; apply in_app_or in Hin; destruct Hin as [Hin|[Hin|[]]]; [eauto|subst x].
    destruct D as [D|[k' [D Ha]]]; [destruct Sw as [_ [_ [Nd _]]]; [exact D | exfalso; eapply Nd; reflexivity]|].
    destruct (Si k' D) as [n' [Ex _]]; injection Ex as E1 E2 E3; subst; exact Ha.
  - exact wi_applied_nodup0.
  - exact wi_applied_invoked0.
Qed.

Lemma view_valid : forall l k, valid_log l -> exists r, recover (firstn k l) = Recovered r.
Proof.
  intros l k [r H]; rewrite <- (firstn_skipn k l) in H; eapply recover_prefix_ok; eauto.
Qed.

(** A handler is called only for a key whose intent is durable in the log the caller read. *)
Lemma invoke_has_intent : forall wf h l k key recs,
  valid_log l -> decide wf h (firstn k l) = DInvoke key recs -> exists n, In (EffectIntent n key) l.
Proof.
  intros wf h l k key recs V D.
  destruct (view_valid l k V) as [rv Hv].
  assert (Hr : exists x, recs = [x]).
  { destruct (decided_record_accepted wf h _ rv recs Hv (or_intror (ex_intro _ key D))) as [x [_ [E _]]]; eauto. }
  destruct Hr as [x ->].
  destruct (decided_record_shape wf h _ rv x Hv) as [_ Si].
  destruct (Si key D) as [n [_ [s P]]].
  destruct (phase_witness _ rv Hv) as [W1 _].
  exists n; eapply in_firstn; eapply nth_error_In; apply W1; exact P.
Qed.

Lemma sink_call_applied : forall k w, In k (w_applied (sink_call k w)).
Proof.
  intros k w; simpl; destruct (existsb (key_eqb k) (w_applied w)) eqn:E.
  - apply existsb_exists in E; destruct E as [y [Hy Hq]]; apply key_eqb_eq in Hq; subst; exact Hy.
  - apply in_or_app; right; left; reflexivity.
Qed.

Theorem exec_inv : forall wf h w ev, world_inv wf w -> world_inv wf (exec wf h w ev).
Proof.
  intros wf h w ev I; destruct ev as [k|k| |k id v]; simpl.
  - (* Step *)
    destruct (decide wf h (firstn k (w_log w))) as [recs|key recs|n id|n|] eqn:D; try exact I.
    + unfold cond_append; destruct (Nat.eqb (length (w_log w)) k) eqn:L; [|exact I].
      apply Nat.eqb_eq in L; subst k; rewrite firstn_all in D.
      destruct (wi_valid wf w I) as [r H].
      destruct (decided_record_accepted wf h _ r recs H (or_introl D)) as [x [_ [-> _]]].
      eapply append_decided_inv; eauto.
    + destruct (invoke_has_intent wf h (w_log w) k key recs (wi_valid wf w I) D) as [n Hn].
      pose proof (sink_call_inv wf w n key I Hn) as I1.
      unfold cond_append; simpl; destruct (Nat.eqb (length (w_log w)) k) eqn:L; [|exact I1].
      apply Nat.eqb_eq in L; subst k; rewrite firstn_all in D.
      destruct (wi_valid wf w I) as [r H].
      destruct (decided_record_accepted wf h _ r recs H (or_intror (ex_intro _ key D))) as [x [_ [-> _]]].
      apply (append_decided_inv wf h (sink_call key w) r x I1); [exact H|].
      right; exists key; split; [exact D | apply sink_call_applied].
  - (* CrashAfterInvoke *)
    destruct (decide wf h (firstn k (w_log w))) as [recs|key recs|n id|n|] eqn:D; try exact I.
    destruct (invoke_has_intent wf h (w_log w) k key recs (wi_valid wf w I) D) as [n Hn].
    eapply sink_call_inv; eauto.
  - exact I.
  - (* Resume *)
    destruct (admit (firstn k (w_log w)) (RResume id)) as [s|] eqn:A; [|exact I].
    destruct (recover (firstn k (w_log w))) as [r|] eqn:H; [|exact I].
    destruct (r_phase r) as [| | | | | |n id' ps| | | |] eqn:P; try exact I.
    destruct (wf_value_ok wf n v) eqn:Vok; [|exact I].
    unfold cond_append; destruct (Nat.eqb (length (w_log w)) s) eqn:L; [|exact I].
    apply Nat.eqb_eq in L.
    pose proof A as A'; apply resume_accepted_iff in A'; destruct A' as [r' [n' [ps' [H' [P' Es]]]]].
    rewrite H in H'; injection H' as H'; subst r'.
    rewrite P in P'; injection P' as E1 E2 E3; subst n' id' ps'.
    assert (Ev : firstn k (w_log w) = w_log w) by (apply firstn_length_self; lia).
    rewrite Ev in A, H.
    destruct (accepted_claim_recovers (w_log w) id s v A) as [r2 [H2 _]].
    destruct I; constructor; simpl.
    + exists r2; exact H2.
    + unfold states_valid in *; apply Forall_app; split; auto; repeat constructor.
    + intros j id2 v2 E.
      destruct (Nat.lt_ge_cases j (length (w_log w))) as [Lt|Ge].
      * rewrite nth_error_app1 in E by exact Lt; rewrite firstn_app_le by lia; apply wi_claims0; exact E.
      * rewrite nth_error_app2 in E by exact Ge.
        assert (Ej : j = length (w_log w)) by (destruct (j - length (w_log w)) eqn:Z; simpl in E;
                                                [lia | destruct n0; discriminate]).
        subst j; rewrite Nat.sub_diag in E; simpl in E; injection E as E1 E2; subst id2 v2.
        rewrite firstn_app_le, firstn_all by lia; exists r, n, ps; auto.
    + intros j n2 key E.
      destruct (Nat.lt_ge_cases j (length (w_log w))) as [Lt|Ge].
      * rewrite nth_error_app1 in E by exact Lt; rewrite firstn_app_le by lia; apply wi_keys0; exact E.
      * rewrite nth_error_app2 in E by exact Ge.
        destruct (j - length (w_log w)) as [|i]; simpl in E; [discriminate | destruct i; discriminate].
    + intros key Hk; destruct (wi_invoked0 key Hk) as [n2 Hn]; exists n2; apply in_or_app; left; exact Hn.
    + intros n2 key res Hin; apply in_app_or in Hin; destruct Hin as [Hin|[Hin|[]]]; [eauto | discriminate].
    + exact wi_applied_nodup0.
    + exact wi_applied_invoked0.
Qed.

Theorem reachable_inv : forall wf h rid st0 w,
  wf_ok wf st0 -> reachable wf h (start_world wf rid st0) w -> world_inv wf w.
Proof.
  intros wf h rid st0 w Ok R; induction R.
  - apply world_inv_start; exact Ok.
  - apply exec_inv; exact IHR.
Qed.

(** ** The protocol without the fence writes no format-2 effect records *)

Definition unfenced (x : record) : bool :=
  match x with EffectAttempt _ _ _ | EffectReleased _ _ _ | EffectDoneFenced _ _ _ => false | _ => true end.

Lemma decide_unfenced : forall wf h l,
  match decide wf h l with DWrite recs | DInvoke _ recs => forallb unfenced recs = true | _ => True end.
Proof.
  intros wf h l; unfold decide; destruct (recover l) as [r|]; [|exact I].
  destruct (action_of r); try exact I; try reflexivity;
  try (destruct (wf_fails _ _ _); [reflexivity|]);
  try (destruct (r_phase r); reflexivity || exact I);
  unfold finish_node; destruct (wf_state_ok _ _); try exact I;
  destruct (wf_route _ _ _); try reflexivity; destruct (in_table _ _); reflexivity || exact I.
Qed.

Lemma exec_unfenced : forall wf h w ev,
  forallb unfenced (w_log w) = true -> forallb unfenced (w_log (exec wf h w ev)) = true.
Proof.
  intros wf h w ev U.
  assert (App : forall k recs w', w_log w' = w_log w -> forallb unfenced recs = true ->
            forallb unfenced (w_log (cond_append k recs w')) = true).
  { intros k recs w' E R; unfold cond_append; destruct (Nat.eqb _ _); simpl; rewrite E; [|exact U].
    rewrite forallb_app, U, R; reflexivity. }
  destruct ev as [k|k| |k id v]; simpl; try exact U.
  - pose proof (decide_unfenced wf h (firstn k (w_log w))) as D.
    destruct (decide wf h (firstn k (w_log w))); try exact U; apply App; auto.
  - destruct (decide wf h (firstn k (w_log w))); exact U.
  - destruct (admit _ _); [|exact U]; destruct (recover _); [|exact U].
    destruct (r_phase r); try exact U; destruct (wf_value_ok _ _ _); [|exact U]; apply App; auto.
Qed.

Theorem reachable_unfenced : forall wf h w0 w,
  forallb unfenced (w_log w0) = true -> reachable wf h w0 w -> forallb unfenced (w_log w) = true.
Proof.
  intros wf h w0 w U R; induction R; [exact U | apply exec_unfenced; exact IHR].
Qed.

(** A log without format-2 effect records never recovers to an attempt or a release. *)
Lemma unfenced_phase : forall l r, forallb unfenced l = true -> recover l = Recovered r ->
  forall n k si a s, r_phase r <> PAttempted n k si a s /\ r_phase r <> PReleased n k si a.
Proof.
  induction l as [|x l IH] using rev_ind; intros r U H n k si a s.
  - inversion H; subst; split; discriminate.
  - rewrite forallb_app in U; apply andb_true_iff in U; destruct U as [U Ux].
    destruct (recover_snoc_next l x r H) as [r0 [H0 S]].
    pose proof (step_phase r0 x r S) as P.
    destruct x; simpl in Ux; try discriminate Ux;
    repeat match type of P with
           | r_phase r = _ /\ _ => destruct P as [P _]
           | _ /\ r_phase r = _ => destruct P as [_ P]
           | exists _, _ => destruct P as [? P]
           | False => destruct P
           end;
    try (rewrite P; try destruct next; split; discriminate);
    rewrite P; apply (IH r0 U H0).
Qed.
