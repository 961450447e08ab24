/**
 * Reading a run's log on the shell's side: recovery with typed errors, the state at the head
 * checkpoint (snapshot plus the deltas after it), and single records at known offsets. The core
 * decides; this module only decodes what the core pointed at.
 */

import { decodeRecordAt, LogErrorName } from '../core/codec.js';
import {
  RecordKind, RunStatus, StateForm, type LogRecord, type RecoveredRun, type Recovery,
} from '../core/types.js';
import { LogCorruptError, LogTornError, RunNotFoundError } from '../errors.js';
import { decodeJson, fromUtf8, isPlainObject, setOwnKey, type Json } from '../json.js';
import { applyDelta, applyDeltaInPlace, type Delta } from '../state/delta.js';
import type { RunStatusHint } from '../store/store.js';

export const KIND_NAMES: Record<number, string> = {
  [RecordKind.RUN_STARTED]: 'RUN_STARTED',
  [RecordKind.NODE_COMPLETED]: 'NODE_COMPLETED',
  [RecordKind.EFFECT_INTENT]: 'EFFECT_INTENT',
  [RecordKind.EFFECT_DONE]: 'EFFECT_DONE',
  [RecordKind.INTERRUPT_PARKED]: 'INTERRUPT_PARKED',
  [RecordKind.RESUME_CLAIMED]: 'RESUME_CLAIMED',
  [RecordKind.FORKED]: 'FORKED',
  [RecordKind.RUN_COMPLETED]: 'RUN_COMPLETED',
  [RecordKind.RUN_FAILED]: 'RUN_FAILED',
  [RecordKind.EFFECT_ATTEMPT]: 'EFFECT_ATTEMPT',
  [RecordKind.EFFECT_RELEASED]: 'EFFECT_RELEASED',
};

export function kindName(kind: number): string {
  return KIND_NAMES[kind] ?? `KIND_${kind}`;
}

/**
 * The records that change a run's status, and the status each leaves it in (docs/core-api.md,
 * "Recovery as a state machine over records"): every other kind is written only while the run is
 * running and keeps it so. A FORKED record follows a checkpoint, where a run is running.
 */
const STATUS_AFTER_KIND: Partial<Record<number, RunStatusHint>> = {
  [RecordKind.RUN_STARTED]: 'running',
  [RecordKind.INTERRUPT_PARKED]: 'parked',
  [RecordKind.RESUME_CLAIMED]: 'running',
  [RecordKind.FORKED]: 'running',
  [RecordKind.RUN_COMPLETED]: 'completed',
  [RecordKind.RUN_FAILED]: 'failed',
};

/**
 * The status hint a store keeps for a run (store.ts, `listRunsToRecover`) after a batch of these
 * records: the status the last status-changing record leaves, or undefined when none of them
 * changes it (a step's records: nothing more to write).
 */
export function statusAfterRecords(records: readonly { kind: number }[]): RunStatusHint | undefined {
  for (let i = records.length - 1; i >= 0; i--) {
    const status = STATUS_AFTER_KIND[records[i]!.kind];
    if (status !== undefined) return status;
  }
  return undefined;
}

export const STATUS_NAMES = {
  [RunStatus.EMPTY]: 'empty',
  [RunStatus.RUNNING]: 'running',
  [RunStatus.PARKED]: 'parked',
  [RunStatus.COMPLETED]: 'completed',
  [RunStatus.FAILED]: 'failed',
} as const;
export type RunStatusName = (typeof STATUS_NAMES)[keyof typeof STATUS_NAMES];

/**
 * Turn a recovery of a damaged log into a typed error naming run, seq and offset. A torn tail is an
 * error here too: stores keep whole records, so an incomplete one is damage, and appending after
 * it would be refused forever.
 */
export function checkRecovery(recovery: Recovery, runId: string, allowEmpty = false): RecoveredRun {
  if (!recovery.ok) {
    throw new LogCorruptError(runId, recovery.seq, recovery.offset, LogErrorName[recovery.code] ?? `code ${recovery.code}`);
  }
  if (recovery.tornLen > 0) throw new LogTornError(runId, recovery.recordCount, recovery.tornLen);
  if (recovery.status === RunStatus.EMPTY && !allowEmpty) throw new RunNotFoundError(runId);
  return recovery;
}

/** The record at a byte offset the core reported; a failure here means the core and codec disagree. */
export function recordAt(log: Uint8Array, offset: number, runId: string): LogRecord {
  const step = decodeRecordAt(log, offset);
  if (step.outcome !== 'record') {
    const seq = step.outcome === 'corrupt' ? step.error.seq : -1;
    throw new LogCorruptError(runId, seq, offset, step.outcome === 'corrupt' ? step.error.codeName : 'TORN');
  }
  return step.record;
}

