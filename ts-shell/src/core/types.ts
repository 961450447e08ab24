/**
 * The recovery core's TypeScript interface: one interface, two implementations (the Wasm component
 * and the pure-TypeScript reference). Semantics and the canonical byte encodings of every type
 * here: docs/core-api.md. Names follow that document and the WIT file field for field.
 */

export const RecordKind = {
  RUN_STARTED: 1,
  NODE_COMPLETED: 2,
  EFFECT_INTENT: 3,
  EFFECT_DONE: 4,
  INTERRUPT_PARKED: 5,
  RESUME_CLAIMED: 6,
  FORKED: 7,
  RUN_COMPLETED: 8,
  RUN_FAILED: 9,
  /** Format 2 only: the claim of one attempt of an effect instance. */
  EFFECT_ATTEMPT: 10,
  /** Format 2 only: an attempt given up by its owner, without an outcome. */
  EFFECT_RELEASED: 11,
} as const;
export type RecordKind = (typeof RecordKind)[keyof typeof RecordKind];

export const NodeKind = { PURE: 1, EFFECT: 2, INTERRUPT: 3 } as const;
export type NodeKind = (typeof NodeKind)[keyof typeof NodeKind];

export const StateForm = { SNAPSHOT: 0, DELTA: 1 } as const;
export type StateForm = (typeof StateForm)[keyof typeof StateForm];

/** Recovery error codes (docs/core-api.md, "Error codes"). */
export const LogErrorCode = {
  BAD_HEADER: 1,
  BAD_VERSION: 2,
  RECORD_TOO_LARGE: 3,
  BAD_CHECKSUM: 4,
  BAD_SEQ: 5,
  BAD_KIND: 6,
  MALFORMED_PAYLOAD: 7,
  IMPOSSIBLE_ORDER: 8,
  UNKNOWN_NODE: 9,
  DUPLICATE_INTERRUPT: 10,
  BAD_NODE_TABLE: 11,
  BAD_LINK: 12,
} as const;
export type LogErrorCode = (typeof LogErrorCode)[keyof typeof LogErrorCode];

export const RunStatus = { EMPTY: 0, RUNNING: 1, PARKED: 2, COMPLETED: 3, FAILED: 4 } as const;
export type RunStatus = (typeof RunStatus)[keyof typeof RunStatus];

export const EffectStatus = { FRESH: 0, INTENT_ONLY: 1, DONE: 2 } as const;
export type EffectStatus = (typeof EffectStatus)[keyof typeof EffectStatus];

/** Byte strings stay bytes across the core boundary: the core never decodes names. */
export type Bytes = Uint8Array;

export type NextAction =
  | { tag: 'NONE' }
  | { tag: 'RUN_PURE'; node: Bytes }
  | { tag: 'BEGIN_EFFECT'; node: Bytes }
  /** No attempt is live: claim attempt `nextAttempt` (EFFECT_ATTEMPT, conditional append), then call the handler. */
  | { tag: 'INVOKE_EFFECT'; node: Bytes; key: Bytes; intentSeq: number; nextAttempt: number }
  | { tag: 'FINISH_EFFECT'; node: Bytes; key: Bytes; doneSeq: number; doneOffset: number }
  | { tag: 'PARK'; node: Bytes }
  | { tag: 'AWAIT_RESUME'; node: Bytes; interruptId: Bytes; parkedSeq: number }
  | { tag: 'FINISH_INTERRUPT'; node: Bytes; interruptId: Bytes; claimSeq: number; claimOffset: number }
  | { tag: 'FINISH_RUN' }
  /** Attempt `attempt` (the EFFECT_ATTEMPT at attemptSeq/attemptOffset) has no outcome yet: its owner may be calling the handler. */
  | { tag: 'AWAIT_ATTEMPT'; node: Bytes; key: Bytes; intentSeq: number; attempt: number; attemptSeq: number; attemptOffset: number };

export const ActionTag = {
  NONE: 0,
  RUN_PURE: 1,
  BEGIN_EFFECT: 2,
  INVOKE_EFFECT: 3,
  FINISH_EFFECT: 4,
  PARK: 5,
  AWAIT_RESUME: 6,
  FINISH_INTERRUPT: 7,
  FINISH_RUN: 8,
  AWAIT_ATTEMPT: 9,
} as const;

export interface EffectNodeStatus {
  node: Bytes;
  status: EffectStatus;
  doneCount: number;
  /** EFFECT_ATTEMPT records of the node's latest instance (0 for a format-1 instance). */
  attempts: number;
}

export interface ForkLink {
  sourceRunId: Bytes;
  sourceSeq: number;
  runId: Bytes;
  forkSeq: number;
  intent: Bytes;
}

export interface RunFailure {
  node: Bytes;
  code: Bytes;
  message: Bytes;
}

/** NONE32 in the encoding; used for checkpoint/snapshot fields of an empty log. */
export const NONE32 = 0xffff_ffff;

export interface RecoveredRun {
  ok: true;
  status: RunStatus;
  recordCount: number;
  durableLen: number;
  tornLen: number;
  runId: Bytes;
  workflow: Bytes;
  version: Bytes;
  fingerprint: Bytes;
  checkpointSeq: number;
  checkpointOffset: number;
  snapshotSeq: number;
  snapshotOffset: number;
  action: NextAction;
  effects: EffectNodeStatus[];
  interruptsParked: number;
  interruptsClaimed: number;
  lineage: ForkLink[];
  /** Present exactly when status is FAILED. */
  failure?: RunFailure;
}

