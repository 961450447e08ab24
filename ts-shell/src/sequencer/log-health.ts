/**
 * Damage to a stored log, found from the stored records (one per row or slot) and the core's
 * recovery of their concatenation, and what `repair` may do about it (docs/guide.md, "Damaged
 * runs"). One diagnosis feeds every view (status, continueRun, inspect, runs, recoverAll, the
 * CLI), so they agree.
 *
 * - corrupt: a complete record fails its integrity check (checksum, header, seq, order), or is
 *   stored under a seq other than its position (BAD_RECORD_SEQ): never repaired, the record's
 *   content mattered.
 * - torn: the last record is incomplete (its header, or its body, was cut). The core already
 *   treats those bytes as not durable.
 * - empty: the last record has no bytes at all. The core cannot see it (its concatenation adds
 *   nothing), but the store counts it, so every conditional append would be refused forever.
 *
 * Removing a torn or empty last record is safe exactly when losing it is the same as a crash just
 * before it was appended, which the sequencer recovers from by design: a record the sequencer
 * writes for its own progress. It is not safe for a RESUME_CLAIMED (a resumer may have been told
 * its value was claimed: removing the claim could let a second resume in), a FORKED (the run
 * would continue under its source's id and share its effect keys) or a RUN_STARTED (nothing of
 * the run would remain). When the header is lost, the kind is inferred from what could follow the
 * intact records; when that includes a kind that is not safe to lose, repair refuses.
 */

import { decodeRecordAt, LogErrorName } from '../core/codec.js';
import { Frame, FrameOutcome, readFrame } from '../core/framing.js';
import { RecordKind, RunStatus, type NextAction, type Recovery, type RecoveredRun } from '../core/types.js';
import { withArticle } from '../display.js';
import { corruptAdvice, LogCorruptError, LogTornError, shellWord, StoreError, suggestCommand, tornAdvice } from '../errors.js';
import { fromUtf8, isPlainObject } from '../json.js';
import { foldHead, kindName, recordedValue, type HeadState } from './log-view.js';

export interface RunDamage {
  kind: 'torn' | 'empty' | 'corrupt';
  /** The damaged record's seq (its position in the log). */
  seq: number;
  /** Where it starts in the run's log, in bytes. */
  offset: number;
  /** TORN, EMPTY, or the integrity check that failed (BAD_CHECKSUM, BAD_HEADER, BAD_SEQ, ...). */
  code: string;
  /** How many bytes of the damaged record are stored. */
  storedBytes: number;
  /** Whether `repair` removes it. */
  repairable: boolean;
  /** Why it may or may not be removed, and what removing it means. */
  why: string;
  /** What the operator can do, in one sentence. */
  advice: string;
  /** The damaged record's kind when its header survived (torn), else null. */
  recordKind: string | null;
}

/** A stored record as diagnosis needs it. */
export interface StoredRow {
  seq: number;
  bytes: Uint8Array;
}

/** Records whose loss is the same as a crash before they were appended, and what losing one means. */
const LOSS_IS_A_CRASH: ReadonlyMap<number, string> = new Map([
  [RecordKind.NODE_COMPLETED, 'the node completes again: a pure node runs again (it is deterministic), a recorded result or claimed value is applied again'],
  [RecordKind.EFFECT_INTENT, 'the effect\'s intent is written again, with the same idempotency key'],
  [RecordKind.EFFECT_DONE, 'the effect handler is called again with the same idempotency key, which the outside system deduplicates'],
  [RecordKind.INTERRUPT_PARKED, 'the run parks again, under the same interrupt id'],
  [RecordKind.RUN_COMPLETED, 'the end of the run is recorded again'],
  [RecordKind.RUN_FAILED, 'the failing node runs again'],
  [RecordKind.EFFECT_RELEASED, 'the attempt it gave up stays live until its lease expires; then the next attempt is claimed, with the same idempotency key'],
]);

