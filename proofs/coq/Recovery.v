(** * Recovery: a fold of the records through a phase (docs/core-api.md, "Recovery as a state
    machine over records" and "Transitions"). Mirrors ts-shell/src/core/reference-core.ts:
    framing errors first, then "nothing follows a terminal record", then "s = 0 must be
    RUN_STARTED" (for every kind), then the kind-specific rule. Offsets, byte lengths, torn tails
    and the encoding of the result are not modelled. *)

From Coq Require Import List Arith Bool Lia.
Import ListNotations.
From Remit Require Import Log.

Inductive phase :=
  | PEmpty
  | PAt (n : node)
  | PIntent (n : node) (k : key) (seq : nat)
  | PAttempted (n : node) (k : key) (intent_seq : nat) (attempt : nat) (seq : nat)
      (** attempt [attempt] of the instance whose intent is at [intent_seq], recorded at [seq]
          without an outcome: its owner may be calling the handler *)
  | PReleased (n : node) (k : key) (intent_seq : nat) (attempt : nat)
      (** attempt [attempt] was given up: no attempt is live *)
  | PDone (n : node) (k : key) (seq : nat)
  | PParked (n : node) (id : iid) (seq : nat)
  | PClaimed (n : node) (id : iid) (seq : nat)
  | PEnded
  | PCompleted
  | PFailed.

Inductive status := SEmpty | SRunning | SParked | SCompleted | SFailed.

Definition status_of (p : phase) : status :=
  match p with
  | PEmpty => SEmpty
  | PParked _ _ _ => SParked
  | PCompleted => SCompleted
  | PFailed => SFailed
  | _ => SRunning
  end.

Inductive effect_status := Fresh | IntentOnly | Done.

Record fork_link := mk_link {
  link_source : run_id; link_source_seq : nat; link_run : run_id; link_fork_seq : nat;
  link_intent : value }.

Record recovered := mk_recovered {
  r_phase : phase;
  r_count : nat;                              (** records folded: the next seq *)
  r_table : list (node * node_kind);
  r_run : run_id;                             (** from RUN_STARTED, replaced by each FORKED *)
  r_checkpoint : option nat;                  (** latest RUN_STARTED or NODE_COMPLETED *)
  r_snapshot : option nat;                    (** latest of those holding a snapshot *)
  r_prev_checkpoint : bool;                   (** the record at count - 1 is a checkpoint *)
  r_effects : node -> effect_status * nat;    (** latest instance's status, completions *)
  r_parked : list iid;
  r_claimed : list (iid * nat);               (** claimed ids with the claim's seq *)
  r_lineage : list fork_link;
  r_failure : option (option node * value * value) }.

Inductive error_code :=
  | EFrame (e : frame_error) | ImpossibleOrder | UnknownNode | DuplicateInterrupt | BadNodeTable.

Inductive step_result := Next (r : recovered) | Stop (e : error_code).

Inductive recovery := Recovered (r : recovered) | RecoveryError (e : error_code) (seq : nat).

(** ** Field updates *)

Definition set_phase (p : phase) (r : recovered) : recovered :=
  mk_recovered p (r_count r) (r_table r) (r_run r) (r_checkpoint r) (r_snapshot r)
    (r_prev_checkpoint r) (r_effects r) (r_parked r) (r_claimed r) (r_lineage r) (r_failure r).

Definition set_checkpoint (c s : option nat) (r : recovered) : recovered :=
  mk_recovered (r_phase r) (r_count r) (r_table r) (r_run r) c s
    (r_prev_checkpoint r) (r_effects r) (r_parked r) (r_claimed r) (r_lineage r) (r_failure r).

Definition set_effect (f : node -> effect_status * nat) (n : node) (e : effect_status * nat) :=
  fun m => if Nat.eqb m n then e else f m.

Definition set_effects (f : node -> effect_status * nat) (r : recovered) : recovered :=
  mk_recovered (r_phase r) (r_count r) (r_table r) (r_run r) (r_checkpoint r) (r_snapshot r)
    (r_prev_checkpoint r) f (r_parked r) (r_claimed r) (r_lineage r) (r_failure r).

Definition add_parked (id : iid) (r : recovered) : recovered :=
  mk_recovered (r_phase r) (r_count r) (r_table r) (r_run r) (r_checkpoint r) (r_snapshot r)
    (r_prev_checkpoint r) (r_effects r) (id :: r_parked r) (r_claimed r) (r_lineage r) (r_failure r).

Definition add_claimed (id : iid) (s : nat) (r : recovered) : recovered :=
  mk_recovered (r_phase r) (r_count r) (r_table r) (r_run r) (r_checkpoint r) (r_snapshot r)
    (r_prev_checkpoint r) (r_effects r) (r_parked r) ((id, s) :: r_claimed r) (r_lineage r) (r_failure r).

Definition set_fork (rid : run_id) (link : fork_link) (r : recovered) : recovered :=
  mk_recovered (r_phase r) (r_count r) (r_table r) rid (r_checkpoint r) (r_snapshot r)
    (r_prev_checkpoint r) (r_effects r) (r_parked r) (r_claimed r) (r_lineage r ++ [link]) (r_failure r).

Definition set_failure (f : option node * value * value) (r : recovered) : recovered :=
  mk_recovered PFailed (r_count r) (r_table r) (r_run r) (r_checkpoint r) (r_snapshot r)
    (r_prev_checkpoint r) (r_effects r) (r_parked r) (r_claimed r) (r_lineage r) (Some f).

(** After a record is accepted: one more record; remember whether it was a checkpoint. *)
Definition advance (x : record) (r : recovered) : recovered :=
  mk_recovered (r_phase r) (S (r_count r)) (r_table r) (r_run r) (r_checkpoint r) (r_snapshot r)
    (is_checkpoint x) (r_effects r) (r_parked r) (r_claimed r) (r_lineage r) (r_failure r).

Definition initial : recovered :=
  mk_recovered PEmpty 0 [] 0 None None false (fun _ => (Fresh, 0)) [] [] [] None.

(** ** The transition rules *)

Definition is_terminal (p : phase) : bool :=
  match p with PCompleted | PFailed => true | _ => false end.

(** The phase is [AT(n)] with [n] of kind [k]. *)
Definition at_kind (p : phase) (t : list (node * node_kind)) (n : node) (k : node_kind) : bool :=
  match p with PAt m => Nat.eqb m n && kind_is t n k | _ => false end.

(** NODE_COMPLETED(n) is allowed: at pure [n], or [n]'s effect is done, or its claim is in. *)
Definition completes (p : phase) (t : list (node * node_kind)) (n : node) : bool :=
  match p with
  | PAt m => Nat.eqb m n && kind_is t n Pure
  | PDone m _ _ | PClaimed m _ _ => Nat.eqb m n
  | _ => false
  end.

Definition next_ok (t : list (node * node_kind)) (next : option node) : bool :=
  match next with Some m => in_table t m | None => true end.

Definition next_phase (next : option node) : phase :=
  match next with Some m => PAt m | None => PEnded end.

(** Step 3 of "Transitions": the kind-specific rule, at seq [r_count r]. *)
Definition apply (r : recovered) (x : record) : step_result :=
  let t := r_table r in
  let s := r_count r in
  match x with
  | RunStarted rid tbl start st =>
      if negb (table_ok tbl) then Stop BadNodeTable
      else if negb (in_table tbl start) then Stop UnknownNode
      else Next (mk_recovered (PAt start) s tbl rid (Some s) (Some s) (r_prev_checkpoint r)
                   (fun _ => (Fresh, 0)) [] [] [] None)
  | NodeCompleted n next form st =>
      if negb (in_table t n) then Stop UnknownNode
      else if negb (next_ok t next) then Stop UnknownNode
      else if negb (completes (r_phase r) t n) then Stop ImpossibleOrder
      else Next (set_checkpoint (Some s) (match form with Snapshot => Some s | Delta => r_snapshot r end)
                   (set_phase (next_phase next) r))
  | EffectIntent n k =>
      if negb (in_table t n) then Stop UnknownNode
      else if negb (at_kind (r_phase r) t n Effect) then Stop ImpossibleOrder
      else Next (set_effects (set_effect (r_effects r) n (IntentOnly, snd (r_effects r n)))
                   (set_phase (PIntent n k s) r))
  | EffectDone n k res =>
      if negb (in_table t n) then Stop UnknownNode
      else match r_phase r with
           | PIntent m k' _ =>
               if Nat.eqb m n && key_eqb k' k
               then Next (set_effects (set_effect (r_effects r) n (Done, S (snd (r_effects r n))))
                            (set_phase (PDone n k s) r))
               else Stop ImpossibleOrder
           | _ => Stop ImpossibleOrder
           end
  | EffectAttempt n k a =>
      (** attempt 1 after the intent; a + 1 after attempt a (a takeover, or a retry after a
          release); always the intent's node and key *)
      if negb (in_table t n) then Stop UnknownNode
      else match r_phase r with
           | PIntent m k' si =>
               if Nat.eqb m n && key_eqb k' k && Nat.eqb a 1
               then Next (set_phase (PAttempted n k si a s) r) else Stop ImpossibleOrder
           | PAttempted m k' si a' _ | PReleased m k' si a' =>
               if Nat.eqb m n && key_eqb k' k && Nat.eqb a (S a')
               then Next (set_phase (PAttempted n k si a s) r) else Stop ImpossibleOrder
           | _ => Stop ImpossibleOrder
           end
  | EffectReleased n k a =>
      (** only the latest attempt, while it has no outcome *)
      if negb (in_table t n) then Stop UnknownNode
      else match r_phase r with
           | PAttempted m k' si a' _ =>
               if Nat.eqb m n && key_eqb k' k && Nat.eqb a a'
               then Next (set_phase (PReleased n k si a) r) else Stop ImpossibleOrder
           | _ => Stop ImpossibleOrder
           end
  | EffectDoneFenced n k res =>
      (** format 2: the outcome of the latest attempt (the fence) *)
      if negb (in_table t n) then Stop UnknownNode
      else match r_phase r with
           | PAttempted m k' _ _ _ =>
               if Nat.eqb m n && key_eqb k' k
               then Next (set_effects (set_effect (r_effects r) n (Done, S (snd (r_effects r n))))
                            (set_phase (PDone n k s) r))
               else Stop ImpossibleOrder
           | _ => Stop ImpossibleOrder
           end
  | InterruptParked n id =>
      if negb (in_table t n) then Stop UnknownNode
      else if negb (at_kind (r_phase r) t n Interrupt) then Stop ImpossibleOrder
      else if existsb (Nat.eqb id) (r_parked r) then Stop DuplicateInterrupt
      else Next (add_parked id (set_phase (PParked n id s) r))
  | ResumeClaimed id v =>
      match r_phase r with
      | PParked n id' _ =>
          if Nat.eqb id' id then Next (add_claimed id s (set_phase (PClaimed n id s) r))
          else Stop ImpossibleOrder
      | _ => Stop ImpossibleOrder
      end
  | Forked src ss rid intent =>
      if r_prev_checkpoint r && Nat.eqb ss (s - 1)
      then Next (set_fork rid (mk_link src ss rid s intent) r)
      else Stop ImpossibleOrder
  | RunCompleted =>
      match r_phase r with PEnded => Next (set_phase PCompleted r) | _ => Stop ImpossibleOrder end
  | RunFailed n c m =>
      match r_phase r with PEmpty => Stop ImpossibleOrder | _ => Next (set_failure (n, c, m) r) end
  | Corrupt e => Stop (EFrame e)
  end.

(** One record: framing, terminal phase, the seq-0 rule, then [apply]. *)
Definition step (r : recovered) (x : record) : step_result :=
  match x with
  | Corrupt e => Stop (EFrame e)
  | _ =>
      if is_terminal (r_phase r) then Stop ImpossibleOrder
      else if negb (Bool.eqb (Nat.eqb (r_count r) 0) (is_run_started x)) then Stop ImpossibleOrder
      else match apply r x with
           | Next r' => Next (advance x r')
           | Stop e => Stop e
           end
  end.

Fixpoint fold_log (r : recovered) (l : log) : recovery :=
  match l with
  | [] => Recovered r
  | x :: rest =>
      match step r x with
      | Next r' => fold_log r' rest
      | Stop e => RecoveryError e (r_count r)
      end
  end.

(** recover(log): total by construction (a structurally recursive function). *)
Definition recover (l : log) : recovery := fold_log initial l.

(** ** Next action (the table of docs/core-api.md) *)

Inductive action :=
  | ANone
  | ARunPure (n : node)
  | ABeginEffect (n : node)
  | AInvokeEffect (n : node) (k : key) (intent_seq : nat) (next_attempt : nat)
      (** no attempt is live: claim attempt [next_attempt] by a conditional append of
          EFFECT_ATTEMPT and call the handler only if that append committed *)
  | AAwaitAttempt (n : node) (k : key) (intent_seq : nat) (attempt : nat) (attempt_seq : nat)
      (** attempt [attempt] is recorded without an outcome: its owner may be calling the handler *)
  | AFinishEffect (n : node) (k : key) (done_seq : nat)
  | APark (n : node)
  | AAwaitResume (n : node) (id : iid) (parked_seq : nat)
  | AFinishInterrupt (n : node) (id : iid) (claim_seq : nat)
  | AFinishRun.

Definition action_of (r : recovered) : action :=
  match r_phase r with
  | PEmpty | PCompleted | PFailed => ANone
  | PAt n =>
      match kind_of (r_table r) n with
      | Some Pure => ARunPure n
      | Some Effect => ABeginEffect n
      | Some Interrupt => APark n
      | None => ANone
      end
  | PIntent n k s => AInvokeEffect n k s 1
  | PReleased n k s a => AInvokeEffect n k s (S a)
  | PAttempted n k si a s => AAwaitAttempt n k si a s
  | PDone n k s => AFinishEffect n k s
  | PParked n id s => AAwaitResume n id s
  | PClaimed n id s => AFinishInterrupt n id s
  | PEnded => AFinishRun
  end.

(** ** Basic facts about the fold *)

Lemma step_count : forall r x r', step r x = Next r' -> r_count r' = S (r_count r).
Proof.
  intros r x r' H; unfold step in H.
  destruct x; try discriminate;
    destruct (is_terminal (r_phase r)); try discriminate;
    destruct (negb _); try discriminate;
    destruct (apply r _) eqn:E; inversion H; subst; simpl;
    unfold apply in E; simpl in E;
    repeat match goal with
           | E : context [if ?c then _ else _] |- _ => destruct c; try discriminate
           | E : context [match ?p with _ => _ end] |- _ => destruct p; try discriminate
           end;
    inversion E; subst; reflexivity.
Qed.

Lemma fold_log_app : forall l1 l2 r,
  fold_log r (l1 ++ l2) =
  match fold_log r l1 with Recovered r' => fold_log r' l2 | e => e end.
Proof.
  induction l1 as [|x l1 IH]; intros l2 r; simpl; [reflexivity|].
  destruct (step r x); [apply IH | reflexivity].
Qed.

Lemma fold_log_count : forall l r r', fold_log r l = Recovered r' -> r_count r' = r_count r + length l.
Proof.
  induction l as [|x l IH]; intros r r' H; simpl in H.
  - inversion H; simpl; lia.
  - destruct (step r x) eqn:E; [|discriminate].
    apply IH in H; apply step_count in E; simpl; lia.
Qed.

Lemma recover_count : forall l r, recover l = Recovered r -> r_count r = length l.
Proof. intros l r H; apply fold_log_count in H; simpl in H; exact H. Qed.

(** Recovery after one more record is one more step. *)
Lemma recover_snoc : forall l x,
  recover (l ++ [x]) =
  match recover l with
  | Recovered r => match step r x with Next r' => Recovered r' | Stop e => RecoveryError e (r_count r) end
  | e => e
  end.
Proof.
  intros l x; unfold recover; rewrite fold_log_app.
  destruct (fold_log initial l); simpl; [|reflexivity].
  destruct (step r x); reflexivity.
Qed.

Lemma recover_app : forall l1 l2,
  recover (l1 ++ l2) = match recover l1 with Recovered r => fold_log r l2 | e => e end.
Proof. intros; unfold recover; apply fold_log_app. Qed.

Lemma recover_prefix_ok : forall l1 l2 r,
  recover (l1 ++ l2) = Recovered r -> exists r1, recover l1 = Recovered r1.
Proof.
  intros l1 l2 r H; rewrite recover_app in H.
  destruct (recover l1) eqn:E; [eauto | discriminate].
Qed.

Lemma recover_nil : recover [] = Recovered initial.
Proof. reflexivity. Qed.
