(** * Facts about recovery: an invariant of every recovered state, liveness of the decision,
    consume-once at the level of the log, integrity errors, determinism. *)

From Coq Require Import List Arith Bool Lia.
Import ListNotations.
From Remit Require Import Log Recovery.

(** ** Unfolding one accepted step *)

Lemma step_next : forall r x r', step r x = Next r' ->
  is_terminal (r_phase r) = false /\ (r_count r = 0 <-> is_run_started x = true) /\
  exists r0, apply r x = Next r0 /\ r' = advance x r0.
Proof.
  intros r x r' H; unfold step in H.
  destruct x; try discriminate H;
  destruct (is_terminal (r_phase r)) eqn:T; try discriminate H;
  destruct (Bool.eqb (r_count r =? 0) (is_run_started _)) eqn:B; try discriminate H;
  destruct (apply r _) eqn:A; simpl in H; try discriminate H; injection H as <-;
  apply Bool.eqb_prop in B; rewrite <- Nat.eqb_eq, B;
  (split; [reflexivity | split; [tauto | eauto]]).
Qed.

Lemma apply_count : forall r x r0, apply r x = Next r0 -> r_count r0 = r_count r.
Proof.
  intros r x r0 H; destruct x; simpl in H;
  repeat match type of H with
         | context [if ?c then _ else _] => destruct c; try discriminate
         | context [match r_phase r with _ => _ end] => destruct (r_phase r); try discriminate
         end; inversion H; reflexivity.
Qed.

Lemma step_not_run_started : forall r x r', step r x = Next r' -> is_run_started x = false -> r_count r <> 0.
Proof. intros r x r' H Hx; apply step_next in H; destruct H as [_ [H _]]; rewrite Hx in H; intuition discriminate. Qed.

(** ** The invariant of recovered states *)

Record rec_inv (r : recovered) : Prop := {
  inv_empty : r_phase r = PEmpty <-> r_count r = 0;
  inv_at : forall n, r_phase r = PAt n -> in_table (r_table r) n = true;
  inv_intent : forall n k s, r_phase r = PIntent n k s -> kind_of (r_table r) n = Some Effect;
  inv_done : forall n k s, r_phase r = PDone n k s -> kind_of (r_table r) n = Some Effect;
  inv_attempted : forall n k si a s, r_phase r = PAttempted n k si a s -> kind_of (r_table r) n = Some Effect;
  inv_released : forall n k si a, r_phase r = PReleased n k si a -> kind_of (r_table r) n = Some Effect;
  inv_parked : forall n id s, r_phase r = PParked n id s ->
      kind_of (r_table r) n = Some Interrupt /\ In id (r_parked r) /\ ~ In id (map fst (r_claimed r));
  inv_claimed_phase : forall n id s, r_phase r = PClaimed n id s -> kind_of (r_table r) n = Some Interrupt;
  inv_claimed_parked : forall id, In id (map fst (r_claimed r)) -> In id (r_parked r);
  inv_claimed_nodup : NoDup (map fst (r_claimed r))
}.

Lemma rec_inv_initial : rec_inv initial.
Proof.
  constructor; simpl; try (intros; discriminate); try tauto.
  constructor.
Qed.

Lemma existsb_eqb_false : forall id l, existsb (Nat.eqb id) l = false -> ~ In id l.
Proof.
  intros id l H Hin; assert (existsb (Nat.eqb id) l = true) by
    (apply existsb_exists; exists id; split; [exact Hin | apply Nat.eqb_refl]); congruence.
Qed.

