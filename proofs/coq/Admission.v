(** * Admission (docs/core-api.md, "Admission"): RESUME, FORK_AT, CONTINUE_FROM.
    Offsets are not modelled; requests are well-typed, so BAD_REQUEST does not arise. *)

From Coq Require Import List Arith Bool Lia.
Import ListNotations.
From Remit Require Import Log Recovery RecoveryFacts.

Inductive request := RResume (id : iid) | RForkAt (n : nat) | RContinueFrom (n : nat).

Inductive refusal :=
  | AlreadyConsumed | NotParked | UnknownInterrupt | NotACheckpoint | BeyondHead | ImplicitFork
  | LogInvalid (e : error_code) | NoRun.

Inductive admission := Accept (seq : nat) | Refuse (reason : refusal) (seq : nat).

Fixpoint claim_seq (c : list (iid * nat)) (id : iid) : option nat :=
  match c with
  | [] => None
  | (id', s) :: c' => if Nat.eqb id' id then Some s else claim_seq c' id
  end.

Definition admit (l : log) (q : request) : admission :=
  match recover l with
  | RecoveryError e s => Refuse (LogInvalid e) s
  | Recovered r =>
      match r_phase r with
      | PEmpty => Refuse NoRun 0
      | p =>
          let head := r_count r - 1 in
          match q with
          | RResume id =>
              match claim_seq (r_claimed r) id with
              | Some s => Refuse AlreadyConsumed s
              | None =>
                  match p with
                  | PParked _ id' _ => if Nat.eqb id' id then Accept (r_count r) else Refuse UnknownInterrupt head
                  | _ => Refuse NotParked head
                  end
              end
          | RForkAt n =>
              if head <? n then Refuse BeyondHead head
              else match nth_error l n with
                   | Some x => if is_checkpoint x then Accept (S n) else Refuse NotACheckpoint n
                   | None => Refuse BeyondHead head
                   end
          | RContinueFrom n =>
              if Nat.eqb n head then Accept (r_count r)
              else if head <? n then Refuse BeyondHead head
              else Refuse ImplicitFork head
          end
      end
  end.

(** ** Helpers *)

Lemma claim_seq_none : forall c id, claim_seq c id = None <-> ~ In id (map fst c).
Proof.
  induction c as [|[id' s] c IH]; intros id; simpl; [tauto|].
  destruct (Nat.eqb id' id) eqn:E.
  - apply Nat.eqb_eq in E; subst; split; [discriminate | intros H; exfalso; apply H; left; reflexivity].
  - rewrite IH; apply Nat.eqb_neq in E; split; [intros H [H'|H']; [congruence | tauto] | tauto].
Qed.

Lemma claim_seq_some_in : forall c id s, claim_seq c id = Some s -> In (id, s) c.
Proof.
  induction c as [|[id' s'] c IH]; intros id s H; simpl in H; [discriminate|].
  destruct (Nat.eqb id' id) eqn:E.
  - apply Nat.eqb_eq in E; inversion H; subst; left; reflexivity.
  - right; apply IH; exact H.
Qed.

Lemma claim_seq_is_claimed : forall r id, is_claimed r id = true <-> exists s, claim_seq (r_claimed r) id = Some s.
Proof.
  intros r id; unfold is_claimed; split.
  - intros H; destruct (claim_seq (r_claimed r) id) eqn:E; [eauto|].
    apply claim_seq_none in E; apply existsb_exists in H; destruct H as [y [Hy Hq]].
    apply Nat.eqb_eq in Hq; subst; contradiction.
  - intros [s H]; apply claim_seq_some_in in H; apply existsb_exists.
    exists id; split; [apply in_map_iff; exists (id, s); auto | apply Nat.eqb_refl].
Qed.

(** The claimed set only grows along a log (RUN_STARTED, which resets it, is only at seq 0). *)
Lemma step_claimed_mono : forall r x r' id s,
  step r x = Next r' -> r_count r <> 0 -> In (id, s) (r_claimed r) -> In (id, s) (r_claimed r').
Proof.
  intros r x r' id s H Hc Hin; pose proof (step_claimed r x r' H) as C.
  destruct x; rewrite C; auto.
  - apply step_next in H; destruct H as [_ [Z _]].
    exfalso; apply Hc; apply Z; reflexivity.
  - right; exact Hin.
Qed.

Lemma fold_claimed_mono : forall l r r' id s,
  fold_log r l = Recovered r' -> r_count r <> 0 -> In (id, s) (r_claimed r) -> In (id, s) (r_claimed r').
Proof.
  induction l as [|x l IH]; intros r r' id s H Hc Hin; simpl in H.
  - inversion H; subst; exact Hin.
  - destruct (step r x) eqn:E; [|discriminate].
    eapply IH; [exact H | | eapply step_claimed_mono; eauto].
    apply step_count in E; lia.
Qed.

Lemma recovered_claimed_count : forall l r id s,
  recover l = Recovered r -> In (id, s) (r_claimed r) -> r_count r <> 0.
Proof.
  intros l r id s H Hin Hc; pose proof (recover_count l r H) as C.
  rewrite Hc in C; destruct l; [|discriminate].
  inversion H; subst; contradiction.
Qed.

Lemma claimed_mono : forall l l' r r' id s,
  recover l = Recovered r -> recover (l ++ l') = Recovered r' ->
  In (id, s) (r_claimed r) -> In (id, s) (r_claimed r').
Proof.
  intros l l' r r' id s H H' Hin; rewrite recover_app, H in H'.
  eapply fold_claimed_mono; eauto; eapply recovered_claimed_count; eauto.
Qed.

Lemma claim_seq_in_nodup : forall c id s, NoDup (map fst c) -> In (id, s) c -> claim_seq c id = Some s.
Proof.
  induction c as [|[id' s'] c IH]; intros id s Nd Hin; simpl in *; [contradiction|].
  inversion Nd as [|? ? Hn Nd']; subst.
  destruct (Nat.eqb id' id) eqn:E.
  - apply Nat.eqb_eq in E; subst; destruct Hin as [Hq | Hq]; [inversion Hq; reflexivity|].
    exfalso; apply Hn; apply in_map_iff; exists (id, s); auto.
  - destruct Hin as [Hq | Hq]; [inversion Hq; subst; rewrite Nat.eqb_refl in E; discriminate|].
    apply IH; auto.
Qed.

Lemma recover_last_checkpoint : forall l x r,
  recover (l ++ [x]) = Recovered r -> r_prev_checkpoint r = is_checkpoint x.
Proof.
  intros l x r H; destruct (recover_snoc_next l x r H) as [r0 [_ S]].
  apply step_next in S; destruct S as [_ [_ [r1 [_ ->]]]]; reflexivity.
Qed.

Lemma checkpoint_not_terminal : forall l x r,
  recover (l ++ [x]) = Recovered r -> is_checkpoint x = true -> is_terminal (r_phase r) = false.
Proof.
  intros l x r H Hx; destruct (recover_snoc_next l x r H) as [r0 [_ S]].
  apply step_next in S; destruct S as [_ [_ [r1 [A ->]]]].
  destruct x; try discriminate; simpl in A.
  - destruct (negb _); try discriminate; destruct (negb _); try discriminate; inversion A; reflexivity.
  - destruct (negb _); try discriminate; destruct (negb _); try discriminate;
    destruct (negb _); try discriminate; inversion A; destruct next; reflexivity.
Qed.

(** ** Consume-once *)

(** RESUME is accepted exactly when the run is parked on that id, at the next seq. *)
Theorem resume_accepted_iff : forall l id s,
  admit l (RResume id) = Accept s <->
  exists r n ps, recover l = Recovered r /\ r_phase r = PParked n id ps /\ s = length l.
Proof.
  intros l id s; unfold admit; split.
  - destruct (recover l) eqn:H; [|discriminate].
    pose proof (recover_count l r H) as C.
    destruct (r_phase r) eqn:P; try discriminate;
    destruct (claim_seq (r_claimed r) id); try discriminate.
    destruct (Nat.eqb id0 id) eqn:E; try discriminate; apply Nat.eqb_eq in E; subst.
    intros A; inversion A; subst; exists r, n, seq; auto.
  - intros [r [n [ps [H [P ->]]]]]; rewrite H, P.
    pose proof (recover_inv l r H) as I; destruct (inv_parked r I n id ps P) as [_ [_ Hnc]].
    apply claim_seq_none in Hnc; rewrite Hnc, Nat.eqb_refl, (recover_count l r H); reflexivity.
Qed.

(** A claimed id is refused ALREADY_CONSUMED, naming the claim's seq. *)
Theorem resume_refused_when_claimed : forall l r id s,
  recover l = Recovered r -> In (id, s) (r_claimed r) -> admit l (RResume id) = Refuse AlreadyConsumed s.
Proof.
  intros l r id s H Hin; unfold admit; rewrite H.
  pose proof (recover_inv l r H) as I.
  rewrite (claim_seq_in_nodup _ _ _ (inv_claimed_nodup r I) Hin).
  destruct (r_phase r) eqn:P; try reflexivity.
  apply (inv_empty r I) in P; exfalso; eapply recovered_claimed_count; eauto.
Qed.

(** An accepted claim, once appended, is a valid log parked no more: the next phase is CLAIMED. *)
Theorem accepted_claim_recovers : forall l id s v,
  admit l (RResume id) = Accept s ->
  exists r', recover (l ++ [ResumeClaimed id v]) = Recovered r' /\
             (exists n, r_phase r' = PClaimed n id s) /\ In (id, s) (r_claimed r').
Proof.
  intros l id s v A; apply resume_accepted_iff in A; destruct A as [r [n [ps [H [P ->]]]]].
  pose proof (recover_inv l r H) as I; pose proof (recover_count l r H) as C.
  rewrite recover_snoc, H; unfold step.
  assert (Hne : r_count r <> 0) by (intros Z; apply (inv_empty r I) in Z; congruence).
  rewrite P; simpl; apply Nat.eqb_neq in Hne; rewrite Hne; simpl; rewrite P, Nat.eqb_refl.
  eexists; split; [reflexivity|]; simpl; rewrite C; split; [eauto | left; reflexivity].
Qed.

(** After an accepted claim is appended, every further RESUME of the id is refused, whatever
    else the log gains (as long as it stays a valid log). *)
Theorem consume_once : forall l id s v rest r',
  admit l (RResume id) = Accept s ->
  recover (l ++ ResumeClaimed id v :: rest) = Recovered r' ->
  admit (l ++ ResumeClaimed id v :: rest) (RResume id) = Refuse AlreadyConsumed s.
Proof.
  intros l id s v rest r' A H.
  destruct (accepted_claim_recovers l id s v A) as [r1 [H1 [_ Hin]]].
  apply resume_refused_when_claimed with (r := r'); [exact H|].
  replace (l ++ ResumeClaimed id v :: rest) with ((l ++ [ResumeClaimed id v]) ++ rest) in H
    by (rewrite <- app_assoc; reflexivity).
  eapply claimed_mono; eauto.
Qed.

Corollary second_resume_refused : forall l id s v,
  admit l (RResume id) = Accept s ->
  admit (l ++ [ResumeClaimed id v]) (RResume id) = Refuse AlreadyConsumed s.
Proof.
  intros l id s v A; destruct (accepted_claim_recovers l id s v A) as [r1 [H1 _]].
  apply (consume_once l id s v [] r1 A H1).
Qed.

(** ** Fork and fork-intent *)

Theorem fork_at_accepted : forall l n s,
  admit l (RForkAt n) = Accept s ->
  s = S n /\ n < length l /\ exists x, nth_error l n = Some x /\ is_checkpoint x = true.
Proof.
  intros l n s; unfold admit.
  destruct (recover l) eqn:H; [|discriminate].
  pose proof (recover_count l r H) as C.
  destruct (r_phase r); try discriminate;
  (destruct (r_count r - 1 <? n) eqn:B; [discriminate|]);
  apply Nat.ltb_ge in B;
  (destruct (nth_error l n) eqn:N; [|discriminate]);
  (destruct (is_checkpoint r0) eqn:K; [|discriminate]);
  intros A; inversion A; subst;
  (split; [reflexivity | split; [apply nth_error_Some; congruence | eauto]]).
Qed.

Lemma firstn_snoc_nth : forall (l : log) n x, nth_error l n = Some x -> firstn (S n) l = firstn n l ++ [x].
Proof.
  induction l as [|y l IH]; intros n x H; destruct n; simpl in *; try discriminate.
  - inversion H; subst; destruct l; reflexivity.
  - f_equal; apply IH; exact H.
Qed.

(** The forked run's log (prefix up to the checkpoint, then FORKED) is a valid log in the
    prefix's phase, now under the new run id, with the fork in its lineage. *)
Theorem fork_log_recovers : forall l r n s src rid intent,
  recover l = Recovered r -> admit l (RForkAt n) = Accept s ->
  exists rp rf,
    recover (firstn (S n) l) = Recovered rp /\
    recover (firstn (S n) l ++ [Forked src n rid intent]) = Recovered rf /\
    r_phase rf = r_phase rp /\ r_run rf = rid /\ r_count rf = S s /\
    r_lineage rf = r_lineage rp ++ [mk_link src n rid s intent].
Proof.
  intros l r n s src rid intent H A.
  destruct (fork_at_accepted l n s A) as [-> [Hn [x [Nx Kx]]]].
  rewrite <- (firstn_skipn (S n) l) in H.
  destruct (recover_prefix_ok _ _ _ H) as [rp Hp].
  pose proof (recover_count _ _ Hp) as Cp.
  rewrite firstn_length_le in Cp by lia.
  rewrite (firstn_snoc_nth l n x Nx) in Hp.
  pose proof (recover_last_checkpoint _ _ _ Hp) as Pc.
  pose proof (checkpoint_not_terminal _ _ _ Hp Kx) as Nt.
  rewrite (firstn_snoc_nth l n x Nx).
  exists rp; rewrite (recover_snoc (firstn n l ++ [x]) (Forked src n rid intent)), Hp; unfold step.
  rewrite Nt, Cp; simpl; rewrite Pc, Kx; simpl.
  rewrite Cp; replace (S n - 1) with n by lia; rewrite Nat.eqb_refl; simpl.
  eexists; split; [reflexivity|]; split; [reflexivity|]; simpl; rewrite Cp; auto.
Qed.

(** Fork-intent: CONTINUE_FROM is accepted only at the head; an older checkpoint is refused
    IMPLICIT_FORK (continuing from it needs an explicit fork). *)
Theorem continue_from_accepted_iff : forall l n s,
  admit l (RContinueFrom n) = Accept s <->
  exists r, recover l = Recovered r /\ r_phase r <> PEmpty /\ n = length l - 1 /\ s = length l.
Proof.
  intros l n s; unfold admit; split.
  - destruct (recover l) eqn:H; [|discriminate].
    pose proof (recover_count l r H) as C.
    intros A.
    assert (P : r_phase r <> PEmpty) by (intro P; rewrite P in A; discriminate).
    assert (A' : (if Nat.eqb n (r_count r - 1) then Accept (r_count r)
                  else if r_count r - 1 <? n then Refuse BeyondHead (r_count r - 1)
                  else Refuse ImplicitFork (r_count r - 1)) = Accept s).
    { destruct (r_phase r); try (exfalso; apply P; reflexivity); exact A. }
    destruct (Nat.eqb n (r_count r - 1)) eqn:E; [|destruct (_ <? n); discriminate].
    apply Nat.eqb_eq in E; inversion A'; subst; exists r; rewrite <- C; auto.
  - intros [r [H [P [-> ->]]]]; rewrite H; rewrite <- (recover_count l r H).
    destruct (r_phase r); try (exfalso; apply P; reflexivity); rewrite Nat.eqb_refl; reflexivity.
Qed.

Theorem implicit_fork_refused : forall l r n,
  recover l = Recovered r -> r_phase r <> PEmpty -> n < length l - 1 ->
  admit l (RContinueFrom n) = Refuse ImplicitFork (length l - 1).
Proof.
  intros l r n H P Hn; unfold admit; rewrite H, <- (recover_count l r H).
  rewrite <- (recover_count l r H) in Hn.
  assert (E1 : Nat.eqb n (r_count r - 1) = false) by (apply Nat.eqb_neq; lia).
  assert (E2 : (r_count r - 1 <? n) = false) by (apply Nat.ltb_ge; lia).
  destruct (r_phase r); try (exfalso; apply P; reflexivity); rewrite E1, E2; reflexivity.
Qed.

(** Admission is total, and refuses every request on a log that does not recover. *)
Theorem admit_total : forall l q, exists a, admit l q = a.
Proof. intros; eexists; reflexivity. Qed.

Theorem admit_invalid_log : forall l q e s,
  recover l = RecoveryError e s -> admit l q = Refuse (LogInvalid e) s.
Proof. intros l q e s H; unfold admit; rewrite H; reflexivity. Qed.

(** FORK_AT past the head is refused BEYOND_HEAD; at a record that is not a checkpoint,
    NOT_A_CHECKPOINT naming that record. *)
Theorem fork_beyond_head_refused : forall l r n,
  recover l = Recovered r -> r_phase r <> PEmpty -> length l <= n ->
  admit l (RForkAt n) = Refuse BeyondHead (length l - 1).
Proof.
  intros l r n H P Hn; unfold admit; rewrite H, <- (recover_count l r H).
  rewrite <- (recover_count l r H) in Hn.
  pose proof (recover_inv l r H) as I.
  assert (Z : r_count r <> 0) by (intros Z; apply (inv_empty r I) in Z; contradiction).
  assert (E : (r_count r - 1 <? n) = true) by (apply Nat.ltb_lt; lia).
  destruct (r_phase r); try (exfalso; apply P; reflexivity); rewrite E; reflexivity.
Qed.

Theorem fork_at_non_checkpoint_refused : forall l r n x,
  recover l = Recovered r -> nth_error l n = Some x -> is_checkpoint x = false ->
  admit l (RForkAt n) = Refuse NotACheckpoint n.
Proof.
  intros l r n x H Nx Kx; unfold admit; rewrite H.
  assert (Lt : n < length l) by (apply nth_error_Some; congruence).
  rewrite <- (recover_count l r H) in Lt.
  assert (E : (r_count r - 1 <? n) = false) by (apply Nat.ltb_ge; lia).
  pose proof (recover_inv l r H) as I.
  assert (P : r_phase r <> PEmpty) by (intros P; apply (inv_empty r I) in P; lia).
  destruct (r_phase r); try (exfalso; apply P; reflexivity); rewrite E, Nx, Kx; reflexivity.
Qed.

(** RESUME on a run that is not parked (and not claimed) is refused NOT_PARKED; on a run
    parked on another id, UNKNOWN_INTERRUPT. Neither is an acceptance. *)
Theorem resume_not_parked_refused : forall l r id,
  recover l = Recovered r -> r_phase r <> PEmpty -> (forall n id' s, r_phase r <> PParked n id' s) ->
  ~ In id (map fst (r_claimed r)) -> admit l (RResume id) = Refuse NotParked (length l - 1).
Proof.
  intros l r id H P Np Nc; unfold admit; rewrite H, <- (recover_count l r H).
  apply claim_seq_none in Nc; rewrite Nc.
  destruct (r_phase r) eqn:E; try (exfalso; apply P; reflexivity); try reflexivity.
  exfalso; eapply Np; reflexivity.
Qed.

Theorem resume_other_id_refused : forall l r n id' s id,
  recover l = Recovered r -> r_phase r = PParked n id' s -> id <> id' ->
  ~ In id (map fst (r_claimed r)) -> admit l (RResume id) = Refuse UnknownInterrupt (length l - 1).
Proof.
  intros l r n id' s id H P Ne Nc; unfold admit; rewrite H, <- (recover_count l r H), P.
  apply claim_seq_none in Nc; rewrite Nc.
  replace (Nat.eqb id' id) with false by (symmetry; apply Nat.eqb_neq; congruence); reflexivity.
Qed.

(** ** Request seqs beyond the log: every seq past its length is answered alike, so a bridge may
    send [S (length l)] for any larger seq (proofs/extract, equivalence/oracle.ts). *)

Lemma admit_seq_beyond : forall l n, length l < n ->
  admit l (RForkAt n) = admit l (RForkAt (S (length l))) /\
  admit l (RContinueFrom n) = admit l (RContinueFrom (S (length l))).
Proof.
  intros l n Hn; unfold admit.
  destruct (recover l) as [r|] eqn:H; [|split; reflexivity].
  pose proof (recover_count l r H) as C.
  destruct (r_phase r); try (split; reflexivity);
  (split;
   [ replace (r_count r - 1 <? n) with true by (symmetry; apply Nat.ltb_lt; lia);
     replace (r_count r - 1 <? S (length l)) with true by (symmetry; apply Nat.ltb_lt; lia); reflexivity
   | replace (Nat.eqb n (r_count r - 1)) with false by (symmetry; apply Nat.eqb_neq; lia);
     replace (Nat.eqb (S (length l)) (r_count r - 1)) with false by (symmetry; apply Nat.eqb_neq; lia);
     replace (r_count r - 1 <? n) with true by (symmetry; apply Nat.ltb_lt; lia);
     replace (r_count r - 1 <? S (length l)) with true by (symmetry; apply Nat.ltb_lt; lia); reflexivity ]).
Qed.

(** ** A claim is read off the record after its park

    The shell names every interrupt it parks [node@s], [s] the park's seq, and the core refuses a
    park of such a reserved id at any other seq (docs/core-api.md, "Transitions"); the core's
    summary does not list reserved ids. A resume of a reserved id below the head that the summary
    cannot judge is judged from record [p + 1] alone (docs/core-api.md, "Admission from a
    summary"; [RunSession.judgedByRecordAfterPark]). The reserved-id rule is not modelled here
    (ids are numbers): it enters as the hypothesis that [id] is parked at [p] only, if at all.
    Given it, the whole log's answer is the one that record gives. When record [p] is [id]'s own
    park the hypothesis holds of every log that recovers, and is discharged at the end of this
    file ([claim_read_after_own_park]). *)

(** The phase PARKED is left by the park record itself, the last one read. *)
Lemma parked_phase_last : forall l r n id s,
  recover l = Recovered r -> r_phase r = PParked n id s ->
  r_prev_checkpoint r = false /\ exists l0, l = l0 ++ [InterruptParked n id] /\ s = length l0.
Proof.
  induction l as [|x l IH] using rev_ind; intros r n id s H P.
  - inversion H; subst; discriminate.
  - destruct (recover_snoc_next l x r H) as [r0 [H0 S]].
    pose proof (recover_count l r0 H0) as C.
    apply step_next in S; destruct S as [_ [_ [r1 [A ->]]]].
    destruct x; simpl in A; simpl in P;
    repeat match type of A with
           | context [if ?c then _ else _] => let E := fresh "E" in destruct c eqn:E; try discriminate
           | context [match r_phase r0 with _ => _ end] => let Q := fresh "Q" in destruct (r_phase r0) eqn:Q; try discriminate
           end;
    inversion A; subst; simpl in P; try discriminate;
    try (match type of P with next_phase ?nx = _ => destruct nx; discriminate end).
    + (* the park *)
      inversion P; subst; split; [reflexivity|]; exists l; split; [reflexivity | exact C].
    + (* FORKED keeps the phase, and needs a checkpoint before it: the park is none *)
      destruct (IH r0 n id s H0 P) as [Pc _]; rewrite Pc in E; discriminate.
Qed.

(** Every claim in the recovered set is the record at its seq. *)
Lemma claimed_at : forall l r id s,
  recover l = Recovered r -> In (id, s) (r_claimed r) ->
  s < length l /\ exists v, nth_error l s = Some (ResumeClaimed id v).
Proof.
  induction l as [|x l IH] using rev_ind; intros r id s H Hin.
  - inversion H; subst; contradiction.
  - destruct (recover_snoc_next l x r H) as [r0 [H0 S]].
    pose proof (recover_count l r0 H0) as C.
    rewrite (step_claimed r0 x r S) in Hin; rewrite app_length; simpl.
    assert (Old : In (id, s) (r_claimed r0) -> s < length l + 1 /\ exists v, nth_error (l ++ [x]) s = Some (ResumeClaimed id v)).
    { intros Hi; destruct (IH r0 id s H0 Hi) as [Hs [v Hv]]; split; [lia|].
      exists v; rewrite nth_error_app1; auto. }
    destruct x; try (apply Old; exact Hin); try contradiction.
    destruct Hin as [Hq | Hi]; [|apply Old; exact Hi].
    inversion Hq; subst; split; [rewrite C; lia|].
    exists v; rewrite C, nth_error_app2, Nat.sub_diag by lia; reflexivity.
Qed.

(** Every claim record of a log that recovers is in the recovered set, with its seq. *)
Lemma claim_in_claimed : forall l r id v s,
  recover l = Recovered r -> nth_error l s = Some (ResumeClaimed id v) -> In (id, s) (r_claimed r).
Proof.
  induction l as [|x l IH] using rev_ind; intros r id v s H N.
  - destruct s; discriminate.
  - destruct (recover_snoc_next l x r H) as [r0 [H0 S]].
    pose proof (recover_count l r0 H0) as C.
    pose proof (step_claimed r0 x r S) as Cl.
    destruct (Nat.lt_ge_cases s (length l)) as [Lt | Ge].
    + rewrite nth_error_app1 in N by exact Lt.
      pose proof (IH r0 id v s H0 N) as Hin; rewrite Cl.
      destruct x; try exact Hin; try (right; exact Hin).
      (* RUN_STARTED is record 0: nothing is before it *)
      exfalso; apply step_next in S; destruct S as [_ [Z _]].
      assert (r_count r0 = 0) as Z0 by (apply Z; reflexivity); rewrite C in Z0; lia.
    + rewrite nth_error_app2 in N by exact Ge.
      destruct (s - length l) eqn:D; [|destruct n; discriminate].
      simpl in N; inversion N; subst; rewrite Cl; left; f_equal; lia.
Qed.

(** A claim's record follows its park's, with the same id. *)
Lemma claim_follows_park : forall l r id v s,
  recover l = Recovered r -> nth_error l s = Some (ResumeClaimed id v) ->
  exists n p, s = S p /\ nth_error l p = Some (InterruptParked n id).
Proof.
  intros l r id v s H N.
  destruct (nth_error_split l s N) as [l1 [l2 [-> Len]]].
  replace (l1 ++ ResumeClaimed id v :: l2) with ((l1 ++ [ResumeClaimed id v]) ++ l2) in H
    by (rewrite <- app_assoc; reflexivity).
  destruct (recover_prefix_ok _ _ _ H) as [r1 H1].
  destruct (recover_snoc_next l1 _ r1 H1) as [r0 [H0 S]].
  apply step_next in S; destruct S as [_ [_ [r2 [A _]]]]; simpl in A.
  destruct (r_phase r0) eqn:P; try discriminate.
  destruct (Nat.eqb id0 id) eqn:E; try discriminate; apply Nat.eqb_eq in E; subst id0.
  destruct (parked_phase_last l1 r0 n id seq H0 P) as [_ [l0 [-> _]]].
  exists n, (length l0); split; [rewrite <- Len, app_length; simpl; lia|].
  rewrite <- app_assoc, nth_error_app2, Nat.sub_diag by lia; reflexivity.
Qed.

(** The whole log's claim of [id], when [id] is parked at [p] only: read off record [p + 1]. *)
Theorem claim_read_after_park : forall l r id p,
  recover l = Recovered r ->
  (forall k n, nth_error l k = Some (InterruptParked n id) -> k = p) ->
  claim_seq (r_claimed r) id =
    match nth_error l (S p) with
    | Some (ResumeClaimed id' _) => if Nat.eqb id' id then Some (S p) else None
    | _ => None
    end.
Proof.
  intros l r id p H Only.
  destruct (claim_seq (r_claimed r) id) as [s|] eqn:Cs.
  - apply claim_seq_some_in in Cs.
    destruct (claimed_at l r id s H Cs) as [_ [v Hv]].
    destruct (claim_follows_park l r id v s H Hv) as [n [p' [-> Hp]]].
    rewrite (Only p' n Hp) in Hv |- *; rewrite Hv, Nat.eqb_refl; reflexivity.
  - apply claim_seq_none in Cs.
    destruct (nth_error l (S p)) as [x|] eqn:N; [|reflexivity].
    destruct x; try reflexivity.
    destruct (Nat.eqb id0 id) eqn:E; [|reflexivity].
    apply Nat.eqb_eq in E; subst id0.
    exfalso; apply Cs; apply in_map_iff; exists (id, S p); split; [reflexivity|].
    eapply claim_in_claimed; eauto.
Qed.

(** A claim of [id] at [p + 1]: the second resume is refused ALREADY_CONSUMED there. *)
Corollary resume_refused_by_claim_after_park : forall l r id p v,
  recover l = Recovered r -> nth_error l (S p) = Some (ResumeClaimed id v) ->
  admit l (RResume id) = Refuse AlreadyConsumed (S p).
Proof.
  intros l r id p v H N; apply resume_refused_when_claimed with (r := r); [exact H|].
  eapply claim_in_claimed; eauto.
Qed.

(** No claim of [id] at [p + 1], and [id] not the parked one: NOT_PARKED, or UNKNOWN_INTERRUPT
    when the run is parked, at the head. *)
Corollary resume_refused_without_claim_after_park : forall l r id p,
  recover l = Recovered r ->
  (forall k n, nth_error l k = Some (InterruptParked n id) -> k = p) ->
  (forall v, nth_error l (S p) <> Some (ResumeClaimed id v)) ->
  r_phase r <> PEmpty -> (forall n ps, r_phase r <> PParked n id ps) ->
  admit l (RResume id) =
    match r_phase r with
    | PParked _ _ _ => Refuse UnknownInterrupt (length l - 1)
    | _ => Refuse NotParked (length l - 1)
    end.
Proof.
  intros l r id p H Only Nc Ne Np.
  assert (Cs : claim_seq (r_claimed r) id = None).
  { rewrite (claim_read_after_park l r id p H Only).
    destruct (nth_error l (S p)) as [x|] eqn:N; [|reflexivity].
    destruct x; try reflexivity.
    destruct (Nat.eqb id0 id) eqn:E; [|reflexivity].
    apply Nat.eqb_eq in E; subst id0; exfalso; exact (Nc v eq_refl). }
  unfold admit; rewrite H, <- (recover_count l r H), Cs.
  destruct (r_phase r) eqn:P; try (exfalso; apply Ne; reflexivity); try reflexivity.
  replace (Nat.eqb id0 id) with false; [reflexivity|].
  symmetry; apply Nat.eqb_neq; intros ->; exact (Np n seq eq_refl).
Qed.

(** ** The park's own id: the hypothesis discharged

    In a log that recovers an id is parked at one index at most ([park_index_unique]: the fold
    refuses a second park of an id, DUPLICATE_INTERRUPT). So when record [p] is [id]'s own park,
    "[id] is parked at [p] only" holds of the log itself, and a second resume of that interrupt is
    judged from record [p + 1] alone, with no hypothesis. Only a made-up id, one the log never
    parked at [p], still needs the core's reserved-id rule ([node@s] parked at [s] only) as the
    hypothesis of [claim_read_after_park]: the model's ids are numbers and carry no seq. *)

(** The whole log's claim of [id], when record [p] is [id]'s park: read off record [p + 1]. *)
Corollary claim_read_after_own_park : forall l r n id p,
  recover l = Recovered r -> nth_error l p = Some (InterruptParked n id) ->
  claim_seq (r_claimed r) id =
    match nth_error l (S p) with
    | Some (ResumeClaimed id' _) => if Nat.eqb id' id then Some (S p) else None
    | _ => None
    end.
Proof.
  intros l r n id p H Np; apply claim_read_after_park; [exact H|].
  intros k n' Nk; exact (park_index_unique l r k p n' n id H Nk Np).
Qed.

(** Record [p] is [id]'s park and record [p + 1] is no claim of [id], and [id] is not the parked
    one: the second resume is refused NOT_PARKED, or UNKNOWN_INTERRUPT when the run is parked,
    at the head. *)
Corollary resume_refused_without_claim_after_own_park : forall l r n id p,
  recover l = Recovered r -> nth_error l p = Some (InterruptParked n id) ->
  (forall v, nth_error l (S p) <> Some (ResumeClaimed id v)) ->
  r_phase r <> PEmpty -> (forall n ps, r_phase r <> PParked n id ps) ->
  admit l (RResume id) =
    match r_phase r with
    | PParked _ _ _ => Refuse UnknownInterrupt (length l - 1)
    | _ => Refuse NotParked (length l - 1)
    end.
Proof.
  intros l r n id p H Np Nc Ne Npk; apply (resume_refused_without_claim_after_park l r id p H);
    [| exact Nc | exact Ne | exact Npk].
  intros k n' Nk; exact (park_index_unique l r k p n' n id H Nk Np).
Qed.