export interface HeadState {
  state: Json;
  /** Bytes of the delta payloads written after the snapshot, up to the checkpoint. */
  deltaBytesSinceSnapshot: number;
}

/**
 * The state at the head checkpoint: the snapshot at `snapshotOffset`, then every NODE_COMPLETED
 * delta after it up to the checkpoint. The storage policy bounds those deltas by one snapshot.
 */
export function headState(log: Uint8Array, recovered: RecoveredRun, runId: string): HeadState {
  let offset = recovered.snapshotOffset;
  let head: HeadState | null = null;
  for (;;) {
    const step = decodeRecordAt(log, offset);
    if (step.outcome !== 'record') {
      throw new LogCorruptError(runId, step.outcome === 'corrupt' ? step.error.seq : -1, offset, 'UNREADABLE_STATE');
    }
    try {
      head = foldHead(head, step.record);
    } catch {
      // The record passed every check of the log format, but its state is not JSON or not a delta
      // that fits (only a hand edit that recomputed the checksums, or a bug, writes one): damage,
      // reported as such, not as a SyntaxError or TypeError of the decoding.
      throw new LogCorruptError(runId, step.record.seq, offset, 'UNREADABLE_STATE');
    }
    if (offset >= recovered.checkpointOffset) {
      if (head === null || !isPlainObject(head.state)) throw new LogCorruptError(runId, step.record.seq, offset, 'UNREADABLE_STATE');
      return head;
    }
    offset = step.end;
  }
}

/**
 * The head state after `record`: a RUN_STARTED or snapshot NODE_COMPLETED replaces it, a delta
 * NODE_COMPLETED patches it, any other record leaves it. headState folds the log with this, and
 * the sequencer folds its own appends with it, so both give the very same value (key order too).
 * `decodedDelta`, when given, must equal JSON.parse of the delta's text and share nothing with
 * any other value (the sequencer passes a fresh copy of the delta it encoded): it saves decoding
 * the bytes again.
 */
export function advanceHead(head: HeadState | null, record: LogRecord, decodedDelta?: Json): HeadState | null {
  return nextHead(head, record, decodedDelta, false);
}

/**
 * advanceHead for a fold that owns its state and hands none of it out until it ends (headState,
 * diagnoseValues): a delta patches the state in place (applyDeltaInPlace), so the deltas since a
 * snapshot cost their own size, not their count times the state's. Same value, key order included.
 */
export function foldHead(head: HeadState | null, record: LogRecord): HeadState | null {
  return nextHead(head, record, undefined, true);
}

function nextHead(head: HeadState | null, record: LogRecord, decodedDelta: Json | undefined, inPlace: boolean): HeadState | null {
  if (record.kind === RecordKind.RUN_STARTED) return { state: decodeJson(record.state), deltaBytesSinceSnapshot: 0 };
  if (record.kind !== RecordKind.NODE_COMPLETED) return head;
  if (record.stateForm === StateForm.SNAPSHOT) return { state: decodeJson(record.state), deltaBytesSinceSnapshot: 0 };
  const delta = (decodedDelta ?? decodeJson(record.state)) as Delta;
  return {
    state: inPlace ? applyDeltaInPlace(head?.state ?? null, delta) : applyDelta(head?.state ?? null, delta),
    deltaBytesSinceSnapshot: (head?.deltaBytesSinceSnapshot ?? 0) + record.state.length,
  };
}

/**
 * The JSON value a record holds (an EFFECT_DONE's result, a RESUME_CLAIMED's value), read to be
 * applied. Text that is not JSON in a record that passed every check of the log format (only a
 * hand edit that recomputed the checksums, or a bug, writes one) is damage: LogCorruptError
 * UNREADABLE_VALUE naming the record, not a SyntaxError, nor "node code threw".
 */
export function recordedValue(bytes: Uint8Array, runId: string, seq: number, offset: number): Json {
  try {
    return decodeJson(bytes);
  } catch {
    throw new LogCorruptError(runId, seq, offset, 'UNREADABLE_VALUE');
  }
}

/** A deep copy of a JSON value, keys in the same order (node code gets copies, never the cache). */
export function cloneJson<T extends Json>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => cloneJson(item)) as T;
  const out: { [key: string]: Json } = {};
  for (const key of Object.keys(value)) {
    setOwnKey(out, key, cloneJson((value as { [key: string]: Json })[key]!));
  }
  return out as T;
}

export function text(bytes: Uint8Array): string {
  return fromUtf8(bytes);
}

/** The RUN_STARTED record (seq 0). */
export function runStartedRecord(log: Uint8Array, runId: string): Extract<LogRecord, { kind: 1 }> {
  const record = recordAt(log, 0, runId);
  if (record.kind !== RecordKind.RUN_STARTED) throw new LogCorruptError(runId, 0, 0, 'NOT_RUN_STARTED');
  return record;
}
