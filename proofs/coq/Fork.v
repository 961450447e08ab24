(** * Forks: the store's fork transaction, source preservation, fork determinism (two forks of
    one checkpoint driven with the same inputs give logs equal up to the swap of their run ids),
    and new keys after the fork point. *)

From Coq Require Import List Arith Bool Lia.
Import ListNotations.
From Remit Require Import Log Recovery RecoveryFacts Admission Sequencer SequencerFacts Contract.

(** ** A store of runs with a conditional append and an atomic fork *)

Definition store := run_id -> log.

Definition update (s : store) (r : run_id) (l : log) : store :=
  fun r' => if Nat.eqb r' r then l else s r'.

(** Append [recs] to run [r] only if its next seq is [expected]. *)
Definition store_append (s : store) (r : run_id) (expected : nat) (recs : log) : option store :=
  if Nat.eqb (length (s r)) expected then Some (update s r (s r ++ recs)) else None.

(** Create run [tgt] holding the source's first [prefix] records and then [frec]; refused when
    the target exists or the source is too short. *)
Definition store_fork (s : store) (src : run_id) (prefix : nat) (tgt : run_id) (frec : record) : option store :=
  match s tgt with
  | _ :: _ => None
  | [] => if length (s src) <? prefix then None else Some (update s tgt (firstn prefix (s src) ++ [frec]))
  end.

(** fork(run, checkpoint, intent): admission FORK_AT, then the store transaction. *)
Definition fork_run (s : store) (src : run_id) (n : nat) (tgt : run_id) (intent : value) : option store :=
  match admit (s src) (RForkAt n) with
  | Accept _ => store_fork s src (S n) tgt (Forked src n tgt intent)
  | Refuse _ _ => None
  end.

Theorem store_append_conditional : forall s r e recs s',
  store_append s r e recs = Some s' ->
  length (s r) = e /\ s' r = s r ++ recs /\ (forall r', r' <> r -> s' r' = s r').
Proof.
  intros s r e recs s' H; unfold store_append in H.
  destruct (Nat.eqb (length (s r)) e) eqn:E; [|discriminate]; injection H as <-.
  apply Nat.eqb_eq in E; unfold update; rewrite Nat.eqb_refl; repeat split; auto.
  intros r' Hr; apply Nat.eqb_neq in Hr; rewrite Hr; reflexivity.
Qed.

(** Two writers that read the same seq: once one has appended, the other is refused. *)
Theorem store_race_one_winner : forall s r e a b s1,
  store_append s r e a = Some s1 -> a <> [] -> store_append s1 r e b = None.
Proof.
  intros s r e a b s1 H Ha; destruct (store_append_conditional _ _ _ _ _ H) as [L [E _]].
  unfold store_append; rewrite E, app_length.
  destruct a; [contradiction|]; simpl.
  replace (Nat.eqb (length (s r) + S (length a)) e) with false by (symmetry; apply Nat.eqb_neq; lia).
  reflexivity.
Qed.

(** The fork transaction writes only the new run: the source and every other run are untouched,
    and the new run is the prefix followed by the fork record. *)
Theorem store_fork_preserves_source : forall s src p tgt f s',
  store_fork s src (S p) tgt f = Some s' ->
  src <> tgt /\ s' src = s src /\ (forall r, r <> tgt -> s' r = s r) /\
  s' tgt = firstn (S p) (s src) ++ [f].
Proof.
  intros s src p tgt f s' H; unfold store_fork in H.
  destruct (s tgt) eqn:T; [|discriminate].
  destruct (length (s src) <? S p) eqn:L; [discriminate|]; injection H as <-.
  apply Nat.ltb_ge in L.
  assert (Ne : src <> tgt) by (intros ->; rewrite T in L; simpl in L; lia).
  unfold update; rewrite Nat.eqb_refl; repeat split; auto.
  - apply Nat.eqb_neq in Ne; rewrite Ne; reflexivity.
  - intros r Hr; apply Nat.eqb_neq in Hr; rewrite Hr; reflexivity.
Qed.

(** fork(run, checkpoint, intent) forks only at a checkpoint, leaves the source as it was, and
    the new run's log recovers in the checkpoint's phase under the new run id. *)
Theorem fork_run_sound : forall s src n tgt intent s' r,
  recover (s src) = Recovered r -> fork_run s src n tgt intent = Some s' ->
  s' src = s src /\ (forall r', r' <> tgt -> s' r' = s r') /\
  s' tgt = firstn (S n) (s src) ++ [Forked src n tgt intent] /\
  (exists x, nth_error (s src) n = Some x /\ is_checkpoint x = true) /\
  exists rp rf, recover (firstn (S n) (s src)) = Recovered rp /\ recover (s' tgt) = Recovered rf /\
                r_phase rf = r_phase rp /\ r_run rf = tgt.