Lemma rec_inv_step : forall r x r', rec_inv r -> step r x = Next r' -> rec_inv r'.
Proof.
  intros r x r' I H.
  pose proof (step_not_run_started r x r' H) as Hnrs.
  apply step_next in H; destruct H as [T [Z [r0 [A ->]]]].
  assert (Hne : is_run_started x = false -> r_phase r <> PEmpty).
  { intros Hx Hp; apply (inv_empty r I) in Hp; exact (Hnrs Hx Hp). }
  destruct x; simpl in A.
  - (* RunStarted *)
    destruct (table_ok table) eqn:Tb; simpl in A; try discriminate.
    destruct (in_table table start) eqn:St; simpl in A; try discriminate.
    inversion A; subst; constructor; simpl; try (intros; discriminate).
    + split; intros; discriminate.
    + intros n Hn; inversion Hn; subst; exact St.
    + tauto.
    + constructor.
  - (* NodeCompleted *)
    destruct (in_table (r_table r) n) eqn:Hn; simpl in A; try discriminate.
    destruct (next_ok (r_table r) next) eqn:Hx; simpl in A; try discriminate.
    destruct (completes (r_phase r) (r_table r) n) eqn:Hc; simpl in A; try discriminate.
    inversion A; subst; constructor; simpl.
    + split; [destruct next; discriminate | discriminate].
    + intros m Hm; destruct next; simpl in Hm; inversion Hm; subst; exact Hx.
    + destruct next; discriminate.
    + destruct next; discriminate.
    + destruct next; discriminate.
    + destruct next; discriminate.
    + destruct next; discriminate.
    + destruct next; discriminate.
    + apply (inv_claimed_parked r I).
    + apply (inv_claimed_nodup r I).
  - (* EffectIntent *)
    destruct (in_table (r_table r) n) eqn:Hn; simpl in A; try discriminate.
    destruct (at_kind (r_phase r) (r_table r) n Effect) eqn:Ha; simpl in A; try discriminate.
    inversion A; subst; constructor; simpl; try (intros; discriminate).
    + split; intros; discriminate.
    + intros n' k' s' Hp; inversion Hp; subst.
      unfold at_kind in Ha; destruct (r_phase r); try discriminate.
      apply andb_true_iff in Ha; destruct Ha as [_ Ha]; apply kind_is_kind_of in Ha; exact Ha.
    + apply (inv_claimed_parked r I).
    + apply (inv_claimed_nodup r I).
  - (* EffectDone *)
    destruct (in_table (r_table r) n) eqn:Hn; simpl in A; try discriminate.
    destruct (r_phase r) eqn:P; try discriminate.
    destruct (Nat.eqb n0 n && key_eqb k0 k) eqn:Hm; try discriminate.
    apply andb_true_iff in Hm; destruct Hm as [Hm _]; apply Nat.eqb_eq in Hm; subst n0.
    inversion A; subst; constructor; simpl; try (intros; discriminate).
    + split; intros; discriminate.
    + intros n' k' s' Hp; inversion Hp; subst; eapply (inv_intent r I); exact P.
    + apply (inv_claimed_parked r I).
    + apply (inv_claimed_nodup r I).
  - (* EffectAttempt: from the intent, an attempt or a release of the same node *)
    destruct (in_table (r_table r) n) eqn:Hn; simpl in A; try discriminate.
    destruct (r_phase r) eqn:P; try discriminate;
    match type of A with context [if ?c then _ else _] => destruct c eqn:Hm; try discriminate end;
    apply andb_true_iff in Hm; destruct Hm as [Hm _]; apply andb_true_iff in Hm;
    destruct Hm as [Hm _]; apply Nat.eqb_eq in Hm; subst n0;
    inversion A; subst; constructor; simpl; try (intros; discriminate);
    try (split; intros; discriminate);
    try (intros n' k' si' a' s' Hp; inversion Hp; subst);
    try (eapply (inv_intent r I); exact P);
    try (eapply (inv_attempted r I); exact P);
    try (eapply (inv_released r I); exact P);
    try apply (inv_claimed_parked r I); apply (inv_claimed_nodup r I).
  - (* EffectReleased *)
    destruct (in_table (r_table r) n) eqn:Hn; simpl in A; try discriminate.
    destruct (r_phase r) eqn:P; try discriminate.
    match type of A with context [if ?c then _ else _] => destruct c eqn:Hm; try discriminate end.
    apply andb_true_iff in Hm; destruct Hm as [Hm _]; apply andb_true_iff in Hm;
    destruct Hm as [Hm _]; apply Nat.eqb_eq in Hm; subst n0.
    inversion A; subst; constructor; simpl; try (intros; discriminate).
    + split; intros; discriminate.
    + intros n' k' si' a' Hp; inversion Hp; subst; eapply (inv_attempted r I); exact P.
    + apply (inv_claimed_parked r I).
    + apply (inv_claimed_nodup r I).
  - (* EffectDoneFenced *)
    destruct (in_table (r_table r) n) eqn:Hn; simpl in A; try discriminate.
    destruct (r_phase r) eqn:P; try discriminate.
    match type of A with context [if ?c then _ else _] => destruct c eqn:Hm; try discriminate end.
    apply andb_true_iff in Hm; destruct Hm as [Hm _]; apply Nat.eqb_eq in Hm; subst n0.
    inversion A; subst; constructor; simpl; try (intros; discriminate).
    + split; intros; discriminate.
    + intros n' k' s' Hp; inversion Hp; subst; eapply (inv_attempted r I); exact P.
    + apply (inv_claimed_parked r I).
    + apply (inv_claimed_nodup r I).
  - (* InterruptParked *)
    destruct (in_table (r_table r) n) eqn:Hn; simpl in A; try discriminate.
    destruct (at_kind (r_phase r) (r_table r) n Interrupt) eqn:Ha; simpl in A; try discriminate.
    destruct (existsb (Nat.eqb id) (r_parked r)) eqn:Hd; simpl in A; try discriminate.
    inversion A; subst; constructor; simpl; try (intros; discriminate).
    + split; intros; discriminate.
    + intros n' id' s' Hp; inversion Hp; subst.
      unfold at_kind in Ha; destruct (r_phase r); try discriminate.
      apply andb_true_iff in Ha; destruct Ha as [_ Ha]; apply kind_is_kind_of in Ha.
      split; [exact Ha | split; [left; reflexivity|]].
      intros Hc; apply (inv_claimed_parked r I) in Hc; exact (existsb_eqb_false _ _ Hd Hc).
    + intros id' Hc; right; apply (inv_claimed_parked r I); exact Hc.
    + apply (inv_claimed_nodup r I).
  - (* ResumeClaimed *)
    destruct (r_phase r) eqn:P; try discriminate.
    destruct (Nat.eqb id0 id) eqn:Hi; try discriminate; apply Nat.eqb_eq in Hi; subst id0.
    destruct (inv_parked r I n id seq P) as [Hk [Hp Hnc]].
    inversion A; subst; constructor; simpl; try (intros; discriminate).
    + split; intros; discriminate.
    + intros n' id' s' Hq; inversion Hq; subst; exact Hk.
    + intros id' [Hq | Hq]; [subst; exact Hp | apply (inv_claimed_parked r I); exact Hq].
    + constructor; [exact Hnc | apply (inv_claimed_nodup r I)].
  - (* Forked *)
    destruct (r_prev_checkpoint r && Nat.eqb source_seq (r_count r - 1)) eqn:Hf; try discriminate.
    inversion A; subst; constructor; simpl.
    + split; [intros Hp; exfalso; exact (Hne eq_refl Hp) | discriminate].
    + apply (inv_at r I).
    + apply (inv_intent r I).
    + apply (inv_done r I).
    + apply (inv_attempted r I).
    + apply (inv_released r I).
    + apply (inv_parked r I).
    + apply (inv_claimed_phase r I).
    + apply (inv_claimed_parked r I).
    + apply (inv_claimed_nodup r I).
  - (* RunCompleted *)
    destruct (r_phase r) eqn:P; try discriminate.
    inversion A; subst; constructor; simpl; try (intros; discriminate).
    + split; intros; discriminate.
    + apply (inv_claimed_parked r I).
    + apply (inv_claimed_nodup r I).
  - (* RunFailed *)
    assert (Hp : r_phase r <> PEmpty) by (apply Hne; reflexivity).
    destruct (r_phase r) eqn:P; try (exfalso; apply Hp; reflexivity);
    inversion A; subst; constructor; simpl; try (intros; discriminate);
    try (split; intros; discriminate);
    try apply (inv_claimed_parked r I); apply (inv_claimed_nodup r I).
  - discriminate.
Qed.

Lemma fold_log_inv : forall l r r', rec_inv r -> fold_log r l = Recovered r' -> rec_inv r'.
Proof.
  induction l as [|x l IH]; intros r r' I H; simpl in H.
  - inversion H; subst; exact I.
  - destruct (step r x) eqn:E; [|discriminate].
    eapply IH; [eapply rec_inv_step; eauto | exact H].
Qed.

Theorem recover_inv : forall l r, recover l = Recovered r -> rec_inv r.
Proof. intros l r H; eapply fold_log_inv; [apply rec_inv_initial | exact H]. Qed.

(** ** Liveness of the decision: recovery is total and never leaves a running run without an
    action; a parked run awaits a resume; only empty and terminal runs have nothing to do. *)

Theorem decision_total : forall l, exists res, recover l = res.
Proof. intros l; eexists; reflexivity. Qed.

Theorem running_has_action : forall l r,
  recover l = Recovered r -> status_of (r_phase r) = SRunning -> action_of r <> ANone.
Proof.
  intros l r H Hs; pose proof (recover_inv l r H) as I; unfold action_of.
  destruct (r_phase r) eqn:P; simpl in Hs; try discriminate; try (intro; discriminate).
  pose proof (inv_at r I n P) as Ht; unfold in_table in Ht.
  destruct (kind_of (r_table r) n) as [[]|]; try discriminate; intro; discriminate.
Qed.

Theorem parked_awaits_resume : forall l r,
  recover l = Recovered r ->
  (status_of (r_phase r) = SParked <-> exists n id s, action_of r = AAwaitResume n id s).
Proof.
  intros l r H; pose proof (recover_inv l r H) as I; unfold action_of; split.
  - destruct (r_phase r); simpl; intros Hs; try discriminate; eauto.
  - intros [n [id [s Ha]]]; destruct (r_phase r) eqn:P; simpl; try discriminate; try reflexivity.
    destruct (kind_of (r_table r) n0) as [[]|]; discriminate.
Qed.

Theorem idle_exactly_when_empty_or_terminal : forall l r,
  recover l = Recovered r ->
  (action_of r = ANone <->
   r_phase r = PEmpty \/ r_phase r = PCompleted \/ r_phase r = PFailed).
Proof.
  intros l r H; pose proof (recover_inv l r H) as I; unfold action_of; split.
  - destruct (r_phase r) eqn:P; try discriminate; auto.
    pose proof (inv_at r I n P) as Ht; unfold in_table in Ht.
    destruct (kind_of (r_table r) n) as [[]|]; discriminate.
  - intros [P|[P|P]]; rewrite P; reflexivity.
Qed.

(** ** Consume-once, read off the log: a log that recovers holds at most one claim per id. *)

Lemma step_claimed : forall r x r', step r x = Next r' ->
  r_claimed r' =
    match x with
    | RunStarted _ _ _ _ => []
    | ResumeClaimed id _ => (id, r_count r) :: r_claimed r
    | _ => r_claimed r
    end.
Proof.
  intros r x r' H; apply step_next in H; destruct H as [_ [_ [r0 [A ->]]]].
  destruct x; simpl in A;
  repeat match type of A with
         | context [if ?c then _ else _] => destruct c; try discriminate
         | context [match r_phase r with _ => _ end] => destruct (r_phase r); try discriminate
         end; inversion A; reflexivity.
Qed.

Definition is_claimed (r : recovered) (id : iid) : bool := existsb (Nat.eqb id) (map fst (r_claimed r)).

Lemma recover_snoc_next : forall l x r',
  recover (l ++ [x]) = Recovered r' ->
  exists r, recover l = Recovered r /\ step r x = Next r'.
Proof.
  intros l x r' H; rewrite recover_snoc in H.
  destruct (recover l) eqn:E; [|discriminate].
  destruct (step r x) eqn:S; inversion H; subst; eauto.
Qed.

Theorem claims_match_claimed_set : forall l r id,
  recover l = Recovered r -> claims_of id l = if is_claimed r id then 1 else 0.
Proof.
  induction l as [|x l IH] using rev_ind; intros r id H.
  - inversion H; subst; reflexivity.
  - destruct (recover_snoc_next l x r H) as [r0 [H0 S]].
    pose proof (recover_inv l r0 H0) as I.
    pose proof (recover_count l r0 H0) as C.
    pose proof (step_claimed r0 x r S) as Cl.
    rewrite claims_of_app, (IH r0 id H0).
    unfold is_claimed; rewrite Cl.
    destruct x; simpl.
    + (* RunStarted: only at seq 0, where the log before it is empty *)
      apply step_next in S; destruct S as [_ [Z _]].
      assert (r_count r0 = 0) by (apply Z; reflexivity).
      rewrite C in H1; destruct l; [|discriminate].
      inversion H0; subst; reflexivity.
    + unfold claims_of; simpl; lia.
    + unfold claims_of; simpl; lia.
    + unfold claims_of; simpl; lia.
    + unfold claims_of; simpl; lia.
    + unfold claims_of; simpl; lia.
    + unfold claims_of; simpl; lia.
    + unfold claims_of; simpl; lia.
    + (* ResumeClaimed id0: the id was parked and not claimed before *)
      unfold claims_of; simpl.
      apply step_next in S; destruct S as [_ [_ [r1 [A _]]]]; simpl in A.
      destruct (r_phase r0) eqn:P; try discriminate.
      destruct (Nat.eqb id1 id0) eqn:Hi; try discriminate; apply Nat.eqb_eq in Hi; subst id1.
      destruct (inv_parked r0 I n id0 seq P) as [_ [_ Hnc]].
      destruct (Nat.eqb id id0) eqn:E.
      * apply Nat.eqb_eq in E; subst id0.
        assert (existsb (Nat.eqb id) (map fst (r_claimed r0)) = false) as ->.
        { destruct (existsb (Nat.eqb id) (map fst (r_claimed r0))) eqn:X; [|reflexivity].
          apply existsb_exists in X; destruct X as [y [Hy Hq]]; apply Nat.eqb_eq in Hq; subst; contradiction. }
        simpl; try rewrite Nat.eqb_refl; reflexivity.
      * simpl; try rewrite E; simpl; destruct (existsb _ _); reflexivity.
    + unfold claims_of; simpl; lia.
    + unfold claims_of; simpl; lia.
    + unfold claims_of; simpl; lia.
    + unfold claims_of; simpl; lia.
Qed.

Theorem at_most_one_claim : forall l r id, recover l = Recovered r -> claims_of id l <= 1.
Proof.
  intros l r id H; rewrite (claims_match_claimed_set l r id H); destruct (is_claimed r id); lia.
Qed.

(** ** Park-once, read off the log: a log that recovers parks each id at one index at most.
    The fold refuses a park of an id it has seen parked (DUPLICATE_INTERRUPT), and [r_parked]
    holds every id parked so far (RUN_STARTED, which clears it, is record 0 only). *)

Lemma step_parked : forall r x r', step r x = Next r' ->
  r_parked r' =
    match x with
    | RunStarted _ _ _ _ => []
    | InterruptParked _ id => id :: r_parked r
    | _ => r_parked r
    end.
Proof.
  intros r x r' H; apply step_next in H; destruct H as [_ [_ [r0 [A ->]]]].
  destruct x; simpl in A;
  repeat match type of A with
         | context [if ?c then _ else _] => destruct c; try discriminate
         | context [match r_phase r with _ => _ end] => destruct (r_phase r); try discriminate
         end; inversion A; reflexivity.
Qed.

(** Every park record of a log that recovers has its id in the recovered [r_parked]. *)
Lemma park_in_parked : forall l r k n id,
  recover l = Recovered r -> nth_error l k = Some (InterruptParked n id) -> In id (r_parked r).
Proof.
  induction l as [|x l IH] using rev_ind; intros r k n id H N.
  - destruct k; discriminate.
  - destruct (recover_snoc_next l x r H) as [r0 [H0 S]].
    pose proof (recover_count l r0 H0) as C.
    pose proof (step_parked r0 x r S) as Pk.
    destruct (Nat.lt_ge_cases k (length l)) as [Lt | Ge].
    + rewrite nth_error_app1 in N by exact Lt.
      pose proof (IH r0 k n id H0 N) as Hin; rewrite Pk.
      destruct x; try exact Hin; try (right; exact Hin).
      (* RUN_STARTED is record 0: nothing is before it *)
      exfalso; apply step_next in S; destruct S as [_ [Z _]].
      assert (r_count r0 = 0) as Z0 by (apply Z; reflexivity); rewrite C in Z0; lia.
    + rewrite nth_error_app2 in N by exact Ge.
      destruct (k - length l) eqn:D; [|destruct n0; discriminate].
      simpl in N; inversion N; subst; rewrite Pk; left; reflexivity.
Qed.

Lemma park_before_refused : forall l r k1 k2 n1 n2 id,
  recover l = Recovered r -> k1 < k2 ->
  nth_error l k1 = Some (InterruptParked n1 id) -> nth_error l k2 = Some (InterruptParked n2 id) ->
  False.
Proof.
  intros l r k1 k2 n1 n2 id H Lt N1 N2.
  destruct (nth_error_split l k2 N2) as [l1 [l2 [-> Len]]].
  replace (l1 ++ InterruptParked n2 id :: l2) with ((l1 ++ [InterruptParked n2 id]) ++ l2) in H
    by (rewrite <- app_assoc; reflexivity).
  destruct (recover_prefix_ok _ _ _ H) as [r1 H1].
  destruct (recover_snoc_next l1 _ r1 H1) as [r0 [H0 S]].
  rewrite nth_error_app1 in N1 by lia.
  pose proof (park_in_parked l1 r0 k1 n1 id H0 N1) as Hin.
  apply step_next in S; destruct S as [_ [_ [r2 [A _]]]]; simpl in A.
  assert (E : existsb (Nat.eqb id) (r_parked r0) = true)
    by (apply existsb_exists; exists id; split; [exact Hin | apply Nat.eqb_refl]).
  rewrite E in A; destruct (negb _); [discriminate|]; destruct (negb _); discriminate.
Qed.

(** Two parks of one id in a log that recovers are one record. *)
Theorem park_index_unique : forall l r k1 k2 n1 n2 id,
  recover l = Recovered r ->
  nth_error l k1 = Some (InterruptParked n1 id) -> nth_error l k2 = Some (InterruptParked n2 id) ->
  k1 = k2.
Proof.
  intros l r k1 k2 n1 n2 id H N1 N2.
  destruct (Nat.lt_total k1 k2) as [Lt | [Eq | Gt]]; [exfalso | exact Eq | exfalso].
  - exact (park_before_refused l r k1 k2 n1 n2 id H Lt N1 N2).
  - exact (park_before_refused l r k2 k1 n2 n1 id H Gt N2 N1).
Qed.

(** ** Integrity: an error names the first bad record; a corrupt record is never loaded. *)

Lemma fold_log_error : forall l r e s,
  fold_log r l = RecoveryError e s ->
  exists i r1 x, i < length l /\ s = r_count r + i /\ fold_log r (firstn i l) = Recovered r1 /\
                 nth_error l i = Some x /\ step r1 x = Stop e.
Proof.
  induction l as [|x l IH]; intros r e s H; simpl in H; [discriminate|].
  destruct (step r x) eqn:Sx.
  - destruct (IH r0 e s H) as [i [r1 [y [Hi [Hs [Hf [Hn Hst]]]]]]].
    exists (S i), r1, y; simpl; rewrite Sx; apply step_count in Sx.
    repeat split; auto; lia.
  - inversion H; subst; exists 0, r, x; simpl; repeat split; auto; lia.
Qed.

Theorem recovery_error_names_first_bad_record : forall l e s,
  recover l = RecoveryError e s ->
  s < length l /\
  exists r x, recover (firstn s l) = Recovered r /\ nth_error l s = Some x /\ step r x = Stop e.
Proof.
  intros l e s H; unfold recover in H; apply fold_log_error in H.
  destruct H as [i [r1 [x [Hi [Hs [Hf [Hn Hst]]]]]]]; simpl in Hs; subst s.
  split; [exact Hi | exists r1, x; auto].
Qed.

Theorem corrupt_record_reported : forall l1 l2 r e,
  recover l1 = Recovered r -> recover (l1 ++ Corrupt e :: l2) = RecoveryError (EFrame e) (length l1).
Proof.
  intros l1 l2 r e H; rewrite recover_app, H; simpl.
  rewrite (recover_count l1 r H); reflexivity.
Qed.

Theorem corrupt_never_loaded : forall l e, In (Corrupt e) l -> forall r, recover l <> Recovered r.
Proof.
  intros l e Hin r H; apply in_split in Hin; destruct Hin as [l1 [l2 ->]].
  rewrite recover_app in H; destruct (recover l1); simpl in H; discriminate.
Qed.

(** ** Recovery determinism: a function of the log; incremental recovery equals full recovery;
    a valid log's prefixes are valid. *)

Theorem recovery_deterministic : forall l r1 r2,
  recover l = Recovered r1 -> recover l = Recovered r2 -> r1 = r2 /\ action_of r1 = action_of r2.
Proof. intros l r1 r2 H1 H2; rewrite H1 in H2; inversion H2; auto. Qed.

Theorem incremental_recovery : forall l1 l2,
  recover (l1 ++ l2) = match recover l1 with Recovered r => fold_log r l2 | e => e end.
Proof. exact recover_app. Qed.

Theorem valid_prefix_closed : forall l1 l2 r,
  recover (l1 ++ l2) = Recovered r -> exists r1, recover l1 = Recovered r1.
Proof. exact recover_prefix_ok. Qed.

Theorem recovered_count_is_length : forall l r, recover l = Recovered r -> r_count r = length l.
Proof. exact recover_count. Qed.