/** Why losing a record of this kind is not the same as a crash before it. */
const LOSS_IS_NOT_A_CRASH: ReadonlyMap<number, string> = new Map([
  [RecordKind.RUN_STARTED, 'the run\'s first record (RUN_STARTED) is damaged, so nothing of the run is intact'],
  [RecordKind.RESUME_CLAIMED, 'a RESUME_CLAIMED may have been reported to its resumer as accepted; removing it could let a second resume in'],
  [RecordKind.FORKED, 'the FORKED record makes this run a fork; without it the run would continue under its source\'s id and share its effect keys'],
  [RecordKind.EFFECT_ATTEMPT, 'an EFFECT_ATTEMPT fences its owner\'s handler call, which may still be running; removing it could let a second caller in'],
]);

/**
 * The damage of a run's stored log, or null when it is sound. `recovery`: the core's answer for
 * the rows' concatenation. No rows at all is NO_RECORDS (missingRecordsDamage): call it with none
 * only for a run the store lists; a run it does not list is not damaged but absent.
 */
export function diagnoseRows(runId: string, rows: readonly StoredRow[], recovery: Recovery): RunDamage | null {
  if (rows.length === 0) return missingRecordsDamage(runId);
  const starts: number[] = [];
  let total = 0;
  for (const row of rows) {
    starts.push(total);
    total += row.bytes.length;
  }
  const rowStartingAt = (offset: number) => rows.findIndex((_, i) => starts[i] === offset);
  const rowHolding = (offset: number) => rows.findIndex((r, i) => starts[i]! <= offset && offset < starts[i]! + r.bytes.length);

  // A row stored under a seq other than its position (a hand edit, a bad copy): the records may
  // chain, but the store's next seq is not the log's, so every append would be refused forever.
  const misplaced = rows.findIndex((row, i) => row.seq !== i);
  if (misplaced >= 0 && (recovery.ok || recovery.seq >= misplaced)) {
    return corrupt(runId, misplaced, starts[misplaced]!, 'BAD_RECORD_SEQ', rows[misplaced]!.bytes.length);
  }
  if (!recovery.ok) {
    const i = rowStartingAt(recovery.offset);
    return corrupt(runId, recovery.seq, recovery.offset, LogErrorName[recovery.code] ?? `code ${recovery.code}`, i < 0 ? 0 : rows[i]!.bytes.length);
  }
  const last = rows.length - 1;
  if (recovery.tornLen > 0) {
    const i = rowHolding(recovery.durableLen);
    if (i !== last || starts[i] !== recovery.durableLen) {
      // The incomplete bytes start inside a record (a complete record followed by extra bytes).
      const at = i < 0 ? last : i;
      return corrupt(runId, rows[at]?.seq ?? recovery.recordCount, starts[at] ?? recovery.durableLen, 'EXTRA_BYTES', rows[at]?.bytes.length ?? 0);
    }
    return removableTail(runId, 'torn', rows[last]!, starts[last]!, recovery);
  }
  if (recovery.recordCount !== rows.length) {
    const lastIsEmpty = last >= 0 && rows[last]!.bytes.length === 0 && recovery.recordCount === last;
    if (lastIsEmpty) return removableTail(runId, 'empty', rows[last]!, starts[last]!, recovery);
    const i = rows.findIndex((r) => r.bytes.length === 0);
    const seq = i >= 0 ? rows[i]!.seq : recovery.recordCount;
    return corrupt(runId, seq, i >= 0 ? starts[i]! : recovery.durableLen, i >= 0 ? 'EMPTY_RECORD' : 'RECORD_COUNT', 0);
  }
  return runIdMismatch(runId, rows, starts, recovery);
}

/**
 * The run id the log names (RUN_STARTED's, or the last FORKED's) must be the key the store keeps
 * it under: a whole log copied under another id is self-consistent (its links hold), and only this
 * comparison sees it. The damaged record is the one that names the other id.
 */