Proof.
  intros s src n tgt intent s' r H F; unfold fork_run in F.
  destruct (admit (s src) (RForkAt n)) as [a|] eqn:A; [|discriminate].
  destruct (store_fork_preserves_source _ _ _ _ _ _ F) as [_ [Ps [Po Pt]]].
  destruct (fork_at_accepted _ _ _ A) as [_ [_ Ck]].
  destruct (fork_log_recovers _ _ _ _ src tgt intent H A) as [rp [rf [Hp [Hf [Ph [Pr _]]]]]].
  repeat split; auto.
  exists rp, rf; rewrite Pt; auto.
Qed.

(** ** Renaming run ids: swap [a] and [b] everywhere a run id appears *)

Section Rename.

Variables a b : run_id.

Definition swap (x : run_id) : run_id := if Nat.eqb x a then b else if Nat.eqb x b then a else x.

Lemma swap_swap : forall x, swap (swap x) = x.
Proof.
  intros x; unfold swap.
  destruct (Nat.eqb x a) eqn:Ea.
  - apply Nat.eqb_eq in Ea; subst x.
    destruct (Nat.eqb b a) eqn:Eba; [apply Nat.eqb_eq in Eba; subst; reflexivity|].
    rewrite Nat.eqb_refl; reflexivity.
  - destruct (Nat.eqb x b) eqn:Eb.
    + apply Nat.eqb_eq in Eb; subst x; rewrite Nat.eqb_refl; reflexivity.
    + rewrite Ea, Eb; reflexivity.
Qed.

Lemma swap_inj : forall x y, swap x = swap y -> x = y.
Proof. intros x y H; rewrite <- (swap_swap x), <- (swap_swap y), H; reflexivity. Qed.

Definition ren_key (k : key) : key := mk_key (swap (key_run k)) (key_node k) (key_instance k).

Lemma key_eqb_ren : forall k1 k2, key_eqb (ren_key k1) (ren_key k2) = key_eqb k1 k2.
Proof.
  intros [r1 n1 i1] [r2 n2 i2]; unfold key_eqb, ren_key; simpl.
  destruct (Nat.eqb r1 r2) eqn:E.
  - apply Nat.eqb_eq in E; subst; rewrite Nat.eqb_refl; reflexivity.
  - replace (Nat.eqb (swap r1) (swap r2)) with false; [reflexivity|].
    symmetry; apply Nat.eqb_neq; intros H; apply swap_inj in H; apply Nat.eqb_neq in E; contradiction.
Qed.

Definition ren_record (x : record) : record :=
  match x with
  | RunStarted rid t start st => RunStarted (swap rid) t start st
  | EffectIntent n k => EffectIntent n (ren_key k)
  | EffectDone n k res => EffectDone n (ren_key k) res
  | EffectAttempt n k t => EffectAttempt n (ren_key k) t
  | EffectReleased n k t => EffectReleased n (ren_key k) t
  | EffectDoneFenced n k res => EffectDoneFenced n (ren_key k) res
  | Forked src ss rid i => Forked (swap src) ss (swap rid) i
  | x => x
  end.

Definition ren_log (l : log) : log := map ren_record l.

Definition ren_phase (p : phase) : phase :=
  match p with
  | PIntent n k s => PIntent n (ren_key k) s
  | PDone n k s => PDone n (ren_key k) s
  | PAttempted n k si t s => PAttempted n (ren_key k) si t s
  | PReleased n k si t => PReleased n (ren_key k) si t
  | p => p
  end.

Definition ren_link (f : fork_link) : fork_link :=
  mk_link (swap (link_source f)) (link_source_seq f) (swap (link_run f)) (link_fork_seq f) (link_intent f).

Definition ren_recovered (r : recovered) : recovered :=
  mk_recovered (ren_phase (r_phase r)) (r_count r) (r_table r) (swap (r_run r)) (r_checkpoint r)
    (r_snapshot r) (r_prev_checkpoint r) (r_effects r) (r_parked r) (r_claimed r)
    (map ren_link (r_lineage r)) (r_failure r).

Definition ren_step_result (x : step_result) : step_result :=
  match x with Next r => Next (ren_recovered r) | Stop e => Stop e end.

Lemma ren_is_checkpoint : forall x, is_checkpoint (ren_record x) = is_checkpoint x.
Proof. destruct x; reflexivity. Qed.

