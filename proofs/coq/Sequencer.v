(** * The sequencer: a workflow, the decision it takes from the durable log alone, and the
    system it runs in (a store with a conditional append, an effect sink, crashes, stale reads,
    concurrent resumers). *)

From Coq Require Import List Arith Bool Lia.
Import ListNotations.
From Remit Require Import Log Recovery RecoveryFacts Admission.

(** A workflow: nodes, pure step functions, routing, and the two schemas. Node functions do not
    see the run id, so a run's behaviour depends only on its state and inputs. *)
Record workflow := mk_workflow {
  wf_table : list (node * node_kind);
  wf_start : node;
  wf_pure : node -> state -> state;              (** a pure node's next state *)
  wf_effect : node -> state -> value -> state;   (** fold an effect's result into the state *)
  wf_resume : node -> state -> value -> state;   (** fold a resume value into the state *)
  wf_route : node -> state -> option node;       (** the next node; None = the workflow ends *)
  wf_fails : node -> state -> bool;              (** a pure node's code throws TerminalFailure *)
  wf_state_ok : state -> bool;                   (** the state schema *)
  wf_value_ok : node -> value -> bool }.         (** each interrupt's value schema *)

Definition code_terminal : value := 1.

(** The state at the head checkpoint. (The shell rebuilds it from a snapshot and deltas; here
    every checkpoint carries the whole state.) *)
Definition ckpt_state (acc : state) (x : record) : state :=
  match x with RunStarted _ _ _ st | NodeCompleted _ _ _ st => st | _ => acc end.
Definition head_state (l : log) : state := fold_left ckpt_state l 0.

Definition result_at (l : log) (s : nat) : value :=
  match nth_error l s with Some (EffectDone _ _ res) | Some (EffectDoneFenced _ _ res) => res | _ => 0 end.
Definition claim_value_at (l : log) (s : nat) : value :=
  match nth_error l s with Some (ResumeClaimed _ v) => v | _ => 0 end.

Definition fresh_id (parked : list iid) : iid := S (list_max parked).

(** The idempotency key of the effect instance that begins now: (run id, node, seq of its
    EFFECT_INTENT), as the shell's `${runId}:${node}:${seq}`. Stable across re-executions: after a
    crash the handler is re-invoked with the key recorded in the intent. *)
Definition derive_key (r : recovered) (n : node) : key := mk_key (r_run r) n (r_count r).

Inductive decision :=
  | DWrite (recs : log)                (** append these records *)
  | DInvoke (k : key) (recs : log)     (** call the handler with key k, then append *)
  | DWait (n : node) (id : iid)        (** parked: a resume must come from outside *)
  | DReject (n : node)                 (** the node's new state fails the schema, or it routes to
                                           no node: nothing is written; the shell raises
                                           StateInvalidError / RouteInvalidError naming [n] *)
  | DStop.                             (** nothing to do: empty, ended, or an invalid log *)

(** Finishing a node: the state is validated before it can reach the store. *)
Definition finish_node (wf : workflow) (r : recovered) (n : node) (st : state) : decision :=
  if wf_state_ok wf st then
    match wf_route wf n st with
    | Some m => if in_table (r_table r) m then DWrite [NodeCompleted n (Some m) Snapshot st] else DReject n
    | None => DWrite [NodeCompleted n None Snapshot st]
    end
  else DReject n.

(** The sequencer's decision, from the durable log alone (docs/core-api.md next actions), for
    the protocol without the invocation fence: a handler is called straight from the intent and
    its completion is a format-1 EFFECT_DONE. This is the protocol whose concurrent-recoverer
    trail StaleReader.v exhibits; Fence.v models the fenced one (EFFECT_ATTEMPT won by a
    conditional append before the call). *)
Definition decide (wf : workflow) (handler : key -> value) (l : log) : decision :=
  match recover l with
  | RecoveryError _ _ => DStop
  | Recovered r =>
      let st := head_state l in
      match action_of r with
      | ANone => DStop
      | ARunPure n =>
          if wf_fails wf n st then DWrite [RunFailed (Some n) code_terminal 0]
          else finish_node wf r n (wf_pure wf n st)
      | ABeginEffect n => DWrite [EffectIntent n (derive_key r n)]
      | AInvokeEffect n k _ _ =>
          (* the protocol without the fence (format 1): invoke straight from the intent. On a
             log that holds attempts it does nothing; Fence.v models the fenced protocol. *)
          match r_phase r with
          | PIntent _ _ _ => DInvoke k [EffectDone n k (handler k)]
          | _ => DStop
          end
      | AAwaitAttempt _ _ _ _ _ => DStop
      | AFinishEffect n _ s => finish_node wf r n (wf_effect wf n st (result_at l s))
      | APark n => DWrite [InterruptParked n (fresh_id (r_parked r))]
      | AAwaitResume n id _ => DWait n id
      | AFinishInterrupt n _ s => finish_node wf r n (wf_resume wf n st (claim_value_at l s))
      | AFinishRun => DWrite [RunCompleted]
      end
  end.

(** ** The system: one run's log in a store, an effect sink, processes that crash *)

Record world := mk_world {
  w_log : log;
  w_invoked : list key;     (** raw handler invocations, in order *)
  w_applied : list key }.   (** effects applied by the sink, which deduplicates by key *)

Definition sink_call (k : key) (w : world) : world :=
  mk_world (w_log w) (w_invoked w ++ [k])
    (if existsb (key_eqb k) (w_applied w) then w_applied w else w_applied w ++ [k]).

(** The store's only write: append iff the run's next seq is [expected]. *)
Definition cond_append (expected : nat) (recs : log) (w : world) : world :=
  if Nat.eqb (length (w_log w)) expected then mk_world (w_log w ++ recs) (w_invoked w) (w_applied w)
  else w.

(** A process reads the first [read] records (possibly stale by the time it writes). *)
Inductive event :=
  | Step (read : nat)               (** decide, call the handler if told to, append at [read] *)
  | CrashAfterInvoke (read : nat)   (** decide, call the handler, die before the append *)
  | Crash                           (** die anywhere else: nothing durable changes *)
  | Resume (read : nat) (id : iid) (v : value).  (** validate, admit, claim at [read] *)

Definition exec (wf : workflow) (handler : key -> value) (w : world) (ev : event) : world :=
  match ev with
  | Crash => w
  | Step k =>
      match decide wf handler (firstn k (w_log w)) with
      | DWrite recs => cond_append k recs w
      | DInvoke key recs => cond_append k recs (sink_call key w)
      | _ => w
      end
  | CrashAfterInvoke k =>
      match decide wf handler (firstn k (w_log w)) with
      | DInvoke key _ => sink_call key w
      | _ => w
      end
  | Resume k id v =>
      let view := firstn k (w_log w) in
      match admit view (RResume id), recover view with
      | Accept s, Recovered r =>
          match r_phase r with
          | PParked n _ _ => if wf_value_ok wf n v then cond_append s [ResumeClaimed id v] w else w
          | _ => w
          end
      | _, _ => w
      end
  end.

Definition start_world (wf : workflow) (rid : run_id) (st0 : state) : world :=
  mk_world [RunStarted rid (wf_table wf) (wf_start wf) st0] [] [].

(** Every world reachable from a start by any interleaving of steps, crashes, stale reads and
    concurrent resumes. *)
Inductive reachable (wf : workflow) (h : key -> value) (w0 : world) : world -> Prop :=
  | reach_start : reachable wf h w0 w0
  | reach_exec : forall w ev, reachable wf h w0 w -> reachable wf h w0 (exec wf h w ev).

Definition wf_ok (wf : workflow) (st0 : state) : Prop :=
  table_ok (wf_table wf) = true /\ in_table (wf_table wf) (wf_start wf) = true /\ wf_state_ok wf st0 = true.

(** ** Properties of logs *)

(** Checkpoint validity: every state in the log satisfies the schema. *)
Definition state_ok_rec (wf : workflow) (x : record) : Prop :=
  match x with
  | RunStarted _ _ _ st | NodeCompleted _ _ _ st => wf_state_ok wf st = true
  | _ => True
  end.
Definition states_valid (wf : workflow) (l : log) : Prop := Forall (state_ok_rec wf) l.

(** Every claim was admitted on the log before it, with a value its interrupt's schema accepts. *)
Definition claims_valid (wf : workflow) (l : log) : Prop :=
  forall j id v, nth_error l j = Some (ResumeClaimed id v) ->
    exists r n s, recover (firstn j l) = Recovered r /\ r_phase r = PParked n id s /\ wf_value_ok wf n v = true.

(** Every effect intent carries the key derived from the log before it. *)
Definition keys_ok (l : log) : Prop :=
  forall j n k, nth_error l j = Some (EffectIntent n k) ->
    exists r, recover (firstn j l) = Recovered r /\ k = derive_key r n.

Definition valid_log (l : log) : Prop := exists r, recover l = Recovered r.