export interface RecoveryError {
  ok: false;
  code: LogErrorCode;
  /** Position of the bad record (the expected seq, not the stored field). */
  seq: number;
  /** Byte offset where the bad record starts. */
  offset: number;
  /** The record's kind byte if its header check passed, else 0. */
  kind: number;
}

export type Recovery = RecoveredRun | RecoveryError;

export type AdmissionRequest =
  | { tag: 'RESUME'; interruptId: Bytes }
  | { tag: 'FORK_AT'; seq: number }
  | { tag: 'CONTINUE_FROM'; seq: number };

export const AdmissionRequestTag = { RESUME: 1, FORK_AT: 2, CONTINUE_FROM: 3 } as const;

export const RefusalReason = {
  ALREADY_CONSUMED: 1,
  NOT_PARKED: 2,
  UNKNOWN_INTERRUPT: 3,
  NOT_A_CHECKPOINT: 4,
  BEYOND_HEAD: 5,
  IMPLICIT_FORK: 6,
  LOG_INVALID: 7,
  NO_RUN: 8,
  BAD_REQUEST: 9,
  /**
   * Only from admitFrom: the summary cannot decide, the log can. FORK_AT at or before the head (the
   * summary does not know every checkpoint), and RESUME of a reserved id `name@p` below the head
   * that is neither the parked one nor the last claim (its claim, if any, is record p + 1).
   */
  NEEDS_LOG: 10,
  /** Only from admitFrom: the bytes given are not a summary encoding. */
  BAD_SUMMARY: 11,
} as const;
export type RefusalReason = (typeof RefusalReason)[keyof typeof RefusalReason];

export interface Admission {
  accepted: boolean;
  /** 0 when accepted. */
  reason: 0 | RefusalReason;
  /** The recovery error code when reason is LOG_INVALID, else 0. */
  detail: number;
  seq: number;
  offset: number;
}

/**
 * What feed returns (docs/core-api.md, "Incremental recovery"): the recovery of the summarised log
 * followed by the chunk, byte-identical to recover() of that whole log, and the summary of its
 * durable records (on a recovery error: the summary given, unchanged). `ok: false` when the
 * summary given is not a summary encoding.
 */
export type Fed =
  | { ok: true; recovery: Recovery; summary: Uint8Array }
  | { ok: false; reason: 'BAD_SUMMARY' };

/** The summary of a log with no durable record: feeding from it is recovering from the start. */
export const EMPTY_SUMMARY: Uint8Array = new Uint8Array(0);

/**
 * The one interface both cores implement. The `*Encoded` functions return the canonical encodings
 * of docs/core-api.md; the equivalence suite compares those byte for byte. The decoded functions
 * are what the shell uses.
 */
export interface RecoveryCore {
  readonly name: 'wasm' | 'reference';
  recover(log: Uint8Array): Recovery;
  admit(log: Uint8Array, request: AdmissionRequest): Admission;
  recoverEncoded(log: Uint8Array): Uint8Array;
  admitEncoded(log: Uint8Array, request: Uint8Array): Uint8Array;
  /**
   * Incremental recovery: fold `chunk` (the log's bytes from the summary's durable length on)
   * into `summary` (EMPTY_SUMMARY: the start of a log). Cost O(summary + chunk).
   */
  feed(summary: Uint8Array, chunk: Uint8Array): Fed;
  /** Admission from a summary: admit() of the summarised log, or NEEDS_LOG where only the log can say (RefusalReason.NEEDS_LOG). */
  admitFrom(summary: Uint8Array, request: AdmissionRequest): Admission;
  feedEncoded(summary: Uint8Array, chunk: Uint8Array): Uint8Array;
  admitFromEncoded(summary: Uint8Array, request: Uint8Array): Uint8Array;
}

/** One decoded record (docs/log-format.md, "Record kinds"). Byte fields stay bytes. */
export interface NodeEntry {
  name: Bytes;
  kind: number; // NodeKind when well-formed; the codec keeps any byte so the core can reject it
}

export type LogRecord =
  | {
      kind: typeof RecordKind.RUN_STARTED;
      seq: number;
      runId: Bytes;
      workflow: Bytes;
      version: Bytes;
      fingerprint: Bytes;
      definition: Bytes;
      nodes: NodeEntry[];
      startNode: Bytes;
      state: Bytes;
    }
  | { kind: typeof RecordKind.NODE_COMPLETED; seq: number; node: Bytes; next: Bytes; stateForm: number; state: Bytes }
  | { kind: typeof RecordKind.EFFECT_INTENT; seq: number; node: Bytes; key: Bytes }
  | { kind: typeof RecordKind.EFFECT_DONE; seq: number; node: Bytes; key: Bytes; result: Bytes }
  | { kind: typeof RecordKind.INTERRUPT_PARKED; seq: number; node: Bytes; interruptId: Bytes }
  | { kind: typeof RecordKind.RESUME_CLAIMED; seq: number; interruptId: Bytes; value: Bytes }
  | { kind: typeof RecordKind.FORKED; seq: number; sourceRunId: Bytes; sourceSeq: number; runId: Bytes; intent: Bytes }
  | { kind: typeof RecordKind.RUN_COMPLETED; seq: number }
  | { kind: typeof RecordKind.RUN_FAILED; seq: number; node: Bytes; code: Bytes; message: Bytes }
  | { kind: typeof RecordKind.EFFECT_ATTEMPT; seq: number; node: Bytes; key: Bytes; attempt: number; lease: Bytes }
  | { kind: typeof RecordKind.EFFECT_RELEASED; seq: number; node: Bytes; key: Bytes; attempt: number; reason: Bytes };