Lemma ren_is_run_started : forall x, is_run_started (ren_record x) = is_run_started x.
Proof. destruct x; reflexivity. Qed.

Lemma ren_is_terminal : forall p, is_terminal (ren_phase p) = is_terminal p.
Proof. destruct p; reflexivity. Qed.

(** Renaming commutes with the transition rules. *)
Ltac finish_ren :=
  unfold ren_step_result, ren_recovered, set_phase, set_checkpoint, set_effects, add_parked,
    add_claimed, set_fork, set_failure; simpl;
  try reflexivity;
  try (match goal with |- context [next_phase ?nx] => destruct nx end; reflexivity);
  try (rewrite map_app; reflexivity).

Lemma apply_ren : forall r x, apply (ren_recovered r) (ren_record x) = ren_step_result (apply r x).
Proof.
  intros r x; destruct x; simpl.
  - destruct (negb (table_ok table)); [reflexivity|]; destruct (negb (in_table table start)); finish_ren.
  - destruct (negb (in_table (r_table r) n)); [reflexivity|]; destruct (negb (next_ok (r_table r) next)); [reflexivity|].
    destruct (r_phase r); simpl; try reflexivity;
    [ destruct (Nat.eqb n0 n && kind_is (r_table r) n Pure)
    | destruct (Nat.eqb n0 n) | destruct (Nat.eqb n0 n) ]; finish_ren.
  - destruct (negb (in_table (r_table r) n)); [reflexivity|].
    destruct (r_phase r); simpl; try reflexivity.
    destruct (Nat.eqb n0 n && kind_is (r_table r) n Effect); finish_ren.
  - destruct (negb (in_table (r_table r) n)); [reflexivity|].
    destruct (r_phase r); simpl; try reflexivity.
    rewrite key_eqb_ren; destruct (Nat.eqb n0 n && key_eqb k0 k); finish_ren.
  - destruct (negb (in_table (r_table r) n)); [reflexivity|].
    destruct (r_phase r); simpl; try reflexivity; rewrite key_eqb_ren;
    match goal with |- context [if ?c then _ else _] => destruct c end; finish_ren.
  - destruct (negb (in_table (r_table r) n)); [reflexivity|].
    destruct (r_phase r); simpl; try reflexivity; rewrite key_eqb_ren;
    match goal with |- context [if ?c then _ else _] => destruct c end; finish_ren.
  - destruct (negb (in_table (r_table r) n)); [reflexivity|].
    destruct (r_phase r); simpl; try reflexivity; rewrite key_eqb_ren;
    match goal with |- context [if ?c then _ else _] => destruct c end; finish_ren.
  - destruct (negb (in_table (r_table r) n)); [reflexivity|].
    destruct (r_phase r); simpl; try reflexivity.
    destruct (Nat.eqb n0 n && kind_is (r_table r) n Interrupt); [|reflexivity].
    destruct (existsb (Nat.eqb id) (r_parked r)); finish_ren.
  - destruct (r_phase r); simpl; try reflexivity; destruct (Nat.eqb id0 id); finish_ren.
  - destruct (r_prev_checkpoint r && Nat.eqb source_seq (r_count r - 1)); finish_ren.
  - destruct (r_phase r); finish_ren.
  - destruct (r_phase r); finish_ren.
  - reflexivity.
Qed.

Definition step_body (r : recovered) (x : record) : step_result :=
  if is_terminal (r_phase r) then Stop ImpossibleOrder
  else if negb (Bool.eqb (Nat.eqb (r_count r) 0) (is_run_started x)) then Stop ImpossibleOrder
  else match apply r x with Next r' => Next (advance x r') | Stop e => Stop e end.

Lemma step_as_body : forall r x, (forall e, x <> Corrupt e) -> step r x = step_body r x.
Proof. intros r x H; destruct x; try reflexivity; exfalso; eapply H; reflexivity. Qed.

Lemma ren_corrupt : forall x e, ren_record x = Corrupt e -> x = Corrupt e.
Proof. intros x e H; destruct x; simpl in H; congruence. Qed.

