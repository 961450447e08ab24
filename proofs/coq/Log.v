(** * The record log, abstractly (docs/log-format.md, "Record kinds")

    Records are values of an inductive type, not bytes: framing, lengths and CRCs are not modelled.
    A record whose framing checks fail (BAD_HEADER, BAD_VERSION, RECORD_TOO_LARGE, BAD_CHECKSUM,
    BAD_SEQ, BAD_KIND, MALFORMED_PAYLOAD, BAD_LINK) is the constructor [Corrupt], so that recovery's
    "report the first bad record, never load it" can be stated. A record's format matters to
    recovery only for EFFECT_DONE (format 1: after its intent; format 2: after an attempt), so
    the two are two constructors; every other kind reads alike in both formats, and a format-1
    record after a format-2 one (BAD_VERSION) or a format-1 record of kind 10 or 11 (BAD_KIND) is
    a framing error, hence [Corrupt]. Names (nodes, run ids, interrupt ids)
    are natural numbers; the core only ever compares them for equality. *)

From Coq Require Import List Arith Bool Lia.
Import ListNotations.
Set Warnings "-abstract-large-number".

Definition node := nat.
Definition run_id := nat.
Definition iid := nat.     (** interrupt id *)
Definition state := nat.   (** a state snapshot, opaque to the core *)
Definition value := nat.   (** effect results, resume values, fork intents: opaque payloads *)

Inductive node_kind := Pure | Effect | Interrupt.

(** An idempotency key. The core treats keys as opaque names compared for equality; the
    sequencer derives them from (run id, node, instance), which is why a key has these parts. *)
Record key := mk_key { key_run : run_id; key_node : node; key_instance : nat }.

Definition key_eqb (a b : key) : bool :=
  Nat.eqb (key_run a) (key_run b) && Nat.eqb (key_node a) (key_node b)
  && Nat.eqb (key_instance a) (key_instance b).

Lemma key_eqb_eq : forall a b, key_eqb a b = true <-> a = b.
Proof.
  intros [r1 n1 i1] [r2 n2 i2]; unfold key_eqb; simpl.
  rewrite !andb_true_iff, !Nat.eqb_eq; split.
  - intros [[-> ->] ->]; reflexivity.
  - intros H; inversion H; auto.
Qed.

Lemma key_eqb_refl : forall a, key_eqb a a = true.
Proof. intros a; apply key_eqb_eq; reflexivity. Qed.

Inductive state_form := Snapshot | Delta.

Inductive frame_error :=
  | BadHeader | BadVersion | RecordTooLarge | BadChecksum | BadSeq | BadKind | MalformedPayload
  | BadLink.

Inductive record :=
  | RunStarted (run : run_id) (table : list (node * node_kind)) (start : node) (st : state)
  | NodeCompleted (n : node) (next : option node) (form : state_form) (st : state)
  | EffectIntent (n : node) (k : key)
  | EffectDone (n : node) (k : key) (result : value)            (** format 1: follows its intent *)
  | EffectAttempt (n : node) (k : key) (attempt : nat)          (** format 2: the invocation fence *)
  | EffectReleased (n : node) (k : key) (attempt : nat)         (** format 2: an attempt given up *)
  | EffectDoneFenced (n : node) (k : key) (result : value)      (** format 2: follows an attempt *)
  | InterruptParked (n : node) (id : iid)
  | ResumeClaimed (id : iid) (v : value)
  | Forked (source : run_id) (source_seq : nat) (run : run_id) (intent : value)
  | RunCompleted
  | RunFailed (n : option node) (code : value) (message : value)
  | Corrupt (e : frame_error).

Definition log := list record.

(** A checkpoint is a record holding a full state at a node boundary. *)
Definition is_checkpoint (x : record) : bool :=
  match x with RunStarted _ _ _ _ | NodeCompleted _ _ _ _ => true | _ => false end.

Definition is_run_started (x : record) : bool :=
  match x with RunStarted _ _ _ _ => true | _ => false end.

(** ** The node table *)

Fixpoint kind_of (t : list (node * node_kind)) (n : node) : option node_kind :=
  match t with
  | [] => None
  | (m, k) :: t' => if Nat.eqb m n then Some k else kind_of t' n
  end.

Definition in_table (t : list (node * node_kind)) (n : node) : bool :=
  match kind_of t n with Some _ => true | None => false end.

Definition kind_is (t : list (node * node_kind)) (n : node) (k : node_kind) : bool :=
  match kind_of t n, k with
  | Some Pure, Pure | Some Effect, Effect | Some Interrupt, Interrupt => true
  | _, _ => false
  end.

Fixpoint names_distinct (t : list (node * node_kind)) : bool :=
  match t with
  | [] => true
  | (m, _) :: t' => negb (in_table t' m) && names_distinct t'
  end.

(** The most entries a node table may have. A named constant, so that the extracted code builds
    this Peano number once, not at every RUN_STARTED. *)
Definition max_node_count : nat := 65535.

(** BAD_NODE_TABLE: 1..65535 entries with pairwise distinct names (kinds are well-typed here). *)
Definition table_ok (t : list (node * node_kind)) : bool :=
  (1 <=? length t) && (length t <=? max_node_count) && names_distinct t.

Lemma kind_is_in_table : forall t n k, kind_is t n k = true -> in_table t n = true.
Proof.
  intros t n k H; unfold kind_is, in_table in *.
  destruct (kind_of t n) as [[]|]; destruct k; try discriminate; reflexivity.
Qed.

Lemma kind_is_kind_of : forall t n k, kind_is t n k = true -> kind_of t n = Some k.
Proof.
  intros t n k H; unfold kind_is in H.
  destruct (kind_of t n) as [[]|]; destruct k; try discriminate; reflexivity.
Qed.

Lemma kind_of_kind_is : forall t n k, kind_of t n = Some k -> kind_is t n k = true.
Proof. intros t n k H; unfold kind_is; rewrite H; destruct k; reflexivity. Qed.

(** ** Counting records *)

Definition is_claim_of (id : iid) (x : record) : bool :=
  match x with ResumeClaimed id' _ => Nat.eqb id id' | _ => false end.

Definition claims_of (id : iid) (l : log) : nat := length (filter (is_claim_of id) l).

Lemma claims_of_app : forall id l1 l2, claims_of id (l1 ++ l2) = claims_of id l1 + claims_of id l2.
Proof. intros; unfold claims_of; rewrite filter_app, app_length; reflexivity. Qed.