function runIdMismatch(runId: string, rows: readonly StoredRow[], starts: readonly number[], recovery: RecoveredRun): RunDamage | null {
  const named = fromUtf8(recovery.runId);
  if (named === runId) return null;
  const seq = namingRecordSeq(recovery);
  const at = rows.findIndex((r) => r.seq === seq);
  return {
    ...corrupt(runId, seq, at < 0 ? 0 : starts[at]!, 'RUN_ID_MISMATCH', at < 0 ? 0 : rows[at]!.bytes.length),
    why: `the log names run ${JSON.stringify(named)}, not the id the store keeps it under (a whole log copied under another id)`,
  };
}

/** The seq of the record that names the run: its last FORKED, else RUN_STARTED (0). */
export function namingRecordSeq(recovered: RecoveredRun): number {
  return recovered.lineage[recovered.lineage.length - 1]?.forkSeq ?? 0;
}

/** A run the store lists but keeps no record of (not even its RUN_STARTED). */
export function missingRecordsDamage(runId: string): RunDamage {
  return {
    kind: 'corrupt', seq: 0, offset: 0, code: 'NO_RECORDS', storedBytes: 0, repairable: false, recordKind: null,
    why: 'the store lists the run but keeps none of its records, not even its first (RUN_STARTED)',
    // A new run under the same id makes the same effect keys (run id, node, seq) as the lost run
    // did, so a deduplicating outside system would answer it with the lost run's results.
    // A damaged SQLite page under the records can read as no rows, not as an error: the store's
    // own check comes first, before anything is written to a database that may be damaged.
    advice: `nothing of the run is left to inspect or repair (first check the store itself: a damaged SQLite page can read as no rows, and \`sqlite3 FILE 'PRAGMA integrity_check'\` answers ok on a sound file; `
      + `restore a damaged file from a backup before anything is written to it). Then: restore the store from a backup, or start a new run under a new id; `
      + `a new run under this id (\`${suggestCommand('run')} --run-id=${shellWord(runId)}\` replaces the listing on the memory, SQLite and PostgreSQL stores) `
      + `makes the same idempotency keys as the lost run (run id/node/seq), which an outside system that deduplicates by key answers with the lost run's results: `
      + `reuse the id only if the lost run called no effect, or no outside system keeps its keys`,
  };
}

/**
 * The store errors that are one run's data, not the store's availability: a record stored as
 * something that is not bytes, a damaged database page under the run's rows. `runs()` lists such
 * a run as damaged and goes on; a lost connection or a closed store still fails the listing.
 */
const UNREADABLE_RUN_CODES: ReadonlySet<string> = new Set(['RECORD_NOT_BYTES', 'SQLITE_CORRUPT']);

/** Whether `code` is one of a run the store could not read at all (no view of it, inspect included, can be made). */
export function isUnreadableRunCode(code: string): boolean {
  return UNREADABLE_RUN_CODES.has(code);
}

/** The damage of a run the store could not read (UNREADABLE_RUN_CODES), or null for any other error. */
export function unreadableRunDamage(error: unknown): RunDamage | null {
  if (!(error instanceof StoreError) || !UNREADABLE_RUN_CODES.has(error.storeCode)) return null;
  return {
    kind: 'corrupt', seq: error.seq ?? 0, offset: 0, code: error.storeCode, storedBytes: 0, repairable: false, recordKind: null,
    why: `the store could not read the run's records: ${error.message}`,
    advice: 'the run cannot be read, so it cannot be inspected or repaired here: restore the store from a backup (docs/errors.md, REMIT_STORE, says what each store code means)',
  };
}

/** The typed error every view throws for `damage` (LogTornError for torn and empty, else LogCorruptError). */
export function damageError(runId: string, damage: RunDamage): LogTornError | LogCorruptError {
  if (damage.kind === 'corrupt') return new LogCorruptError(runId, damage.seq, damage.offset, damage.code, damage.advice);
  return new LogTornError(runId, damage.seq, damage.storedBytes, damage.advice);
}