Lemma step_ren : forall r x, step (ren_recovered r) (ren_record x) = ren_step_result (step r x).
Proof.
  intros r x.
  destruct (match x with Corrupt _ => true | _ => false end) eqn:C.
  - destruct x; try discriminate C; reflexivity.
  - assert (Nc : forall e, x <> Corrupt e) by (intros e E; subst; discriminate).
    assert (Nc' : forall e, ren_record x <> Corrupt e) by (intros e E; apply ren_corrupt in E; exact (Nc e E)).
    rewrite (step_as_body _ _ Nc'), (step_as_body _ _ Nc); unfold step_body.
    change (r_phase (ren_recovered r)) with (ren_phase (r_phase r)).
    change (r_count (ren_recovered r)) with (r_count r).
    rewrite ren_is_terminal, ren_is_run_started, apply_ren.
    destruct (is_terminal (r_phase r)); [reflexivity|].
    destruct (negb _); [reflexivity|].
    destruct (apply r x); simpl; [|reflexivity].
    unfold advance, ren_recovered; simpl; rewrite ren_is_checkpoint; reflexivity.
Qed.

Definition ren_recovery (x : recovery) : recovery :=
  match x with Recovered r => Recovered (ren_recovered r) | e => e end.

Lemma fold_ren : forall l r, fold_log (ren_recovered r) (ren_log l) = ren_recovery (fold_log r l).
Proof.
  induction l as [|x l IH]; intros r; simpl; [reflexivity|].
  rewrite step_ren; destruct (step r x); simpl; [apply IH | reflexivity].
Qed.

(** From the empty state, only RUN_STARTED is accepted, and it ignores the (empty) run id. *)
Lemma step_initial_ren : forall x, step initial x = step (ren_recovered initial) x.
Proof. destruct x; reflexivity. Qed.

Theorem recover_ren : forall l, l <> [] -> recover (ren_log l) = ren_recovery (recover l).
Proof.
  intros [|x l] Hl; [contradiction|]; unfold recover; simpl.
  rewrite step_initial_ren, step_ren; destruct (step initial x); simpl; [apply fold_ren | reflexivity].
Qed.

(** ** The decision commutes with renaming, given a handler that does not look at run ids *)

Lemma ren_head_state : forall l, head_state (ren_log l) = head_state l.
Proof.
  intros l; unfold head_state, ren_log.
  assert (G : forall acc, fold_left ckpt_state (map ren_record l) acc = fold_left ckpt_state l acc).
  { induction l as [|x l IH]; intros acc; simpl; [reflexivity|]; rewrite IH; destruct x; reflexivity. }
  apply G.
Qed.

Lemma ren_nth : forall l s, nth_error (ren_log l) s = option_map ren_record (nth_error l s).
Proof. intros l s; unfold ren_log; apply nth_error_map. Qed.

Lemma ren_result_at : forall l s, result_at (ren_log l) s = result_at l s.
Proof. intros l s; unfold result_at; rewrite ren_nth; destruct (nth_error l s) as [[]|]; reflexivity. Qed.

Lemma ren_claim_value_at : forall l s, claim_value_at (ren_log l) s = claim_value_at l s.
Proof. intros l s; unfold claim_value_at; rewrite ren_nth; destruct (nth_error l s) as [[]|]; reflexivity. Qed.

Definition ren_decision (d : decision) : decision :=
  match d with
  | DWrite recs => DWrite (ren_log recs)
  | DInvoke k recs => DInvoke (ren_key k) (ren_log recs)
  | d => d
  end.

Lemma ren_finish_node : forall wf r n st, finish_node wf (ren_recovered r) n st = ren_decision (finish_node wf r n st).
Proof.
  intros wf r n st; unfold finish_node; simpl.
  destruct (wf_state_ok wf st); [|reflexivity].
  destruct (wf_route wf n st); [|reflexivity].
  destruct (in_table (r_table r) n0); reflexivity.
Qed.

Lemma ren_action : forall r, action_of (ren_recovered r) =
  match action_of r with
  | AInvokeEffect n k s na => AInvokeEffect n (ren_key k) s na
  | AAwaitAttempt n k si t s => AAwaitAttempt n (ren_key k) si t s
  | AFinishEffect n k s => AFinishEffect n (ren_key k) s
  | a => a
  end.
Proof. intros r; unfold action_of; simpl; destruct (r_phase r); simpl; try reflexivity.
       destruct (kind_of (r_table r) n) as [[]|]; reflexivity. Qed.

Theorem decide_ren : forall wf h l,
  (forall k, h (ren_key k) = h k) -> l <> [] ->
  decide wf h (ren_log l) = ren_decision (decide wf h l).
Proof.
  intros wf h l Hh Hl; unfold decide; rewrite (recover_ren l Hl).
  destruct (recover l) as [r|]; simpl; [|reflexivity].
  rewrite ren_action, ren_head_state.
  destruct (action_of r); simpl; try reflexivity.
  - destruct (wf_fails wf n (head_state l)); [reflexivity | apply ren_finish_node].
  - destruct (r_phase r); simpl; try reflexivity; rewrite Hh; reflexivity.
  - rewrite ren_result_at; apply ren_finish_node.
  - rewrite ren_claim_value_at; apply ren_finish_node.
Qed.

Lemma drive_step_ren : forall wf h rv l,
  (forall k, h (ren_key k) = h k) -> l <> [] ->
  drive_step wf h rv (ren_log l) = ren_log (drive_step wf h rv l).
Proof.
  intros wf h rv l Hh Hl; unfold drive_step; rewrite (decide_ren wf h l Hh Hl).
  destruct (decide wf h l); simpl; unfold ren_log; rewrite ?map_app; try reflexivity.
  destruct (rv id) as [v|]; [|reflexivity].
  destruct (wf_value_ok wf n v); [rewrite map_app|]; reflexivity.
Qed.

Lemma drive_step_nonempty : forall wf h rv l, l <> [] -> drive_step wf h rv l <> [].
Proof.
  intros wf h rv l Hl; unfold drive_step.
  destruct (decide wf h l); try (intros H; apply app_eq_nil in H; destruct H; contradiction); try exact Hl.
  destruct (rv id); [destruct (wf_value_ok wf n v)|]; try exact Hl.
  intros H; apply app_eq_nil in H; destruct H; contradiction.
Qed.

Theorem drive_ren : forall wf h rv m l,
  (forall k, h (ren_key k) = h k) -> l <> [] ->
  iterate (drive_step wf h rv) m (ren_log l) = ren_log (iterate (drive_step wf h rv) m l).
Proof.
  intros wf h rv m l Hh Hl; induction m as [|m IH]; simpl; [reflexivity|].
  rewrite IH; apply drive_step_ren; [exact Hh|].
  clear IH; induction m as [|m IH]; simpl; [exact Hl | apply drive_step_nonempty; exact IH].
Qed.

End Rename.

(** ** Fork determinism *)

(** A record mentions run id [t] (as a run, a source, or the run part of a key). *)
Definition mentions (t : run_id) (x : record) : bool :=
  match x with
  | RunStarted rid _ _ _ => Nat.eqb rid t
  | EffectIntent _ k => Nat.eqb (key_run k) t
  | EffectDone _ k _ | EffectAttempt _ k _ | EffectReleased _ k _ | EffectDoneFenced _ k _ =>
      Nat.eqb (key_run k) t
  | Forked src _ rid _ => Nat.eqb src t || Nat.eqb rid t
  | _ => false
  end.

Lemma swap_other : forall a b x, x <> a -> x <> b -> swap a b x = x.
Proof.
  intros a b x Ha Hb; unfold swap; apply Nat.eqb_neq in Ha; apply Nat.eqb_neq in Hb; rewrite Ha, Hb; reflexivity.
Qed.

Lemma ren_fresh_record : forall a b x, mentions a x = false -> mentions b x = false -> ren_record a b x = x.
Proof.
  intros a b x Ha Hb; destruct x; simpl in *; try reflexivity.
  - apply Nat.eqb_neq in Ha; apply Nat.eqb_neq in Hb; rewrite swap_other by congruence; reflexivity.
  - apply Nat.eqb_neq in Ha; apply Nat.eqb_neq in Hb; unfold ren_key; rewrite swap_other by congruence.
    destruct k; reflexivity.
  - apply Nat.eqb_neq in Ha; apply Nat.eqb_neq in Hb; unfold ren_key; rewrite swap_other by congruence.
    destruct k; reflexivity.
  - apply Nat.eqb_neq in Ha; apply Nat.eqb_neq in Hb; unfold ren_key; rewrite swap_other by congruence.
    destruct k; reflexivity.
  - apply Nat.eqb_neq in Ha; apply Nat.eqb_neq in Hb; unfold ren_key; rewrite swap_other by congruence.
    destruct k; reflexivity.
  - apply Nat.eqb_neq in Ha; apply Nat.eqb_neq in Hb; unfold ren_key; rewrite swap_other by congruence.
    destruct k; reflexivity.
  - apply orb_false_iff in Ha; apply orb_false_iff in Hb; destruct Ha as [Ha1 Ha2]; destruct Hb as [Hb1 Hb2].
    apply Nat.eqb_neq in Ha1; apply Nat.eqb_neq in Ha2; apply Nat.eqb_neq in Hb1; apply Nat.eqb_neq in Hb2.
    rewrite (swap_other a b source), (swap_other a b run) by congruence; reflexivity.
Qed.

Lemma ren_log_fresh : forall a b l,
  (forall x, In x l -> mentions a x = false /\ mentions b x = false) -> ren_log a b l = l.
Proof.
  intros a b l H; unfold ren_log; induction l as [|x l IH]; simpl; [reflexivity|].
  destruct (H x (or_introl eq_refl)) as [Ha Hb]; rewrite ren_fresh_record by assumption.
  rewrite IH; [reflexivity | intros y Hy; apply H; right; exact Hy].
Qed.

Lemma swap_a : forall a b, swap a b a = b.
Proof. intros a b; unfold swap; rewrite Nat.eqb_refl; reflexivity. Qed.

(** The second fork's log is the first's with the two new run ids swapped. *)
Lemma fork_logs_renamed : forall P src n t1 t2 intent,
  src <> t1 -> src <> t2 ->
  (forall x, In x P -> mentions t1 x = false /\ mentions t2 x = false) ->
  P ++ [Forked src n t2 intent] = ren_log t1 t2 (P ++ [Forked src n t1 intent]).
Proof.
  intros P src n t1 t2 intent H1 H2 F; unfold ren_log; rewrite map_app; fold (ren_log t1 t2 P).
  rewrite ren_log_fresh by exact F; simpl; rewrite swap_a, swap_other by congruence; reflexivity.
Qed.

(** Two forks of one checkpoint, driven with the same inputs (the same resume values, and a
    handler whose result does not depend on the run part of the key), produce identical logs
    apart from their run ids, at every step. *)
Theorem fork_determinism : forall wf h rv P src n t1 t2 intent m,
  (forall k, h (ren_key t1 t2 k) = h k) -> src <> t1 -> src <> t2 ->
  (forall x, In x P -> mentions t1 x = false /\ mentions t2 x = false) ->
  iterate (drive_step wf h rv) m (P ++ [Forked src n t2 intent]) =
  ren_log t1 t2 (iterate (drive_step wf h rv) m (P ++ [Forked src n t1 intent])).
Proof.
  intros wf h rv P src n t1 t2 intent m Hh H1 H2 F.
  rewrite (fork_logs_renamed P src n t1 t2 intent H1 H2 F).
  apply drive_ren; [exact Hh|].
  intros E; apply app_eq_nil in E; destruct E as [_ E]; discriminate.
Qed.

(** The same through the store: fork the checkpoint twice; the source is unchanged, and the two
    new runs, driven alike, stay equal up to their ids. *)
Theorem two_forks_of_one_checkpoint : forall wf h rv s src n t1 t2 intent s1 s2 r m,
  (forall k, h (ren_key t1 t2 k) = h k) -> src <> t1 -> src <> t2 -> t1 <> t2 ->
  (forall x, In x (s src) -> mentions t1 x = false /\ mentions t2 x = false) ->
  recover (s src) = Recovered r ->
  fork_run s src n t1 intent = Some s1 -> fork_run s1 src n t2 intent = Some s2 ->
  s2 src = s src /\ s2 t1 = s1 t1 /\
  iterate (drive_step wf h rv) m (s2 t2) = ren_log t1 t2 (iterate (drive_step wf h rv) m (s1 t1)).
Proof.
  intros wf h rv s src n t1 t2 intent s1 s2 r m Hh H1 H2 H12 F R F1 F2.
  destruct (fork_run_sound _ _ _ _ _ _ _ R F1) as [S1 [O1 [T1 _]]].
  rewrite <- S1 in R.
  destruct (fork_run_sound _ _ _ _ _ _ _ R F2) as [S2 [O2 [T2 _]]].
  rewrite S1 in S2, T2.
  split; [exact S2|]; split; [apply O2; exact H12|].
  rewrite T1, T2; apply fork_determinism; auto.
  intros x Hx; apply F; eapply in_firstn; exact Hx.
Qed.

(** ** After the fork point: inherited effects are never re-run; new effects get new keys *)

Lemma step_run_kept : forall r x r', step r x = Next r' -> is_run_started x = false ->
  (forall a b c d, x <> Forked a b c d) -> r_run r' = r_run r.
Proof.
  intros r x r' S Hs Hf; apply step_next in S; destruct S as [_ [_ [r0 [A ->]]]].
  destruct x; try discriminate Hs; try (exfalso; eapply Hf; reflexivity); simpl in A;
  repeat match type of A with
         | context [if ?c then _ else _] => destruct c; try discriminate
         | context [match r_phase r with _ => _ end] => destruct (r_phase r); try discriminate
         end; inversion A; reflexivity.
Qed.

Lemma decided_write_kind : forall wf h l r x, recover l = Recovered r -> decide wf h l = DWrite [x] ->
  is_run_started x = false /\ (forall a b c d, x <> Forked a b c d).
Proof.
  intros wf h l r x H D; unfold decide in D; rewrite H in D.
  assert (Fn : forall n st, finish_node wf r n st = DWrite [x] ->
                 is_run_started x = false /\ (forall a b c d, x <> Forked a b c d)).
  { intros n st F; destruct (finish_node_shape _ _ _ _ _ F) as [E|[? [E _]]]; [discriminate|].
    injection E as ->; split; [reflexivity | intros; discriminate]. }
  destruct (action_of r); try discriminate D; try (destruct (r_phase r); discriminate D).
  - destruct (wf_fails wf n (head_state l)); [injection D as <-; split; [reflexivity | intros; discriminate] | exact (Fn _ _ D)].
  - injection D as <-; split; [reflexivity | intros; discriminate].
  - exact (Fn _ _ D).
  - injection D as <-; split; [reflexivity | intros; discriminate].
  - exact (Fn _ _ D).
  - injection D as <-; split; [reflexivity | intros; discriminate].
Qed.

Lemma decide_wait : forall wf h l r n id, recover l = Recovered r -> decide wf h l = DWait n id ->
  exists s, r_phase r = PParked n id s.
Proof.
  intros wf h l r n id H D; unfold decide in D; rewrite H in D; pose proof (action_phase r) as A.
  assert (Fn : forall m st, finish_node wf r m st <> DWait n id).
  { intros m st F; destruct (finish_node_shape _ _ _ _ _ F) as [E|[? [E _]]]; discriminate. }
  destruct (action_of r); try discriminate D; try (destruct (r_phase r); discriminate D).
  - destruct (wf_fails wf n0 (head_state l)); [discriminate D | exfalso; exact (Fn _ _ D)].
  - exfalso; exact (Fn _ _ D).
  - injection D as <- <-; eauto.
  - exfalso; exact (Fn _ _ D).
Qed.

(** One uninterrupted step from a valid log: a valid log, one record longer or the same; the
    record is never a start or a fork, an intent carries the key derived from the log, and the
    key discipline of [keys_ok] is kept. *)
Lemma drive_step_shape : forall wf h rv l r,
  recover l = Recovered r ->
  drive_step wf h rv l = l \/
  exists x r', drive_step wf h rv l = l ++ [x] /\ step r x = Next r' /\ recover (l ++ [x]) = Recovered r' /\
               is_run_started x = false /\ (forall a b c d, x <> Forked a b c d) /\
               (forall n k, x = EffectIntent n k -> k = derive_key r n).
Proof.
  intros wf h rv l r H; unfold drive_step.
  destruct (decide wf h l) as [recs|k recs|n id|n|] eqn:D; [| | | left; reflexivity | left; reflexivity].
  - destruct (decided_record_accepted wf h l r recs H (or_introl D)) as [x [r' [-> [S R]]]].
    destruct (decided_record_shape wf h l r x H) as [[_ [_ [_ Ki]]] _]; [exact D|].
    destruct (decided_write_kind wf h l r x H D) as [Ns Nf].
    right; exists x, r'; repeat split; auto.
  - destruct (decided_record_accepted wf h l r recs H (or_intror (ex_intro _ k D))) as [x [r' [-> [S R]]]].
    destruct (decided_record_shape wf h l r x H) as [_ Si].
    destruct (Si k D) as [n [-> _]].
    right; exists (EffectDone n k (h k)), r'; repeat split; auto; intros; discriminate.
  - destruct (rv id) as [v|]; [|left; reflexivity].
    destruct (wf_value_ok wf n v); [|left; reflexivity].
    destruct (decide_wait wf h l r n id H D) as [ps P].
    assert (A : admit l (RResume id) = Accept (length l)) by (apply resume_accepted_iff; exists r, n, ps; auto).
    destruct (accepted_claim_recovers l id (length l) v A) as [r' [R _]].
    destruct (recover_snoc_next l _ r' R) as [r0 [H0 S]]; rewrite H in H0; injection H0 as <-.
    right; exists (ResumeClaimed id v), r'; repeat split; auto; intros; discriminate.
Qed.

Lemma keys_ok_snoc_intro : forall l x r,
  keys_ok l -> recover l = Recovered r -> (forall n k, x = EffectIntent n k -> k = derive_key r n) ->
  keys_ok (l ++ [x]).
Proof.
  intros l x r K H Kx j n k E.
  destruct (Nat.lt_ge_cases j (length l)) as [Lt|Ge].
  - rewrite nth_error_app1 in E by exact Lt; rewrite firstn_app_le by lia; apply K; exact E.
  - rewrite nth_error_app2 in E by exact Ge.
    assert (Ej : j = length l) by (destruct (j - length l) eqn:Z; simpl in E; [lia | destruct n0; discriminate]).
    subst j; rewrite Nat.sub_diag in E; simpl in E; injection E as E.
    rewrite firstn_app_le, firstn_all by lia; exists r; split; [exact H | apply Kx; exact E].
Qed.

(** Every log of the forked run's uninterrupted continuation: still valid, still under the new
    run id, still keeping the key discipline. *)
Lemma forked_drive_inv : forall wf h rv F rf t m,
  recover F = Recovered rf -> r_run rf = t -> keys_ok F ->
  exists ext r, iterate (drive_step wf h rv) m F = F ++ ext /\
    recover (F ++ ext) = Recovered r /\ r_run r = t /\ keys_ok (F ++ ext) /\
    (forall j n k, length F <= j -> nth_error (F ++ ext) j = Some (EffectIntent n k) -> key_run k = t).
Proof.
  intros wf h rv F rf t m HF Ht KF; induction m as [|m IH].
  - exists [], rf; rewrite app_nil_r; simpl; repeat split; auto.
    intros j n k L E; assert (j < length F) by (apply nth_error_Some; congruence); lia.
  - destruct IH as [ext [r [Ei [R [Rt [K Kt]]]]]].
    simpl; rewrite Ei.
    destruct (drive_step_shape wf h rv (F ++ ext) r R) as [Same | [x [r' [Grow [S [R' [Ns [Nf Kx]]]]]]]].
    + rewrite Same; exists ext, r; auto.
    + rewrite Grow; exists (ext ++ [x]), r'; rewrite app_assoc; repeat split; auto.
      * rewrite (step_run_kept r x r' S Ns Nf); exact Rt.
      * eapply keys_ok_snoc_intro; eauto.
      * intros j n k L E.
        destruct (Nat.lt_ge_cases j (length (F ++ ext))) as [Lt|Ge].
        -- rewrite nth_error_app1 in E by exact Lt; eapply Kt; eauto.
        -- rewrite nth_error_app2 in E by exact Ge.
           destruct (j - length (F ++ ext)) as [|i]; simpl in E; [|destruct i; discriminate].
           injection E as E; rewrite (Kx n k E); unfold derive_key; simpl; exact Rt.
Qed.

(** After a fork, the new run's continuation (a) never invokes a handler, nor begins an
    instance, whose completion its log holds (inherited completions included), and (b) keys
    every effect it begins with the new run's id: effects after the fork are new by intent. *)
Theorem forked_run_effects : forall wf h rv s src n t intent s' r m,
  recover (s src) = Recovered r -> keys_ok (s src) -> fork_run s src n t intent = Some s' ->
  let l := iterate (drive_step wf h rv) m (s' t) in
  (forall k recs, decide wf h l = DInvoke k recs -> forall nd res, ~ In (EffectDone nd k res) l) /\
  (forall nd k, decide wf h l = DWrite [EffectIntent nd k] -> forall nd' res, ~ In (EffectDone nd' k res) l) /\
  (forall j nd k, length (s' t) <= j -> nth_error l j = Some (EffectIntent nd k) -> key_run k = t).
Proof.
  intros wf h rv s src n t intent s' r m H K F l.
  destruct (fork_run_sound _ _ _ _ _ _ _ H F) as [_ [_ [Tl [_ [rp [rf [_ [Hf [_ Rt]]]]]]]]].
  assert (KF : keys_ok (s' t)).
  { rewrite Tl; intros j nd k E.
    destruct (Nat.lt_ge_cases j (length (firstn (S n) (s src)))) as [Lt|Ge].
    - rewrite nth_error_app1 in E by exact Lt; rewrite firstn_app_le by lia.
      apply (keys_ok_prefix _ (S n) K); exact E.
    - rewrite nth_error_app2 in E by exact Ge.
      destruct (j - length (firstn (S n) (s src))) as [|i]; simpl in E; [discriminate | destruct i; discriminate]. }
  destruct (forked_drive_inv wf h rv (s' t) rf t m Hf Rt KF) as [ext [r2 [Ei [R2 [_ [K2 Kt]]]]]].
  unfold l; rewrite Ei.
  destruct (effect_decision_never_after_done wf h (s' t ++ ext) r2 K2 R2) as [A B].
  split; [exact A | split; [exact B | exact Kt]].
Qed.
