(** * The resume contract for one run, unbounded: prefix continuation, effect exactly-once,
    checkpoint validity, consume-once, recovery determinism and liveness of the decision, over
    every interleaving of steps, crashes (before and after the outside effect), stale reads and
    concurrent resumers. Forks are in Fork.v. *)

From Coq Require Import List Arith Bool Lia.
Import ListNotations.
From Remit Require Import Log Recovery RecoveryFacts Admission Sequencer SequencerFacts.

Section Contract.

Variable wf : workflow.
Variable h : key -> value.        (** the dedup sink's result for a key: a function of the key *)
Variable rid : run_id.
Variable st0 : state.
Hypothesis Ok : wf_ok wf st0.

Let w0 := start_world wf rid st0.
Let Reach := reachable wf h w0.

Lemma reach_inv : forall w, Reach w -> world_inv wf w.
Proof. intros w R; eapply reachable_inv; eauto. Qed.

(** ** 4. Checkpoint validity *)

(** Every state that reaches the store satisfies the state schema, every claim was admitted with
    a value the interrupt's schema accepts, and every reachable log recovers. *)
Theorem checkpoint_validity : forall w, Reach w ->
  valid_log (w_log w) /\ states_valid wf (w_log w) /\ claims_valid wf (w_log w).
Proof. intros w R; destruct (reach_inv w R); auto. Qed.

Lemma step_checkpoint_kept : forall r x r', step r x = Next r' -> is_checkpoint x = false ->
  r_checkpoint r' = r_checkpoint r.
Proof.
  intros r x r' S Hx; apply step_next in S; destruct S as [_ [_ [r0 [A ->]]]].
  destruct x; try discriminate; simpl in A;
  repeat match type of A with
         | context [if ?c then _ else _] => destruct c; try discriminate
         | context [match r_phase r with _ => _ end] => destruct (r_phase r); try discriminate
         end; inversion A; reflexivity.
Qed.

(** A node whose new state fails the schema is rejected: the decision writes nothing (the shell
    raises StateInvalidError naming the node), so the head checkpoint stays the last valid one. *)
Theorem invalid_state_not_persisted : forall r n st,
  wf_state_ok wf st = false -> finish_node wf r n st = DReject n.
Proof. intros r n st V; unfold finish_node; rewrite V; reflexivity. Qed.

Theorem rejected_step_writes_nothing : forall w k n,
  decide wf h (firstn k (w_log w)) = DReject n -> exec wf h w (Step k) = w.
Proof. intros w k n D; simpl; rewrite D; reflexivity. Qed.

(** An invalid resume value is refused and does not consume the interrupt. *)
Theorem invalid_resume_value_not_consumed : forall w r n id ps k v,
  Reach w -> recover (w_log w) = Recovered r -> r_phase r = PParked n id ps -> wf_value_ok wf n v = false ->
  w_log (exec wf h w (Resume k id v)) = w_log w /\ admit (w_log w) (RResume id) = Accept (length (w_log w)).
Proof.
  intros w r n id ps k v R H P V; split.
  - simpl.
    destruct (admit (firstn k (w_log w)) (RResume id)) as [s|] eqn:A; [|reflexivity].
    destruct (recover (firstn k (w_log w))) as [rv|] eqn:Hv; [|reflexivity].
    destruct (r_phase rv) as [| | | | | |n' id' ps'| | | |] eqn:Pv; try reflexivity.
    destruct (wf_value_ok wf n' v) eqn:V'; [|reflexivity].
    unfold cond_append; destruct (Nat.eqb (length (w_log w)) s) eqn:L; [|reflexivity].
    apply Nat.eqb_eq in L; apply resume_accepted_iff in A; destruct A as [r2 [n2 [ps2 [H2 [P2 Es]]]]].
    assert (Ev : firstn k (w_log w) = w_log w) by (apply firstn_length_self; lia).
    rewrite Ev, H in Hv; injection Hv as Hv; subst rv; rewrite P in Pv; injection Pv as E1 E2 E3; subst.
    congruence.
  - apply resume_accepted_iff; exists r, n, ps; auto.
Qed.

(** ** 2. Effect exactly-once *)

Lemma step_effects : forall r x r', step r x = Next r' ->
  r_effects r' =
    match x with
    | RunStarted _ _ _ _ => fun _ => (Fresh, 0)
    | EffectIntent n _ => set_effect (r_effects r) n (IntentOnly, snd (r_effects r n))
    | EffectDone n _ _ | EffectDoneFenced n _ _ => set_effect (r_effects r) n (Done, S (snd (r_effects r n)))
    | _ => r_effects r
    end.
Proof.
  intros r x r' H; apply step_next in H; destruct H as [_ [_ [r0 [A ->]]]].
  destruct x; simpl in A;
  repeat match type of A with
         | context [if ?c then _ else _] => destruct c; try discriminate
         | context [match r_phase r with _ => _ end] => destruct (r_phase r); try discriminate
         end; inversion A; reflexivity.
Qed.

Lemma keys_ok_snoc : forall l x, keys_ok (l ++ [x]) -> keys_ok l.
Proof.
  intros l x K; pose proof (keys_ok_prefix _ (length l) K) as K'.
  rewrite firstn_app_le, firstn_all in K' by lia; exact K'.
Qed.

Lemma recover_prev_checkpoint : forall l r, l <> [] -> recover l = Recovered r ->
  exists x, nth_error l (length l - 1) = Some x /\ r_prev_checkpoint r = is_checkpoint x.
Proof.
  intros l r Hl H; destruct (exists_last Hl) as [l' [x ->]].
  exists x; rewrite app_length; simpl; replace (length l' + 1 - 1) with (length l') by lia.
  split; [apply nth_error_snoc_last | eapply recover_last_checkpoint; eauto].
Qed.

(** A completion's key instance is below its own seq (it is the seq of the intent before it);
    the pending intent's key instance is its seq, and it is the last record. *)
Lemma key_invariant : forall l r, keys_ok l -> recover l = Recovered r ->
  (forall d n k res, nth_error l d = Some (EffectDone n k res) -> key_instance k < d) /\
  (forall n k s, r_phase r = PIntent n k s -> key_instance k = s /\ r_count r = S s).
Proof.
  induction l as [|x l IH] using rev_ind; intros r K H.
  - inversion H; subst; split; [intros d ? ? ? E; destruct d; discriminate | intros; discriminate].
  - destruct (recover_snoc_next l x r H) as [r0 [H0 S]].
    destruct (IH r0 (keys_ok_snoc l x K) H0) as [D0 P0].
    pose proof (recover_count l r0 H0) as C0.
    pose proof (step_count r0 x r S) as C.
    pose proof (step_phase r0 x r S) as P.
    assert (Old : forall d n k res, nth_error (l ++ [x]) d = Some (EffectDone n k res) -> d < length l ->
                  key_instance k < d).
    { intros d n k res E Lt; rewrite nth_error_app1 in E by exact Lt; eapply D0; eauto. }
    assert (New : forall d y, nth_error (l ++ [x]) d = Some y -> length l <= d -> d = length l /\ y = x).
    { intros d y E Ge; rewrite nth_error_app2 in E by exact Ge.
      destruct (d - length l) eqn:Z; simpl in E; [injection E as <-; split; [lia | reflexivity]|destruct n; discriminate]. }
    assert (Dn : (forall n k res, x <> EffectDone n k res) ->
                 forall d n k res, nth_error (l ++ [x]) d = Some (EffectDone n k res) -> key_instance k < d).
    { intros Nx d n k res E; destruct (Nat.lt_ge_cases d (length l)) as [Lt|Ge]; [eapply Old; eauto|].
      destruct (New d _ E Ge) as [_ Ex]; exfalso; eapply Nx; symmetry; exact Ex. }
    destruct x.
    + split; [apply Dn; intros; discriminate | intros n k s Hp; rewrite P in Hp; discriminate].
    + destruct P as [P _]; split; [apply Dn; intros; discriminate | intros n' k s Hp; rewrite P in Hp; destruct next; discriminate].
    + (* EffectIntent n k: its key is derived from the log before it: instance = its seq *)
      assert (Kx : exists rr, recover (firstn (length l) (l ++ [EffectIntent n k])) = Recovered rr /\ k = derive_key rr n)
        by (apply K; apply nth_error_snoc_last).
      rewrite firstn_app_le, firstn_all in Kx by lia; destruct Kx as [rr [Hrr ->]].
      rewrite H0 in Hrr; injection Hrr as Hrr; subst rr.
      split; [apply Dn; intros; discriminate|].
      intros n' k s Hp; rewrite P in Hp; injection Hp as E1 E2 E3; subst; simpl; auto.
    + (* EffectDone n k: the pending intent was the last record, at seq s = length l - 1 *)
      destruct P as [P [s Pi]]; destruct (P0 n k s Pi) as [Ki Cs].
      split; [|intros n' k' s' Hp; rewrite P in Hp; discriminate].
      intros d n' k' res' E; destruct (Nat.lt_ge_cases d (length l)) as [Lt|Ge]; [eapply Old; eauto|].
      destruct (New d _ E Ge) as [Ed Ex]; injection Ex as E1 E2 E3; subst; lia.
    + destruct P as [si P]; split; [apply Dn; intros; discriminate | intros n1 k1 s1 Hp; rewrite P in Hp; discriminate].
    + destruct P as [si [s' [_ P]]]; split; [apply Dn; intros; discriminate | intros n1 k1 s1 Hp; rewrite P in Hp; discriminate].
    + destruct P as [P _]; split; [apply Dn; intros; discriminate | intros n1 k1 s1 Hp; rewrite P in Hp; discriminate].
    + split; [apply Dn; intros; discriminate | intros n' k s Hp; rewrite P in Hp; discriminate].
    + destruct P as [n' [s' [_ P]]]; split; [apply Dn; intros; discriminate | intros n k s Hp; rewrite P in Hp; discriminate].
    + (* Forked: impossible while an intent is pending (the record before a fork is a checkpoint) *)
      split; [apply Dn; intros; discriminate|].
      intros n k s Hp; rewrite P in Hp; exfalso.
      destruct (P0 n k s Hp) as [_ Cs].
      destruct (phase_witness l r0 H0) as [W _]; specialize (W n k s Hp).
      assert (Hl : l <> []) by (intros ->; rewrite C0 in Cs; discriminate).
      destruct (recover_prev_checkpoint l r0 Hl H0) as [y [Ey Py]].
      replace (length l - 1) with s in Ey by lia; rewrite W in Ey; injection Ey as <-.
      apply step_next in S; destruct S as [_ [_ [r1 [A _]]]]; simpl in A; rewrite Py in A; discriminate.
    + split; [apply Dn; intros; discriminate | intros n' k s Hp; rewrite P in Hp; discriminate].
    + split; [apply Dn; intros; discriminate | intros n' k s Hp; rewrite P in Hp; discriminate].
    + destruct P.
Qed.

(** The decision: from a log that holds a completion for key [k], the sequencer never invokes
    the handler with [k] and never begins an effect instance keyed [k]. This holds for the log
    the deciding process read, whatever that process is (fresh, stale, restarted). *)
Theorem effect_decision_never_after_done : forall l r, keys_ok l -> recover l = Recovered r ->
  (forall k recs, decide wf h l = DInvoke k recs -> forall n res, ~ In (EffectDone n k res) l) /\
  (forall n k, decide wf h l = DWrite [EffectIntent n k] -> forall n' res, ~ In (EffectDone n' k res) l).
Proof.
  intros l r K H; destruct (key_invariant l r K H) as [D P].
  pose proof (recover_count l r H) as C.
  assert (NotIn : forall k, key_instance k >= length l - 1 -> (exists s, key_instance k = s /\ length l = S s) \/ key_instance k >= length l ->
                  forall n res, ~ In (EffectDone n k res) l).
  { intros k _ Hk n res Hin; apply In_nth_error in Hin; destruct Hin as [d Ed].
    pose proof (D d n k res Ed) as Lt.
    assert (d < length l) by (apply nth_error_Some; congruence).
    destruct Hk as [[s [E1 E2]]|Hk]; lia. }
  split.
  - (* InvokeEffect: the pending key's instance is the intent's seq, the last record *)
    intros k recs Dc.
    destruct (decided_record_accepted wf h l r recs H (or_intror (ex_intro _ k Dc))) as [x [_ [-> _]]].
    destruct (decided_record_shape wf h l r x H) as [_ Si].
    destruct (Si k Dc) as [n [_ [s Ps]]]; destruct (P _ _ _ Ps) as [Ki Cs].
    apply (NotIn k); [lia | left; exists s; split; [exact Ki | lia]].
  - (* BeginEffect: the new key's instance is the log's length, above every completion's *)
    intros n k Dw.
    destruct (decided_record_shape wf h l r (EffectIntent n k) H) as [Sw _].
    destruct (Sw Dw) as [_ [_ [_ Kd]]]; rewrite (Kd n k eq_refl).
    apply (NotIn (derive_key r n)); [simpl; lia | right; simpl; lia].
Qed.

(** In the system: whatever prefix a process read, the decision it took from it never invokes a
    handler, or begins an instance, whose completion that prefix holds. *)
Theorem effect_exactly_once_decision : forall w j,
  Reach w ->
  let view := firstn j (w_log w) in
  (forall k recs, decide wf h view = DInvoke k recs -> forall n res, ~ In (EffectDone n k res) view) /\
  (forall n k, decide wf h view = DWrite [EffectIntent n k] -> forall n' res, ~ In (EffectDone n' k res) view).
Proof.
  intros w j R view; pose proof (reach_inv w R) as I.
  destruct (view_valid (w_log w) j (wi_valid wf w I)) as [r Hv].
  apply (effect_decision_never_after_done view r); [apply keys_ok_prefix; exact (wi_keys wf w I) | exact Hv].
Qed.

(** A process that reads the current log never calls a handler whose completion is durable. *)
Theorem fresh_reader_never_reinvokes : forall w j n k res,
  Reach w -> length (w_log w) <= j -> In (EffectDone n k res) (w_log w) ->
  forall recs, decide wf h (firstn j (w_log w)) <> DInvoke k recs.
Proof.
  intros w j n k res R L Hin recs D.
  destruct (effect_exactly_once_decision w j R) as [A _].
  rewrite firstn_all2 in A, D by exact L.
  exact (A k recs D n res Hin).
Qed.

(** At the sink: each key is applied at most once; every durable completion was applied; the
    handler was only ever called for a durable intent. *)
Theorem effect_applied_exactly_once : forall w, Reach w ->
  NoDup (w_applied w) /\
  (forall n k res, In (EffectDone n k res) (w_log w) -> In k (w_applied w)) /\
  (forall k, In k (w_applied w) -> In k (w_invoked w)) /\
  (forall k, In k (w_invoked w) -> exists n, In (EffectIntent n k) (w_log w)).
Proof. intros w R; destruct (reach_inv w R); auto. Qed.

(** ** 5. Consume-once *)

(** However many resumers race, and however stale their reads, a log holds at most one claim
    per interrupt. *)
Theorem one_claim_per_interrupt : forall w id, Reach w -> claims_of id (w_log w) <= 1.
Proof.
  intros w id R; destruct (wi_valid wf w (reach_inv w R)) as [r H]; eapply at_most_one_claim; eauto.
Qed.

(** A resume of a claimed interrupt (same or different value, any read) records nothing. *)
Theorem resume_after_claim_records_nothing : forall w id v k v',
  Reach w -> In (ResumeClaimed id v) (w_log w) -> w_log (exec wf h w (Resume k id v')) = w_log w.
Proof.
  intros w id v k v' R Hin; simpl.
  destruct (admit (firstn k (w_log w)) (RResume id)) as [s|] eqn:A; [|reflexivity].
  destruct (recover (firstn k (w_log w))) as [rv|] eqn:Hv; [|reflexivity].
  destruct (r_phase rv); try reflexivity.
  destruct (wf_value_ok wf n v'); [|reflexivity].
  unfold cond_append; destruct (Nat.eqb (length (w_log w)) s) eqn:L; [|reflexivity].
  apply Nat.eqb_eq in L; pose proof A as A'; apply resume_accepted_iff in A'.
  destruct A' as [r2 [n2 [ps2 [H2 [P2 Es]]]]].
  assert (Ev : firstn k (w_log w) = w_log w) by (apply firstn_length_self; lia).
  rewrite Ev in A, H2.
  assert (C : claims_of id (w_log w) >= 1).
  { unfold claims_of; apply in_split in Hin; destruct Hin as [l1 [l2 ->]].
    rewrite filter_app, app_length; simpl; rewrite Nat.eqb_refl; simpl; lia. }
  rewrite (claims_match_claimed_set _ r2 id H2) in C.
  destruct (is_claimed r2 id) eqn:Ic; [|lia].
  apply claim_seq_is_claimed in Ic; destruct Ic as [s' Ic]; apply claim_seq_some_in in Ic.
  rewrite (resume_refused_when_claimed _ r2 id s' H2 Ic) in A; discriminate.
Qed.

(** ** 6. Recovery determinism *)

(** Two processes that read the same durable log take the same decision. *)
Theorem decision_deterministic : forall l1 l2, l1 = l2 -> decide wf h l1 = decide wf h l2.
Proof. intros l1 l2 ->; reflexivity. Qed.

Lemma exec_step_log : forall w k,
  w_log (exec wf h w (Step k)) =
  if Nat.eqb (length (w_log w)) k then
    match decide wf h (firstn k (w_log w)) with
    | DWrite recs => w_log w ++ recs
    | DInvoke _ recs => w_log w ++ recs
    | _ => w_log w
    end
  else w_log w.
Proof.
  intros w k; simpl; destruct (decide wf h (firstn k (w_log w))); unfold cond_append; simpl;
  destruct (Nat.eqb (length (w_log w)) k); reflexivity.
Qed.

(** Two processes that read the same prefix race to write: the log ends as if one had acted. *)
Theorem racing_steps_idempotent : forall w k, Reach w ->
  w_log (exec wf h (exec wf h w (Step k)) (Step k)) = w_log (exec wf h w (Step k)).
Proof.
  intros w k R; pose proof (reach_inv w R) as I; destruct (wi_valid wf w I) as [r H].
  rewrite (exec_step_log (exec wf h w (Step k)) k).
  rewrite (exec_step_log w k).
  destruct (Nat.eqb (length (w_log w)) k) eqn:L; [|rewrite L; reflexivity].
  apply Nat.eqb_eq in L; subst k; rewrite firstn_all.
  destruct (decide wf h (w_log w)) as [recs|key recs| | |] eqn:D.
  - destruct (decided_record_accepted wf h _ r recs H (or_introl D)) as [x [_ [-> _]]].
    rewrite app_length; simpl; replace (Nat.eqb (length (w_log w) + 1) (length (w_log w))) with false
      by (symmetry; apply Nat.eqb_neq; lia); reflexivity.
  - destruct (decided_record_accepted wf h _ r recs H (or_intror (ex_intro _ key D))) as [x [_ [-> _]]].
    rewrite app_length; simpl; replace (Nat.eqb (length (w_log w) + 1) (length (w_log w))) with false
      by (symmetry; apply Nat.eqb_neq; lia); reflexivity.
  - rewrite Nat.eqb_refl, firstn_all, D; reflexivity.
  - rewrite Nat.eqb_refl, firstn_all, D; reflexivity.
  - rewrite Nat.eqb_refl, firstn_all, D; reflexivity.
Qed.

(** Recovering again with no new records changes nothing: a process whose decision is to wait
    (parked), to stop (ended) or to reject (invalid state) writes nothing and calls no handler; a
    crash changes nothing. *)
Theorem idle_recovery_changes_nothing : forall w k,
  match decide wf h (firstn k (w_log w)) with DWait _ _ | DReject _ | DStop => True | _ => False end ->
  exec wf h w (Step k) = w /\ exec wf h w Crash = w.
Proof.
  intros w k D; split; [|reflexivity]; simpl.
  destruct (decide wf h (firstn k (w_log w))); try contradiction; reflexivity.
Qed.

(** ** Liveness of the decision, in the system *)

(** A running run always makes progress when a process reads the log and acts: the log grows by
    one record and stays valid, unless the node's new state fails the schema (then nothing is
    written and the error names the node). A parked run waits for a resume; an ended run does
    nothing. *)
Theorem running_run_progresses : forall w r, Reach w ->
  recover (w_log w) = Recovered r -> status_of (r_phase r) = SRunning ->
  (exists x, w_log (exec wf h w (Step (length (w_log w)))) = w_log w ++ [x] /\ valid_log (w_log w ++ [x])) \/
  (exists n, decide wf h (w_log w) = DReject n /\ exec wf h w (Step (length (w_log w))) = w).
Proof.
  intros w r R H Hs.
  pose proof (running_has_action _ r H Hs) as Na.
  assert (Fn : forall n st, (exists recs, finish_node wf r n st = DWrite recs) \/ finish_node wf r n st = DReject n).
  { intros n st; destruct (finish_node_shape wf r n st _ eq_refl) as [E|[? [E _]]]; rewrite E; eauto. }
  assert (D : (exists recs, decide wf h (w_log w) = DWrite recs \/ exists k, decide wf h (w_log w) = DInvoke k recs) \/
              exists n, decide wf h (w_log w) = DReject n).
  { unfold decide; rewrite H; pose proof (action_phase r) as A.
    (* the protocol without the fence never reaches an attempt or a release *)
    assert (Uf : forall n k si a s, r_phase r <> PAttempted n k si a s /\ r_phase r <> PReleased n k si a).
    { apply (unfenced_phase (w_log w)); [|exact H].
      apply (reachable_unfenced wf h w0); [reflexivity | exact R]. }
    destruct (action_of r) eqn:Ea; try (exfalso; apply Na; reflexivity).
    all: try (exfalso; eapply (proj1 (Uf _ _ _ _ _)); exact A).
    all: try (destruct A as [[A _]|[a [A _]]]; rewrite A;
              [left; eexists; right; eexists; reflexivity | exfalso; eapply (proj2 (Uf _ _ _ a 0)); exact A]).
    all: try (rewrite A in Hs; discriminate).
    all: try (left; eexists; left; reflexivity).
    all: try (left; eexists; right; eexists; reflexivity).
    all: try (destruct (wf_fails wf n (head_state (w_log w))); [left; eexists; left; reflexivity|]).
    all: match goal with
         | |- context [finish_node _ _ ?n ?st] =>
             destruct (Fn n st) as [[recs E]|E]; rewrite E; [left; exists recs; left; reflexivity | right; eauto]
         end. }
  destruct D as [[recs D]|[n D]].
  - destruct (decided_record_accepted wf h _ r recs H D) as [x [r' [-> [_ Hx]]]].
    left; exists x; split; [|exists r'; exact Hx].
    simpl; rewrite firstn_all.
    destruct D as [D|[k D]]; rewrite D; unfold cond_append; simpl; rewrite Nat.eqb_refl; reflexivity.
  - right; exists n; split; [exact D | apply (rejected_step_writes_nothing _ _ n); rewrite firstn_all; exact D].
Qed.

Theorem parked_run_waits : forall w r, Reach w ->
  recover (w_log w) = Recovered r -> status_of (r_phase r) = SParked ->
  exists n id, decide wf h (w_log w) = DWait n id.
Proof.
  intros w r R H Hs; unfold decide; rewrite H; pose proof (action_phase r) as A.
  destruct (r_phase r) eqn:P; try discriminate Hs; unfold action_of in *; rewrite P in *; eauto.
Qed.

(** ** 1. Prefix continuation *)

Fixpoint iterate (f : log -> log) (m : nat) (l : log) : log :=
  match m with 0 => l | S m' => f (iterate f m' l) end.

Lemma iterate_add : forall f a b l, iterate f (a + b) l = iterate f a (iterate f b l).
Proof. intros f a b l; induction a as [|a IH]; simpl; [reflexivity | rewrite IH; reflexivity]. Qed.

(** The uninterrupted run: no crash, no race; at a parked interrupt the resume value [rv id] is
    claimed (when there is one and the schema accepts it); a rejected node stops it. *)
Definition drive_step (rv : iid -> option value) (l : log) : log :=
  match decide wf h l with
  | DWrite recs => l ++ recs
  | DInvoke _ recs => l ++ recs
  | DWait n id =>
      match rv id with
      | Some v => if wf_value_ok wf n v then l ++ [ResumeClaimed id v] else l
      | None => l
      end
  | DReject _ => l
  | DStop => l
  end.

Definition uninterrupted (rv : iid -> option value) (m : nat) : log := iterate (drive_step rv) m (w_log w0).

(** The resume values a log's claims used. *)
Definition claims_agree (rv : iid -> option value) (l : log) : Prop :=
  forall id v, In (ResumeClaimed id v) l -> rv id = Some v.

(** What one event does to the log: nothing, the decided record, or an admitted valid claim. *)
Lemma exec_log_cases : forall w ev, Reach w ->
  w_log (exec wf h w ev) = w_log w \/
  (exists recs, (decide wf h (w_log w) = DWrite recs \/ exists k, decide wf h (w_log w) = DInvoke k recs) /\
                w_log (exec wf h w ev) = w_log w ++ recs) \/
  (exists n id v, decide wf h (w_log w) = DWait n id /\ wf_value_ok wf n v = true /\
                  w_log (exec wf h w ev) = w_log w ++ [ResumeClaimed id v]).
Proof.
  intros w ev R; pose proof (reach_inv w R) as I.
  destruct ev as [k|k| |k id v]; simpl.
  - destruct (decide wf h (firstn k (w_log w))) as [recs|key recs| | |] eqn:D; try (left; reflexivity);
    unfold cond_append; simpl; destruct (Nat.eqb (length (w_log w)) k) eqn:L; try (left; reflexivity);
    apply Nat.eqb_eq in L; subst k; rewrite firstn_all in D; right; left; exists recs; eauto.
  - destruct (decide wf h (firstn k (w_log w))); left; reflexivity.
  - left; reflexivity.
  - destruct (admit (firstn k (w_log w)) (RResume id)) as [s|] eqn:A; [|left; reflexivity].
    destruct (recover (firstn k (w_log w))) as [rv|] eqn:Hv; [|left; reflexivity].
    destruct (r_phase rv) as [| | | | | |n id' ps| | | |] eqn:P; try (left; reflexivity).
    destruct (wf_value_ok wf n v) eqn:V; [|left; reflexivity].
    unfold cond_append; destruct (Nat.eqb (length (w_log w)) s) eqn:L; [|left; reflexivity].
    apply Nat.eqb_eq in L; pose proof A as A'; apply resume_accepted_iff in A'.
    destruct A' as [r2 [n2 [ps2 [H2 [P2 Es]]]]].
    assert (Ev : firstn k (w_log w) = w_log w) by (apply firstn_length_self; lia).
    rewrite Ev in Hv, H2; rewrite H2 in Hv; injection Hv as Hv; subst rv.
    rewrite P in P2; injection P2 as E1 E2 E3; subst n2 id' ps2.
    right; right; exists n, id, v; split; [|split; [exact V | reflexivity]].
    unfold decide; rewrite H2; unfold action_of; rewrite P; reflexivity.
Qed.

Lemma claims_agree_app : forall rv l l', claims_agree rv (l ++ l') -> claims_agree rv l.
Proof. intros rv l l' C id v Hin; apply C; apply in_or_app; left; exact Hin. Qed.

(** Prefix continuation: every durable log reachable under crashes (before or after an outside
    effect), stale reads, racing sequencers and racing resumers is a point of the uninterrupted
    run with the same inputs and the resume values the log claimed. *)
Theorem prefix_continuation : forall w rv, Reach w -> claims_agree rv (w_log w) ->
  exists m, w_log w = uninterrupted rv m.
Proof.
  intros w rv R; induction R as [|w ev R IH]; intros C.
  - exists 0; reflexivity.
  - destruct (exec_log_cases w ev R) as [Same | [[recs [D Grow]] | [n [id [v [D [V Grow]]]]]]].
    + rewrite Same in C |- *; apply IH; exact C.
    + rewrite Grow in C |- *; destruct (IH (claims_agree_app _ _ _ C)) as [m Em].
      exists (S m); unfold uninterrupted in Em |- *; cbn [iterate]; rewrite <- Em.
      unfold drive_step; destruct D as [D|[k D]]; rewrite D; reflexivity.
    + rewrite Grow in C |- *; destruct (IH (claims_agree_app _ _ _ C)) as [m Em].
      exists (S m); unfold uninterrupted in Em |- *; cbn [iterate]; rewrite <- Em.
      unfold drive_step; rewrite D.
      rewrite (C id v (in_or_app _ _ _ (or_intror (in_eq _ _)))), V; reflexivity.
Qed.

(** Resuming continues the uninterrupted run from where the durable prefix stands: the
    continuation is the rest of the uninterrupted run, nothing re-run, nothing skipped. *)
Corollary continuation_is_uninterrupted : forall w rv, Reach w -> claims_agree rv (w_log w) ->
  exists m, forall k, iterate (drive_step rv) k (w_log w) = uninterrupted rv (k + m).
Proof.
  intros w rv R C; destruct (prefix_continuation w rv R C) as [m Em].
  exists m; intros k; rewrite Em; unfold uninterrupted; rewrite iterate_add; reflexivity.
Qed.

Lemma iterate_fix : forall f l m, f l = l -> iterate f m l = l.
Proof. intros f l m F; induction m as [|m IH]; simpl; [reflexivity | rewrite IH; exact F]. Qed.

(** If the uninterrupted run ends (reaches a log that no step changes: completed, failed, or
    parked with no resume value), then resuming from any reachable durable prefix reaches that
    very log: same records, same final state. *)
Corollary same_final_log : forall w rv M, Reach w -> claims_agree rv (w_log w) ->
  drive_step rv (uninterrupted rv M) = uninterrupted rv M ->
  exists k, iterate (drive_step rv) k (w_log w) = uninterrupted rv M.
Proof.
  intros w rv M R C F; destruct (prefix_continuation w rv R C) as [m Em].
  destruct (Nat.le_gt_cases m M) as [Le|Gt].
  - exists (M - m); rewrite Em; unfold uninterrupted; rewrite <- iterate_add; f_equal; lia.
  - exists 0; simpl; rewrite Em; unfold uninterrupted.
    replace m with ((m - M) + M) by lia; rewrite iterate_add; apply iterate_fix; exact F.
Qed.

End Contract.
