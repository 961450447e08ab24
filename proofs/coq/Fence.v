(** * The invocation fence (log format 2): a handler is called only by the process whose
    conditional append of EFFECT_ATTEMPT committed. Any number of processes, stale reads, crashes
    of attempt owners, takeovers of a crashed owner's attempt (the shell's lease rule: an attempt
    is taken over only once its owner is gone, [f_gone]), releases, completions and any other
    appends the rules accept.

    The strong reading of effect exactly-once: whenever a handler is called, the durable log at
    that moment (the store's whole log, not only the caller's read) ends with the caller's own
    attempt, and the log before it holds no outcome of that effect instance and no attempt whose
    owner may still be calling the handler. StaleReader.v keeps the unfenced protocol's trail: a
    process acting on a stale read calls a handler after its completion is durable. *)

From Coq Require Import List Arith Bool Lia.
Import ListNotations.
From Remit Require Import Log Recovery RecoveryFacts SequencerFacts.

(** No attempt in [p] may be running a handler: [p] is not an attempt whose owner is alive. *)
Definition no_live_attempt (gone : list nat) (p : phase) : Prop :=
  forall n k si a s, p = PAttempted n k si a s -> In s gone.

(** The effect instance [k] of node [n] has no outcome yet: the phase is inside it, before
    EFFECT_DONE. *)
Definition no_outcome (n : node) (k : key) (p : phase) : Prop :=
  (exists si, p = PIntent n k si) \/ (exists si a, p = PReleased n k si a) \/
  (exists si a s, p = PAttempted n k si a s).

Record fworld := mk_fworld {
  f_log : log;
  f_gone : list nat;                     (** seqs of attempts whose owner crashed (lease expired) *)
  f_calls : list (key * log * list nat) }.  (** each handler call: key, durable log and [f_gone] then *)

Definition fcond_append (expected : nat) (x : record) (w : fworld) : option fworld :=
  if Nat.eqb (length (f_log w)) expected then Some (mk_fworld (f_log w ++ [x]) (f_gone w) (f_calls w)) else None.

Definition fcall (k : key) (w : fworld) : fworld :=
  mk_fworld (f_log w) (f_gone w) (f_calls w ++ [(k, f_log w, f_gone w)]).

(** The fenced decision on the log a process read: claim the next attempt when no attempt is
    live (InvokeEffect), or take over an attempt whose owner is gone. *)
Definition claim_of (gone : list nat) (view : log) : option (key * record) :=
  match recover view with
  | Recovered r =>
      match action_of r with
      | AInvokeEffect n k _ na => Some (k, EffectAttempt n k na)
      | AAwaitAttempt n k _ a s => if existsb (Nat.eqb s) gone then Some (k, EffectAttempt n k (S a)) else None
      | _ => None
      end
  | RecoveryError _ _ => None
  end.

Inductive fevent :=
  | FClaim (read : nat)            (** decide on the first [read] records; append the attempt at
                                       [read]; call the handler only if that append committed *)
  | FAppend (read : nat) (x : record)
      (** any other record the rules accept, appended conditionally (intents, outcomes,
          releases, node completions, ...): never an attempt *)
  | FOwnerGone (s : nat).          (** the owner of the attempt at seq [s] crashed *)

Definition fexec (w : fworld) (ev : fevent) : fworld :=
  match ev with
  | FClaim read =>
      match claim_of (f_gone w) (firstn read (f_log w)) with
      | Some (k, x) => match fcond_append read x w with Some w' => fcall k w' | None => w end
      | None => w
      end
  | FAppend read x =>
      match x with
      | EffectAttempt _ _ _ => w
      | _ =>
          match recover (firstn read (f_log w) ++ [x]) with
          | Recovered _ => match fcond_append read x w with Some w' => w' | None => w end
          | RecoveryError _ _ => w
          end
      end
  | FOwnerGone s => mk_fworld (f_log w) (s :: f_gone w) (f_calls w)
  end.

Inductive freach (w0 : fworld) : fworld -> Prop :=
  | freach_start : freach w0 w0
  | freach_step : forall w ev, freach w0 w -> freach w0 (fexec w ev).