function corrupt(runId: string, seq: number, offset: number, code: string, storedBytes: number): RunDamage {
  return {
    kind: 'corrupt', seq, offset, code, storedBytes, repairable: false, recordKind: null,
    why: 'the record is complete but fails its integrity check, so its content is lost and removing it would lose a durable step',
    advice: corruptAdvice(runId),
  };
}

/**
 * scrub's and repair's deeper look at a log diagnoseRows found sound: the first record whose JSON
 * cannot be read, as the sequencer would meet it (a state that is not JSON, or a delta that does
 * not fit the state before it, or a head state that is not an object: UNREADABLE_STATE; an
 * EFFECT_DONE result or RESUME_CLAIMED value that is not JSON: UNREADABLE_VALUE); null when every
 * one reads. Such a record passed every check of the log format, so only a hand edit that
 * recomputed the checksums, or a bug, writes one. Not part of diagnoseRows: it decodes every
 * value, which runs() and recoverAll do not pay for.
 */
export function diagnoseValues(runId: string, rows: readonly StoredRow[], log: Uint8Array): RunDamage | null {
  let head: HeadState | null = null;
  let lastState: { seq: number; offset: number; storedBytes: number } | null = null;
  let offset = 0;
  for (const row of rows) {
    const step = decodeRecordAt(log, offset);
    if (step.outcome !== 'record') return null; // the framing is diagnoseRows' to judge
    const record = step.record;
    const at = { seq: record.seq, offset, storedBytes: row.bytes.length };
    try {
      head = foldHead(head, record);
    } catch {
      return unreadable(runId, at, 'UNREADABLE_STATE');
    }
    if (record.kind === RecordKind.RUN_STARTED || record.kind === RecordKind.NODE_COMPLETED) lastState = at;
    const value = record.kind === RecordKind.EFFECT_DONE ? record.result : record.kind === RecordKind.RESUME_CLAIMED ? record.value : null;
    try {
      if (value !== null) recordedValue(value, runId, record.seq, offset); // as the sequencer reads it to apply it
    } catch {
      return unreadable(runId, at, 'UNREADABLE_VALUE');
    }
    offset = step.end;
  }
  if (head !== null && lastState !== null && !isPlainObject(head.state)) return unreadable(runId, lastState, 'UNREADABLE_STATE');
  return null;
}

function unreadable(runId: string, at: { seq: number; offset: number; storedBytes: number }, code: 'UNREADABLE_STATE' | 'UNREADABLE_VALUE'): RunDamage {
  const what = code === 'UNREADABLE_STATE' ? 'state' : 'value';
  return {
    ...corrupt(runId, at.seq, at.offset, code, at.storedBytes),
    why: `the record passes every check of the log format, but its ${what} cannot be read, so its content is lost and removing it would lose a durable step`,
  };
}

/** A torn or empty last record: may `repair` remove it? */
function removableTail(runId: string, kind: 'torn' | 'empty', row: StoredRow, offset: number, prefix: RecoveredRun): RunDamage {
  const recordKind = kind === 'torn' ? survivingHeaderKind(row.bytes) : null;
  const verdict = lossVerdict(runId, row.seq, recordKind, prefix);
  const advice = verdict.repairable
    ? tornAdvice(runId)
    : `REMIT will not remove it (${verdict.why}): restore the store from a backup; \`${suggestCommand('inspect', runId)}\` shows what is intact`;
  return {
    kind, seq: row.seq, offset, code: kind === 'torn' ? 'TORN' : 'EMPTY', storedBytes: row.bytes.length,
    repairable: verdict.repairable, why: verdict.why, advice, recordKind: recordKind === null ? null : kindName(recordKind),
  };
}

/** The kind byte of a torn record whose 12-byte header survived (its check passes), else null. */
function survivingHeaderKind(bytes: Uint8Array): number | null {
  const frame = new Frame();
  const outcome = readFrame(bytes, 0, -1, frame);
  return outcome === FrameOutcome.TORN && frame.kind !== 0 ? frame.kind : null;
}