(** What each recorded call satisfies. *)
Definition call_ok (c : key * log * list nat) : Prop :=
  let '(k, l, gone) := c in
  exists view r n si a s, l = view ++ [EffectAttempt n k a] /\ recover view = Recovered r /\
    no_live_attempt gone (r_phase r) /\ no_outcome n k (r_phase r) /\
    exists r', recover l = Recovered r' /\ r_phase r' = PAttempted n k si a s /\ s = length view.

Lemma claim_of_ok : forall gone view k x,
  claim_of gone view = Some (k, x) ->
  exists r n a, x = EffectAttempt n k a /\ recover view = Recovered r /\
    no_live_attempt gone (r_phase r) /\ no_outcome n k (r_phase r).
Proof.
  intros gone view k x H; unfold claim_of in H.
  destruct (recover view) as [r|] eqn:R; [|discriminate].
  pose proof (action_phase r) as A.
  destruct (action_of r) eqn:Ea; try discriminate.
  - injection H as <- <-.
    exists r, n, next_attempt; repeat split; auto.
    + intros n' k' si a s P; destruct A as [[A _]|[a' [A _]]]; rewrite A in P; discriminate.
    + destruct A as [[A _]|[a' [A _]]]; [left; eauto | right; left; eauto].
  - destruct (existsb (Nat.eqb attempt_seq) gone) eqn:G; [|discriminate].
    injection H as <- <-.
    exists r, n, (S attempt); repeat split; auto.
    + intros n' k' si a s P; rewrite A in P; injection P as <- <- <- <- <-.
      apply existsb_exists in G; destruct G as [y [Hy Hq]]; apply Nat.eqb_eq in Hq; subst; exact Hy.
    + right; right; eauto.
Qed.

(** An attempt accepted after [view] sets the phase to itself, at seq [length view]. *)
Lemma attempt_recovers : forall view r n k a r',
  recover view = Recovered r -> recover (view ++ [EffectAttempt n k a]) = Recovered r' ->
  exists si, r_phase r' = PAttempted n k si a (length view).
Proof.
  intros view r n k a r' H H'.
  destruct (recover_snoc_next view _ r' H') as [r0 [H0 S]].
  rewrite H in H0; injection H0 as <-.
  pose proof (step_phase r _ r' S) as P; simpl in P.
  rewrite (recover_count view r H) in P; exact P.
Qed.

Lemma accepted_after : forall view r x r0,
  recover view = Recovered r -> (forall e, x <> Corrupt e) -> is_terminal (r_phase r) = false ->
  r_count r <> 0 -> is_run_started x = false -> apply r x = Next r0 ->
  exists r', recover (view ++ [x]) = Recovered r'.
Proof.
  intros view r x r0 H Hc T Z Rs A; exists (advance x r0); rewrite recover_snoc, H.
  rewrite (step_accepts r x r0 Hc T Z Rs A); reflexivity.
Qed.

(** The attempt the fenced decision claims is one the rules accept. *)
Lemma claimed_attempt_accepted : forall gone view k x,
  claim_of gone view = Some (k, x) -> exists r', recover (view ++ [x]) = Recovered r'.
Proof.
  intros gone view k x H; unfold claim_of in H.
  destruct (recover view) as [r|] eqn:R; [|discriminate].
  pose proof (recover_inv view r R) as I.
  pose proof (action_phase r) as A.
  destruct (action_of r) as [| | |n k0 si na|n k0 si a s| | | | |] eqn:Ea; try discriminate.
  - injection H as <- <-.
    destruct A as [[P ->]|[a [P ->]]].
    + assert (K := inv_intent r I n k0 si P).
      eapply (accepted_after view r); eauto; try (intros e; discriminate); try (rewrite P; reflexivity);
        [apply running_count; auto; rewrite P; discriminate|].
      simpl; rewrite (kind_of_in_table _ _ _ K), P; simpl; rewrite Nat.eqb_refl, key_eqb_refl; reflexivity.
    + assert (K := inv_released r I n k0 si a P).
      eapply (accepted_after view r); eauto; try (intros e; discriminate); try (rewrite P; reflexivity);
        [apply running_count; auto; rewrite P; discriminate|].
      simpl; rewrite (kind_of_in_table _ _ _ K), P; simpl; rewrite Nat.eqb_refl, key_eqb_refl, Nat.eqb_refl; reflexivity.
  - destruct (existsb (Nat.eqb s) gone); [|discriminate].
    injection H as <- <-.
    assert (K := inv_attempted r I n k0 si a s A).
    eapply (accepted_after view r); eauto; try (intros e; discriminate); try (rewrite A; reflexivity);
      [apply running_count; auto; rewrite A; discriminate|].
    simpl; rewrite (kind_of_in_table _ _ _ K), A; simpl; rewrite Nat.eqb_refl, key_eqb_refl, Nat.eqb_refl; reflexivity.
Qed.

Lemma fexec_calls : forall w ev,
  (forall c, In c (f_calls w) -> call_ok c) -> forall c, In c (f_calls (fexec w ev)) -> call_ok c.
Proof.
  intros w ev Ok c Hc; destruct ev as [read|read x|s]; simpl in Hc.
  - destruct (claim_of (f_gone w) (firstn read (f_log w))) as [[k x]|] eqn:C; [|exact (Ok c Hc)].
    unfold fcond_append in Hc; destruct (Nat.eqb (length (f_log w)) read) eqn:L; [|exact (Ok c Hc)].
    simpl in Hc; apply in_app_or in Hc; destruct Hc as [Hc|[Hc|[]]]; [exact (Ok c Hc)|subst c].
    apply Nat.eqb_eq in L; subst read; rewrite firstn_all in C.
    destruct (claim_of_ok _ _ _ _ C) as [r [n [a [-> [R [NL NO]]]]]].
    destruct (claimed_attempt_accepted _ _ _ _ C) as [r' R'].
    destruct (attempt_recovers _ _ _ _ _ _ R R') as [si P'].
    exists (f_log w), r, n, si, a, (length (f_log w)); repeat split; auto.
    exists r'; auto.
  - destruct x; try exact (Ok c Hc);
    (destruct (recover _); [|exact (Ok c Hc)]);
    (unfold fcond_append in Hc; destruct (Nat.eqb _ _); exact (Ok c Hc)).
  - exact (Ok c Hc).
Qed.

(** The strong reading, for every call in every reachable world. *)
Theorem fenced_strong_reading : forall w0 w, f_calls w0 = [] -> freach w0 w ->
  forall k l gone, In (k, l, gone) (f_calls w) ->
  exists view r n si a s, l = view ++ [EffectAttempt n k a] /\ recover view = Recovered r /\
    no_live_attempt gone (r_phase r) /\ no_outcome n k (r_phase r) /\
    exists r', recover l = Recovered r' /\ r_phase r' = PAttempted n k si a s /\ s = length view.
Proof.
  intros w0 w E R; induction R.
  - rewrite E; intros k l gone [].
  - intros k l gone Hc; apply (fexec_calls w ev) in Hc; [exact Hc|].
    intros [[k' l'] g'] Hc'; exact (IHR k' l' g' Hc').
Qed.

(** In particular: no handler is called while the durable log holds that instance's completion
    (the phase before the caller's attempt is inside the instance, never after its EFFECT_DONE),
    nor while an attempt whose owner is alive is the latest. *)
Corollary fenced_no_call_after_done : forall w0 w, f_calls w0 = [] -> freach w0 w ->
  forall k l gone, In (k, l, gone) (f_calls w) ->
  exists view r, recover view = Recovered r /\ (exists x, l = view ++ [x]) /\
    (forall n k' s, r_phase r <> PDone n k' s) /\ no_live_attempt gone (r_phase r).
Proof.
  intros w0 w E R k l gone Hc.
  destruct (fenced_strong_reading w0 w E R k l gone Hc) as [view [r [n [si [a [s [-> [H [NL [NO _]]]]]]]]]].
  exists view, r; repeat split; eauto.
  intros n' k' s' P; destruct NO as [[? P']|[[? [? P']]|[? [? [? P']]]]]; rewrite P in P'; discriminate.
Qed.

(** Two processes that read the same log and both decide to claim: the first append commits and
    that process calls the handler; the second append is refused, so the second process calls
    nothing (whatever order the two reach the store in, one call). *)
Lemma fclaim_commit : forall w k x, claim_of (f_gone w) (f_log w) = Some (k, x) ->
  fexec w (FClaim (length (f_log w))) = mk_fworld (f_log w ++ [x]) (f_gone w) (f_calls w ++ [(k, f_log w ++ [x], f_gone w)]).
Proof. intros w k x H; simpl; rewrite firstn_all, H; unfold fcond_append; rewrite Nat.eqb_refl; reflexivity. Qed.

Lemma fclaim_stale : forall w read, length (f_log w) <> read -> f_calls (fexec w (FClaim read)) = f_calls w.
Proof.
  intros w read H; simpl; destruct (claim_of _ _) as [[k x]|]; [|reflexivity].
  unfold fcond_append; apply Nat.eqb_neq in H; rewrite H; reflexivity.
Qed.

Theorem racing_claims_one_call : forall w,
  f_calls (fexec (fexec w (FClaim (length (f_log w)))) (FClaim (length (f_log w)))) =
  f_calls (fexec w (FClaim (length (f_log w)))).
Proof.
  intros w; destruct (claim_of (f_gone w) (f_log w)) as [[k x]|] eqn:C.
  - rewrite (fclaim_commit w k x C); apply fclaim_stale; simpl; rewrite app_length; simpl; lia.
  - assert (E : fexec w (FClaim (length (f_log w))) = w) by (simpl; rewrite firstn_all, C; reflexivity).
    rewrite E, E; reflexivity.
Qed.

(** Every handler call is witnessed by its own durable EFFECT_ATTEMPT: the calls made so far are
    exactly as many as the attempt records in the log. (The rules then bound one instance's
    attempts: attempt n + 1 follows attempt n, and the fenced decision claims it only after n was
    released or its owner is gone; that bound is not stated as a theorem here.) *)
Definition is_attempt (x : record) : bool := match x with EffectAttempt _ _ _ => true | _ => false end.
Definition attempts_in (l : log) : nat := length (filter is_attempt l).

Lemma attempts_in_snoc : forall l x, attempts_in (l ++ [x]) = attempts_in l + (if is_attempt x then 1 else 0).
Proof. intros l x; unfold attempts_in; rewrite filter_app, app_length; simpl; destruct (is_attempt x); reflexivity. Qed.

Theorem calls_are_attempts : forall w0 w, length (f_calls w0) = attempts_in (f_log w0) -> freach w0 w ->
  length (f_calls w) = attempts_in (f_log w).
Proof.
  intros w0 w E R; induction R as [|w ev R IH]; [exact E|].
  destruct ev as [read|read x|s]; simpl.
  - destruct (claim_of (f_gone w) (firstn read (f_log w))) as [[k x]|] eqn:C; [|exact IH].
    unfold fcond_append; destruct (Nat.eqb (length (f_log w)) read); [|exact IH].
    destruct (claim_of_ok _ _ _ _ C) as [r [n [a [-> _]]]].
    simpl; rewrite app_length, attempts_in_snoc, IH; reflexivity.
  - destruct x; try exact IH;
    (destruct (recover _); [|exact IH]);
    (unfold fcond_append; destruct (Nat.eqb _ _); [simpl; rewrite attempts_in_snoc, IH; simpl; lia | exact IH]).
  - exact IH.
Qed.

(** The calls above are not vacuous: from the empty store, RUN_STARTED and EFFECT_INTENT appended
    and a claim on the whole log reach a world with one recorded call; once that attempt's owner
    is declared gone ([FOwnerGone], which the model lets fire at any time), a claim on the whole
    log takes the attempt over (attempt 2) and records a second call of the same key. *)
Theorem fenced_calls_reachable : exists w, freach (mk_fworld [] [] []) w /\
  exists k l1 l2 g1 g2, f_calls w = [(k, l1, g1); (k, l2, g2)].
Proof.
  exists (fexec (fexec (fexec (fexec (fexec (mk_fworld [] [] [])
            (FAppend 0 (RunStarted 0 [(0, Effect)] 0 0)))
            (FAppend 1 (EffectIntent 0 (mk_key 0 0 1))))
            (FClaim 2)) (FOwnerGone 2)) (FClaim 3)).
  split; [repeat apply freach_step; apply freach_start|].
  vm_compute; do 5 eexists; reflexivity.
Qed.