function lossVerdict(runId: string, seq: number, known: number | null, prefix: RecoveredRun): { repairable: boolean; why: string } {
  if (seq === 0) return { repairable: false, why: LOSS_IS_NOT_A_CRASH.get(RecordKind.RUN_STARTED)! };
  const effectiveRunId = fromUtf8(prefix.runId);
  if (effectiveRunId !== runId) {
    return { repairable: false, why: `the intact records belong to run ${effectiveRunId}, so the damaged one must be this fork's FORKED record; ${LOSS_IS_NOT_A_CRASH.get(RecordKind.FORKED)!}` };
  }
  const terminal = prefix.status === RunStatus.COMPLETED || prefix.status === RunStatus.FAILED;
  if (terminal) {
    return { repairable: true, why: 'the run had already ended, and nothing REMIT writes can follow its end, so the damaged bytes hold nothing the run needs' };
  }
  const possible = possibleNextKinds(prefix.status, prefix.action);
  if (possible === null) return { repairable: false, why: `REMIT cannot tell which record could follow ${prefix.action.tag}` };
  if (known !== null) {
    const refusal = LOSS_IS_NOT_A_CRASH.get(known);
    if (refusal !== undefined) return { repairable: false, why: `its header names ${withArticle(kindName(known))}: ${refusal}` };
    const consequence = LOSS_IS_A_CRASH.get(known);
    if (consequence === undefined) return { repairable: false, why: `its header names record kind ${known}, which this version of REMIT does not know` };
    if (!possible.includes(known)) return { repairable: false, why: `its header names ${withArticle(kindName(known))}, which cannot follow the intact records` };
    return { repairable: true, why: `it is ${kindName(known)}, a record REMIT wrote for its own progress; losing it is the same as a crash before it was appended: ${consequence}` };
  }
  const unsafe = possible.find((k) => !LOSS_IS_A_CRASH.has(k));
  if (unsafe !== undefined) {
    return { repairable: false, why: `its header is lost and it may have been ${withArticle(kindName(unsafe))}: ${LOSS_IS_NOT_A_CRASH.get(unsafe) ?? 'REMIT cannot tell what was lost'}` };
  }
  return {
    repairable: true,
    why: `its header is lost, but only ${withArticle(possible.map(kindName).join(' or '))} can follow the intact records; losing it is the same as a crash before it was appended: ` +
      possible.map((k) => LOSS_IS_A_CRASH.get(k)!).join('; '),
  };
}

/** Kinds of record the sequencer may append after a log whose recovery is `status` + `action`; null when unknown. */
function possibleNextKinds(status: number, action: NextAction): number[] | null {
  if (status === RunStatus.PARKED) return [RecordKind.RESUME_CLAIMED];
  if (status !== RunStatus.RUNNING) return null;
  switch (action.tag) {
    case 'RUN_PURE':
    case 'FINISH_EFFECT':
    case 'FINISH_INTERRUPT':
      return [RecordKind.NODE_COMPLETED, RecordKind.RUN_FAILED];
    case 'BEGIN_EFFECT':
      return [RecordKind.EFFECT_INTENT];
    case 'INVOKE_EFFECT':
      // A format-2 shell claims an attempt first; a format-1 log went straight to EFFECT_DONE.
      return [RecordKind.EFFECT_ATTEMPT, RecordKind.EFFECT_DONE, RecordKind.RUN_FAILED];
    case 'AWAIT_ATTEMPT':
      return [RecordKind.EFFECT_ATTEMPT, RecordKind.EFFECT_RELEASED, RecordKind.EFFECT_DONE, RecordKind.RUN_FAILED];
    case 'PARK':
      return [RecordKind.INTERRUPT_PARKED];
    case 'FINISH_RUN':
      return [RecordKind.RUN_COMPLETED];
    default:
      return null;
  }
}
