/**
 * One run's log, cached in memory between the sequencer's own appends: the log buffer, the core's
 * answer per log length, the head state carried from step to step, the staged records of a group
 * of pure steps and their flush, and the drive loop that asks the core for the next action and
 * hands it to a Step (./step.ts). See ./sequencer.ts for what must hold.
 */

import { chainOf, concatBytes, decodeRecordAt } from '../core/codec.js';
import { checkLogRoom, encodeRecordWithinLimits } from '../values.js';
import { Frame, FrameOutcome, MAX_LOG_BYTES, readFrame } from '../core/framing.js';
import {
  EMPTY_SUMMARY, RecordKind, RefusalReason, RunStatus, type Admission, type AdmissionRequest, type LogRecord, type NextAction, type RecoveredRun,
  type Recovery,
} from '../core/types.js';
import { ConflictError, DefinitionMismatchError, LogCorruptError, StoreError, UnknownWorkflowError } from '../errors.js';
import { NO_HOOKS, type FaultInfo, type SequencerHooks } from '../faults.js';
import { assert } from '../assert.js';
import { count } from '../display.js';
import { bytesEqual, decodeJson, fromUtf8, utf8, type Json } from '../json.js';
import { DESCRIPTOR_FORMAT, diffDescriptors, formatToCompare, type WorkflowDescriptor } from '../workflow/descriptor.js';
import { END, describeInFormat, type Workflow } from '../workflow/workflow.js';
import { LogBuffer } from './log-buffer.js';
import { damageError, diagnoseRows, namingRecordSeq, type RunDamage } from './log-health.js';
import {
  advanceHead, checkRecovery, cloneJson, headState, kindName, recordAt, runStartedRecord, STATUS_NAMES, statusAfterRecords, type HeadState,
} from './log-view.js';
import type { FenceSettings } from './fence.js';
import type { RecoverySummary, RunRead, RunStatusHint, StoredRecord } from '../store/store.js';
import { feedInPieces } from './feed-pieces.js';
import { appendOutcomeProblem, checkedRecords, checkedRunRead } from '../store/answers.js';
import { checkWholeRead } from '../store/whole-read.js';
import { openSummary, sealSummary } from './stored-summary.js';
import { DEFAULT_SEQUENCING, type Engine, type RunResult, type SequencingOptions } from './run-result.js';
import { GROUPABLE_ACTIONS, Step } from './step.js';
import { eventLoopPacer } from '../timers.js';

/**
 * A durable recovery summary goes with an append once at least this many records were appended
 * since the stored one (docs/architecture.md, decision 9), and enough log bytes for
 * SUMMARY_BYTES_PER_LOG_BYTE: a fresh process then reads at most about this many records past the
 * head's snapshot (or an eighth of the summary's size of records, when that is more), and a summary
 * costs no extra commit.
 */
export const SUMMARY_EVERY_RECORDS = 32;

/**
 * The most summary bytes stored per log byte appended: a summary goes with an append only once the
 * log bytes appended since the stored one reach its size divided by this. A summary can grow with
 * the run: it lists the interrupt ids that are not reserved (`name@seq`; the shell writes only
 * reserved ones, so its own runs' summaries do not grow), and before 2026-12-07 it listed every id:
 * stored every 32 records alone, an interrupt loop of 8,000 cycles then wrote 60 times its log's
 * bytes in summaries, a ratio that grew with the run. Why 8
 * and not 1: a fresh process reads the records past the summary's end, one store row each, and
 * feeds them to the core; with 1 (a summary's size of records, about 1,000 cycles there) a fresh
 * status() of that run on SQLite took 5 ms instead of 0.6-1.2, and each resume cycle twice as
 * long; with 8 it took 0.8 ms, the cycles as before (a stand-alone script of 8,000 cycles, not committed).
 */
export const SUMMARY_BYTES_PER_LOG_BYTE = 8;

/**
 * Most room left at the end of the buffer a read from a stored summary allocates (no more than
 * the bytes it read): the appends of the call that read it mostly fit without a copy.
 */
const APPEND_ROOM_BYTES = 1024 * 1024;

/** Appended anyway once a group's encoded records reach this size, whatever the step count. */
const MAX_GROUPED_BYTES = 4 * 1024 * 1024;

/** One step's records waiting in memory for the next append (group commit). */
interface StagedRecords {
  seq: number;
  node: string | undefined;
  encoded: Uint8Array[];
  /** The run's status after these records when they change it (a start, park, claim, end). */
  status: RunStatusHint | undefined;
}

/** The kind byte of an encoded record (docs/log-format.md: header byte 9, every format). */
const KIND_BYTE = 9;

/** How long a drive runs without letting the event loop run (RunSession.drive). */
const PAUSE_AFTER_MS = 10;

/** The head state as of the checkpoint record `checkpointSeq`. */
interface CachedHead extends HeadState {
  checkpointSeq: number;
}

/** One run's log, cached in memory between the sequencer's own appends. */
export class RunSession {
  private log = new LogBuffer(new Uint8Array());
  /** Records in `log`, staged ones included (-1: not counted yet, until the first recovery). */
  private recordCount = 0;
  private staged: StagedRecords[] = [];
  private stagedBytes = 0;
  private stagedSteps = 0;
  private head: CachedHead | undefined;
  private recovery: { byteLength: number; value: Recovery } | undefined;
  /**
   * The core's fold state after the bytes it has checked (docs/core-api.md, "Incremental
   * recovery"): the summary of `log[0..summaryEnd)`. Each recovery feeds the core only the bytes
   * after `summaryEnd`, so a step costs O(new records + summary), not O(log).
   */
  private summary: Uint8Array = EMPTY_SUMMARY;
  private summaryEnd = 0;
  /** Records the core's summary covers (those in `log[0..summaryEnd)`). */
  private summaryRecords = 0;
  /** The record count of the summary last written to (or read from) the store. */
  private storedSummaryRecords = 0;
  /** The log bytes that summary covers (0 after a whole-log read: none known to be stored). */
  private storedSummaryBytes = 0;
  /**
   * Where the bytes this session holds begin: 0 after a whole-log read; after a read from a stored
   * summary, or once a drive released its history (releaseHistory), the offset of a head snapshot's
   * record, whose seq is `heldFromSeq`. The log buffer
   * does not hold `log[recordEnd(0)..heldFrom)` (never read; ./log-buffer.ts): nothing before
   * `heldFrom` but RUN_STARTED may be decoded.
   */
  private heldFrom = 0;
  private heldFromSeq = 0;
  /** Records before the bytes held that judgedByRecordAfterPark read alone from the store, by seq (this read's only). */
  private readonly claimsReadAlone = new Map<number, LogRecord>();
  /** runDigest, once computed from this read's record 0 (undefined: not yet). */
  private digest: string | undefined;
  /** An append failed: nothing cached may be used until the log is read again. */
  private stale = false;
  /**
   * The drive's pause (timers.ts, eventLoopPacer): lets the event loop run after PAUSE_AFTER_MS of
   * driving. REMIT's own timers: under a test's fake timers a faked clock never moves, and a faked
   * setImmediate would hold the drive until the test advanced it.
   */
  private pauseIfDue: () => Promise<void> = eventLoopPacer(PAUSE_AFTER_MS);
  private checkedWorkflow: Workflow | undefined;
  /** Damage found in the stored records at the last reload (null: sound). */
  private damage: RunDamage | null = null;
  private readonly names = new Map<string, Uint8Array>();
  readonly sequencing: SequencingOptions;

  private constructor(
    private readonly engine: Engine,
    readonly runId: string,
    /** Read every record at each reload (operations that may look before the head snapshot). */
    private wholeLog: boolean,
  ) {
    this.sequencing = engine.sequencing ?? DEFAULT_SEQUENCING;
  }

  static async open(engine: Engine, runId: string, options: { wholeLog?: boolean } = {}): Promise<RunSession> {
    const session = new RunSession(engine, runId, options.wholeLog ?? false);
    await session.reload();
    return session;
  }

  /**
   * A session for a run about to be started: an empty log, nothing read. Whether the run already
   * exists is the store's answer to the first append (a conditional append at seq 0 commits only
   * when the run has no record), so reading it first would only ask the same question twice.
   */
  static fresh(engine: Engine, runId: string): RunSession {
    const session = new RunSession(engine, runId, false);
    session.startFrom(new LogBuffer(new Uint8Array()), { summary: EMPTY_SUMMARY, byteLength: 0, recordCount: 0, heldFrom: 0, heldFromSeq: 0 });
    session.recordCount = 0;
    session.damage = null;
    return session;
  }

  /**
   * The whole log as this session knows it: the durable records plus any staged (not yet
   * appended). Only a session opened with `wholeLog` is sure to hold it: one read from a stored
   * summary holds record 0 and the bytes from the head snapshot on (asserted here).
   */
  get bytes(): Uint8Array {
    return this.log.bytes;
  }

  /**
   * Bytes of memory the session's log buffer takes (what it holds of the log and its room to
   * grow): after a read from a stored summary, about record 0 and the bytes from the head snapshot
   * on, whatever the log's length.
   */
  get heldByteLength(): number {
    return this.log.capacity;
  }

  /**
   * The record at `offset` (seq `seq`) when this session read its bytes, or the record `seq` it
   * read alone (judgedByRecordAfterPark: an old interrupt's claim, whose offset it does not know);
   * null before what it read.
   */
  heldRecordAt(offset: number, seq: number): LogRecord | null {
    const readAlone = this.claimsReadAlone.get(seq);
    if (readAlone !== undefined) return readAlone;
    if (offset < this.heldFrom || offset >= this.log.byteLength) return null;
    const step = decodeRecordAt(this.log.held, this.log.indexOf(offset), seq);
    return step.outcome === 'record' ? step.record : null;
  }

  /**
   * The record at `offset` in the log, an offset the core reported (an action's, which lies in
   * the bytes this session read); a failure here means the core and codec disagree. Damage is
   * reported at its offset in the whole log.
   */
  recordAt(offset: number): LogRecord {
    const index = this.log.indexOf(offset);
    assert(offset >= this.heldFrom && index >= 0, () => `run ${this.runId}: the record at offset ${offset} is before the bytes read (${this.heldFrom})`);
    return this.atLogOffsets(() => recordAt(this.log.held, index, this.runId));
  }

  /**
   * Record 0's chain value (its checksum), for the registry of running calls (./step.ts). Computed
   * once per read of the log, not at every effect step: record 0 holds the definition and node
   * table, so decoding and checking it costs O(nodes), and it cannot change while the session
   * holds this read (records are only ever appended after it; a reload reads it again and forgets
   * the value, in startFrom).
   */
  get runDigest(): string {
    if (this.digest === undefined) {
      const first = decodeRecordAt(this.log.held, 0);
      assert(first.outcome === 'record', () => `run ${this.runId}: record 0 is not readable where an effect is stepped`);
      this.digest = String(first.chain);
    }
    return this.digest;
  }

  /**
   * `read` over `this.log.held`, with the offset of a LogCorruptError it throws translated from a
   * position in the held bytes to the offset in the whole log that the error must name.
   */
  private atLogOffsets<T>(read: () => T): T {
    try {
      return read();
    } catch (error) {
      if (!(error instanceof LogCorruptError) || this.log.skippedBytes === 0) throw error;
      throw new LogCorruptError(this.runId, error.seq ?? -1, this.log.offsetOf(error.offset), error.logError, error.advice);
    }
  }

  get hooks(): SequencerHooks {
    return this.engine.hooks;
  }

  /**
   * Whether any hook can observe a fault point. Production passes none (NO_HOOKS): then no fault
   * info is built and nothing is awaited, which is a few turns of the microtask queue per step.
   */
  get hooked(): boolean {
    return this.engine.hooks !== NO_HOOKS;
  }

  get fence(): FenceSettings {
    return this.engine.fence;
  }

  /**
   * The UTF-8 bytes of a node name, encoded once per session (records only copy them into frames).
   */
  nameBytes(name: string): Uint8Array {
    let bytes = this.names.get(name);
    if (bytes === undefined) {
      bytes = utf8(name);
      this.names.set(name, bytes);
    }
    return bytes;
  }

  get hasStaged(): boolean {
    return this.staged.length > 0;
  }

  /**
   * Forget everything in memory and read the run's log from the store. The stored records are
   * diagnosed once here (./log-health.ts): a damaged log (a torn or empty last record, a record
   * failing its integrity check) makes every later recover() throw the same typed error.
   */
  async reload(): Promise<void> {
    // The records this session counted before (durable, and any staged ones a failed append
    // dropped): a whole read returning fewer is checked as one cut short, below.
    const seenBefore = this.recordCount;
    // A store that reads the summary and the records after it in one read (readRun): one round trip.
    const read = this.wholeLog ? undefined : checkedRunRead(this.engine.store, this.runId, await this.engine.store.readRun?.(this.runId));
    const fromSummary = this.wholeLog ? { kept: false as const } : await this.reloadFromSummary(read, seenBefore);
    if (fromSummary.kept) return;
    let rows = read?.found === null ? read.records : checkedRecords(this.engine.store, 'readRecords', this.runId, await this.engine.store.readRecords(this.runId));
    // A summary covering more records than the whole read returned: a bad summary (read past it,
    // as any other), or a store that cut its read short, which would be taken for a run that
    // moved (a ConflictError at every append): said as what it is. So is a whole read returning
    // fewer records than this session counted. When the records are really not there (staged
    // ones a failed append dropped; a repair removed a torn record) the check finds none past the
    // read and the read stands; when another writer appended between the reads, the check's second
    // whole read is taken, so that no answer is given from a read known to be behind the store.
    const expected = Math.max(fromSummary.summaryRecords ?? 0, seenBefore);
    if (expected > rows.length) rows = (await checkWholeRead(this.engine.store, this.runId, rows.length)) ?? rows;
    const bytes = rows.length === 1 ? rows[0]!.bytes : concatBytes(rows.map((r) => r.bytes));
    this.startFrom(new LogBuffer(bytes), { summary: EMPTY_SUMMARY, byteLength: 0, recordCount: 0, heldFrom: 0, heldFromSeq: 0 });
    this.recordCount = rows.length === 0 ? 0 : -1;
    const recovery = this.feedCore(bytes.length);
    assert(recovery !== null, () => `run ${this.runId}: the ${this.engine.core.name} core refused the empty summary (a core bug)`);
    this.recovery = { byteLength: bytes.length, value: recovery };
    this.damage = rows.length === 0 ? null : diagnoseRows(this.runId, rows, recovery);
  }

  /**
   * Read the run from its stored recovery summary (docs/guide.md, "Fresh-process resume"): record
   * 0, and the records from the summary's snapshot seq on, fed to the core from the summary. Every
   * record read is checked (record 0's frame, and its run, workflow, version and fingerprint against
   * the summary's; the frames of the records from the snapshot to the summary's end: header, CRC
   * and seq, not their links; framing, CRC and the chain from the summary's chain value after it);
   * the records in between are not.
   * Resolves `kept: false` (nothing kept) whenever that read cannot give the very answer of the whole log:
   * no summary, a summary the core refuses, records that do not line up with it, a tail that does
   * not recover cleanly, or a head that needs a record before the snapshot.
   * The caller then reads the whole log, so a bad summary costs time, never data.
   */
  private async reloadFromSummary(read: RunRead | undefined, seenBefore: number): Promise<{ kept: boolean; summaryRecords?: number }> {
    const store = this.engine.store;
    if (store.readSummary === undefined) return { kept: false };
    const found = read === undefined ? await store.readSummary(this.runId) : read.found;
    if (found === null) return { kept: false };
    const kept = await this.keepFromSummary(found, read, seenBefore);
    return { kept, summaryRecords: found.summary.recordCount };
  }

  /**
   * reloadFromSummary's read of the records from `found`'s snapshot on: true when it gave the whole
   * log's answer, and was kept. Not kept when it holds fewer records than `seenBefore`, the count
   * this session held before (a read behind the store: a replica, a store that cuts reads short):
   * the whole read that follows is checked as one cut short (reload), never taken as the run.
   */
  private async keepFromSummary(found: NonNullable<RunRead['found']>, read: RunRead | undefined, seenBefore: number): Promise<boolean> {
    const store = this.engine.store;
    const { summary, runStarted } = found;
    const coreSummary = openSummary(summary);
    if (coreSummary === null) return false;
    // Record 0 is not fed to the core (the summary covers it), so its frame is checked here as a
    // whole-log recovery checks it: a damaged one is diagnosed from the whole log.
    const first = runStarted.seq === 0 ? decodeRecordAt(runStarted.bytes, 0, 0, { prevChain: 0, v2Seen: false }) : null;
    if (first?.outcome !== 'record' || first.end !== runStarted.bytes.length || first.record.kind !== RecordKind.RUN_STARTED) return false;
    // A snapshot seq that is not a seq of the log (a hand edit, a custom store's bad value) is a bad summary: read past it.
    if (!Number.isInteger(summary.snapshotSeq) || summary.snapshotSeq <= 0 || summary.snapshotSeq >= summary.recordCount) return false;
    const rows = read?.records ?? checkedRecords(store, 'readRecords', this.runId, await store.readRecords(this.runId, summary.snapshotSeq));
    if (rows.length < summary.recordCount - summary.snapshotSeq || summary.snapshotSeq + rows.length < seenBefore) return false;
    let covered = 0;
    let total = 0;
    const frame = new Frame();
    for (let i = 0; i < rows.length; i++) {
      if (rows[i]!.seq !== summary.snapshotSeq + i) return false;
      if (i < summary.recordCount - summary.snapshotSeq) {
        // The records the summary covers are not fed to the core, but the head state and the
        // action's records are read from them: their frames (header, CRC, seq) are checked here,
        // so that a damaged one is diagnosed from the whole log, as every other view names it.
        const bytes = rows[i]!.bytes;
        if (readFrame(bytes, 0, summary.snapshotSeq + i, frame) !== FrameOutcome.RECORD || frame.recordEnd !== bytes.length) return false;
        covered += bytes.length;
      }
      total += rows[i]!.bytes.length;
    }
    const firstEnd = runStarted.bytes.length;
    const tailStart = summary.byteLength - covered;
    if (tailStart < firstEnd) return false;
    // A byte length past a log's limit is no run's (a summary claiming gigabytes it does not
    // cover, a hand edit): read past it.
    const byteLength = tailStart + total;
    if (byteLength > MAX_LOG_BYTES) return false;
    // Record 0 and the records read, one after the other, with room for the run's next appends:
    // the bytes between (those the summary covers before its snapshot) are never read, and a
    // buffer laying the records out at their offsets would be as large as the whole log at every
    // open (status, resume, continue); offsets stay the whole log's (./log-buffer.ts).
    const heldLength = firstEnd + total;
    const buffer = allocated(heldLength + Math.min(heldLength, APPEND_ROOM_BYTES));
    if (buffer === null) return false;
    buffer.set(runStarted.bytes, 0);
    let at = firstEnd;
    for (const row of rows) {
      buffer.set(row.bytes, at);
      at += row.bytes.length;
    }
    const log = new LogBuffer(buffer, heldLength, { at: firstEnd, bytes: tailStart - firstEnd });
    this.startFrom(log, { summary: coreSummary, byteLength: summary.byteLength, recordCount: summary.recordCount, heldFrom: tailStart, heldFromSeq: summary.snapshotSeq });
    const recovery = this.feedCore(byteLength);
    const sound =
      recovery !== null &&
      recovery.ok &&
      // The summary is this run's: it names the id the store keeps the run under (a whole-log
      // read requires the same), and record 0 names the same workflow, version and definition,
      // and the same run unless the run is a fork. A fork's record 0 names the run its history
      // started as, which neither the summary nor the fork's own lineage need name (a fork of a
      // fork taken before the source's FORKED): a whole-log read (scrub) checks its link.
      bytesEqual(recovery.runId, this.nameBytes(this.runId)) &&
      (recovery.lineage.length > 0 || bytesEqual(recovery.runId, first.record.runId)) &&
      bytesEqual(recovery.workflow, first.record.workflow) &&
      bytesEqual(recovery.version, first.record.version) &&
      bytesEqual(recovery.fingerprint, first.record.fingerprint) &&
      recovery.durableLen === byteLength &&
      recovery.recordCount === summary.snapshotSeq + rows.length &&
      recovery.snapshotOffset >= tailStart &&
      offsetsOf(recovery.action).every((offset) => offset >= tailStart);
    if (!sound) return false;
    this.recordCount = recovery.recordCount;
    this.recovery = { byteLength, value: recovery };
    this.damage = null;
    return true;
  }

  /**
   * Start over on `log` as read from the store: nothing staged, nothing cached, the core's
   * summary standing at `from` (the empty summary at byte 0 for a whole-log read; the stored one
   * for a read from it, which holds the bytes from `heldFrom` on).
   */
  private startFrom(log: LogBuffer, from: { summary: Uint8Array; byteLength: number; recordCount: number; heldFrom: number; heldFromSeq: number }): void {
    this.log = log;
    this.dropStaged();
    this.head = undefined;
    this.stale = false;
    this.summary = from.summary;
    this.summaryEnd = from.byteLength;
    this.summaryRecords = from.recordCount;
    this.storedSummaryRecords = from.recordCount;
    this.storedSummaryBytes = from.byteLength;
    this.heldFrom = from.heldFrom;
    this.heldFromSeq = from.heldFromSeq;
    this.claimsReadAlone.clear();
    this.digest = undefined;
  }

  /** The core's view of the log (durable plus staged records); computed once per log length. */
  recover(allowEmpty = false): RecoveredRun {
    assert(!this.stale, () => `run ${this.runId} used after a failed append without a reload`);
    if (this.damage !== null) throw damageError(this.runId, this.damage);
    const byteLength = this.log.byteLength;
    if (this.recovery?.byteLength !== byteLength) {
      this.recovery = { byteLength, value: this.feedCoreOwn(byteLength) };
    }
    const recovered = checkRecovery(this.recovery.value, this.runId, allowEmpty);
    if (recovered.recordCount > 0) this.checkRunIdIsTheKey(recovered);
    if (this.recordCount < 0) this.recordCount = recovered.recordCount;
    assert(recovered.recordCount === this.recordCount, () => `run ${this.runId} holds ${this.recordCount} records, the core counts ${recovered.recordCount}`);
    return recovered;
  }

  /**
   * The recovery of `log[0..byteLength)`, handing the core only the bytes after those its summary
   * covers. The summary advances over durable records only (a torn tail is fed again next time)
   * and not on a recovery error (feed returns the summary it was given). Null when the core
   * refuses the summary (only a stored one can be refused).
   */
  private feedCore(byteLength: number): Recovery | null {
    // In pieces (./feed-pieces.ts): a reload hands the core at most about 1 MiB at a time.
    const from = { summary: this.summary, byteLength: this.summaryEnd, recordCount: this.summaryRecords };
    const fed = feedInPieces(this.engine.core, from, this.log.held, byteLength, undefined, { at: this.log.skipStart, bytes: this.log.skippedBytes });
    if (fed === null) return null;
    this.summary = fed.at.summary;
    this.summaryEnd = fed.at.byteLength;
    this.summaryRecords = fed.at.recordCount;
    return fed.recovery;
  }

  /**
   * Admission of `request` against the log this session holds (durable plus staged records), judged
   * from the core's summary instead of a pass over the whole log: docs/core-api.md, "Admission from
   * a summary". The log itself is asked only when the summary cannot decide (NEEDS_LOG: a fork at
   * an earlier checkpoint, or a resume of a reserved id below the head that is not the parked one
   * nor the last claim's) or the log does not recover (the log's answer names the bad record). A
   * session read from a stored summary gives NEEDS_LOG back: admitReadingLog reads what it needs.
   */
  admit(request: AdmissionRequest): Admission {
    assert(!this.stale, () => `run ${this.runId} used after a failed append without a reload`);
    const byteLength = this.log.byteLength;
    if (this.recovery?.byteLength !== byteLength) this.recovery = { byteLength, value: this.feedCoreOwn(byteLength) };
    if (!this.recovery.value.ok) return this.admitFromWholeLog(request);
    const admission = this.engine.core.admitFrom(this.summary, request);
    if (admission.reason !== RefusalReason.NEEDS_LOG) return admission;
    // A session that read from a stored summary gives NEEDS_LOG back: admitReadingLog reads what
    // the answer needs (record p + 1 for a resume of a reserved id below the head, else the whole log).
    if (this.heldFrom !== 0) return admission;
    return this.admitFromWholeLog(request);
  }

  /**
   * admit(), reading the run's whole log first when the answer needs it and this session read from
   * a stored summary. A resume of a reserved id `name@p` below the head that the summary cannot
   * judge reads record p + 1 alone (judgedByRecordAfterPark); only when that record does not read
   * is the whole log read (and a fork at an earlier seq, which a resume never asks). The session
   * then holds the whole log.
   */
  async admitReadingLog(request: AdmissionRequest): Promise<Admission> {
    const admission = this.admit(request);
    if (admission.reason !== RefusalReason.NEEDS_LOG) return admission;
    if (request.tag === 'RESUME') {
      const judged = await this.judgedByRecordAfterPark(request.interruptId, admission.seq);
      if (judged !== null) return judged;
    }
    this.wholeLog = true;
    await this.reload();
    // Damage the whole log shows and the summary's read did not (a record before the snapshot) is
    // thrown as every view throws it, named (LogCorruptError, LogTornError), not as an admission.
    this.recover();
    return this.admit(request);
  }

  /**
   * The whole log's answer to a resume of reserved id `name@p` that the summary could not judge,
   * from record `seq` = p + 1 alone (the one the core's NEEDS_LOG names; docs/core-api.md,
   * "Admission from a summary"), or null when that record does not read. The core's summary
   * covers it, so the log up to it recovered, and in a log that recovers the claim of a park at p,
   * if there is one, is record p + 1. So:
   * - a RESUME_CLAIMED of that id there is that claim: refused as ALREADY_CONSUMED at seq (a
   *   second click on an old request);
   * - anything else there means that id was never claimed (a made-up id, `name@p` naming a pure
   *   step's seq; a park the run failed in), and it is not the parked one (admitFrom answers that
   *   itself): the log's answer is NOT_PARKED, or UNKNOWN_INTERRUPT when the run is parked, at the
   *   head.
   * The record is checked as a fresh read checks the records it reads (frame, header and record
   * CRCs, seq), not its link. So neither resume reads more than one record besides the tail.
   */
  private async judgedByRecordAfterPark(interruptId: Uint8Array, seq: number): Promise<Admission | null> {
    const recovered = this.recovery?.value;
    if (!Number.isInteger(seq) || seq <= 0 || seq >= this.summaryRecords || recovered === undefined || !recovered.ok) return null;
    const held = this.offsetOfSeq(seq);
    const record = held >= 0 ? this.heldRecordAt(held, seq) : await this.storedRecord(seq);
    if (record === null) return null;
    if (record.kind !== RecordKind.RESUME_CLAIMED || !bytesEqual(record.interruptId, interruptId)) {
      const reason = recovered.status === RunStatus.PARKED ? RefusalReason.UNKNOWN_INTERRUPT : RefusalReason.NOT_PARKED;
      return { accepted: false, reason, detail: 0, seq: recovered.recordCount - 1, offset: recovered.durableLen };
    }
    // Kept, so that the refusal's claimed value is read from it (heldRecordAt), not from the store again.
    if (held < 0) this.claimsReadAlone.set(seq, record);
    // The offset is the record's in the whole log when this session holds it, else 0 (before the
    // bytes held: heldRecordAt finds the record by its seq).
    return { accepted: false, reason: RefusalReason.ALREADY_CONSUMED, detail: 0, seq, offset: Math.max(held, 0) };
  }

  /**
   * Whether record `seq`, below the head, is a checkpoint (RUN_STARTED or NODE_COMPLETED: a seq
   * fork() accepts, docs/core-api.md, "Admission", FORK_AT), judged from that record alone: from
   * the bytes this session holds, or read from the store when it lies before them (one record, not
   * the whole log). When that record does not read as record `seq` (damage before the summary's
   * snapshot, a store that answered another seq), the whole log is read and asked, as fork() asks
   * it: damage is then thrown named (LogCorruptError, LogTornError), never taken for "no checkpoint".
   */
  async isCheckpoint(seq: number): Promise<boolean> {
    assert(Number.isInteger(seq) && seq >= 0 && seq < this.recordCount, () => `run ${this.runId}: seq ${seq} is not below the head (${this.recordCount} records)`);
    const held = this.offsetOfSeq(seq);
    // Record 0 is held by every session (a read from a summary holds it before the skipped bytes).
    const record = seq === 0 ? this.firstRecord() : held >= 0 ? this.heldRecordAt(held, seq) : await this.storedRecord(seq);
    if (record !== null) return record.kind === RecordKind.RUN_STARTED || record.kind === RecordKind.NODE_COMPLETED;
    return (await this.admitReadingLog({ tag: 'FORK_AT', seq })).accepted;
  }

  /** Record 0 as this session holds it, or null when it does not read. */
  private firstRecord(): LogRecord | null {
    const step = decodeRecordAt(this.log.held, 0, 0);
    return step.outcome === 'record' ? step.record : null;
  }

  /**
   * Record `seq` of this run as the store has it (one record read; a store may give more, and a
   * custom store's answer is checked as every read's), or null when it does not read as record `seq`.
   */
  async storedRecord(seq: number): Promise<LogRecord | null> {
    const rows = checkedRecords(this.engine.store, 'readRecords', this.runId, await this.engine.store.readRecords(this.runId, seq, 1));
    const row = rows.find((r) => r.seq === seq);
    if (row === undefined) return null;
    const step = decodeRecordAt(row.bytes, 0, seq);
    return step.outcome === 'record' && step.end === row.bytes.length ? step.record : null;
  }

  private admitFromWholeLog(request: AdmissionRequest): Admission {
    assert(this.heldFrom === 0, () => `run ${this.runId}: admission ${request.tag} needs the whole log; open the session with wholeLog`);
    return this.engine.core.admit(this.log.bytes, request);
  }

  /** feedCore from a summary the core itself wrote (never refused). */
  private feedCoreOwn(byteLength: number): Recovery {
    const recovery = this.feedCore(byteLength);
    assert(recovery !== null, () => `run ${this.runId}: the ${this.engine.core.name} core refused the summary it wrote (a core bug)`);
    return recovery;
  }

  /**
   * The offset in the log of record `seq`, walked from record 0 or, when it lies in the bytes read
   * from the head snapshot on, from there; -1 for a record in the bytes never read.
   */
  private offsetOfSeq(seq: number): number {
    if (seq === 0) return 0;
    if (this.heldFrom === 0) return offsetOfSeq(this.log.held, seq);
    if (seq < this.heldFromSeq) return -1;
    return this.log.offsetOf(offsetOfSeq(this.log.held, seq, this.log.indexOf(this.heldFrom), this.heldFromSeq));
  }

  /**
   * The run id the log names (RUN_STARTED's, or the last FORKED's) must be the key the store keeps
   * it under: a whole log copied under another run id is self-consistent (its links hold), and only
   * this comparison can see it.
   */
  private checkRunIdIsTheKey(recovered: RecoveredRun): void {
    if (bytesEqual(recovered.runId, this.nameBytes(this.runId))) return;
    const seq = namingRecordSeq(recovered);
    const offset = this.offsetOfSeq(seq);
    throw new LogCorruptError(this.runId, seq, offset, `RUN_ID_MISMATCH (the log names run ${JSON.stringify(fromUtf8(recovered.runId))})`);
  }

  /**
   * The state at the head checkpoint. From the cache when it is at the checkpoint `recovered`
   * names (it is when this session wrote the checkpoint), else rebuilt from the snapshot and
   * deltas. Without `recovered` (inside a group of pure steps) the cache is used as it stands: it
   * is either empty or at the latest checkpoint, because every record this session adds is folded
   * into it and a reload empties it.
   */
  headState(recovered?: RecoveredRun): HeadState {
    if (recovered === undefined && this.head !== undefined) return this.head;
    const at = recovered ?? this.recover();
    if (this.head?.checkpointSeq === at.checkpointSeq) return this.head;
    assert(at.snapshotOffset >= this.heldFrom, () => `run ${this.runId}: the head snapshot at offset ${at.snapshotOffset} is before the bytes read (${this.heldFrom})`);
    // The snapshot and the deltas after it lie in the bytes read: read at their positions there.
    const log = this.log;
    const held = log.skippedBytes === 0 ? at : { ...at, snapshotOffset: log.indexOf(at.snapshotOffset), checkpointOffset: log.indexOf(at.checkpointOffset) };
    const rebuilt = this.atLogOffsets(() => headState(log.held, held, this.runId));
    this.head = { ...rebuilt, checkpointSeq: at.checkpointSeq };
    return this.head;
  }

  /** The registered workflow this run was started under, refusing a changed definition. */
  workflowFor(recovered: RecoveredRun): Workflow {
    if (this.checkedWorkflow) return this.checkedWorkflow;
    const name = fromUtf8(recovered.workflow);
    const wf = this.engine.workflowNamed(name);
    if (!wf) throw new UnknownWorkflowError(name, this.engine.workflowNames(), { runId: this.runId }, { ofStartedRun: true });
    if (!startedUnder(wf, recovered.fingerprint)) {
      const started = runStartedRecord(this.log.held, this.runId);
      let recorded: WorkflowDescriptor | null = null;
      try {
        recorded = decodeJson(started.definition) as unknown as WorkflowDescriptor;
      } catch {
        recorded = null;
      }
      const format = recorded?.format;
      if (typeof format === 'number' && format > DESCRIPTOR_FORMAT) throw DefinitionMismatchError.newerRelease(this.runId, name, format, DESCRIPTOR_FORMAT);
      // A run recorded in an earlier descriptor format is compared with this definition described in
      // that format (formatToCompare): a format-3 run told only that defaults now go undescribed would learn nothing.
      // Described from the schemas as written (describeInFormat), as its former fingerprints are.
      const current = typeof format === 'number' && format < DESCRIPTOR_FORMAT ? describeInFormat(wf, formatToCompare(format)) : wf.descriptor;
      const differences = recorded ? diffDescriptors(recorded, current) : ['the recorded definition is unreadable'];
      throw new DefinitionMismatchError(this.runId, name, differences);
    }
    this.checkedWorkflow = wf;
    return wf;
  }

  /**
   * Append `records` (whose seqs start at `expectedSeq`), after any staged records, in one
   * conditional append. Hooks see each step's records before and after. A lost race throws
   * ConflictError; nothing is written and the session must be reloaded. A store's answer that no
   * sound store gives (records it reported committed gone, a wrong next seq) throws StoreError.
   */
  async append(expectedSeq: number, records: LogRecord[], node?: string, decodedDelta?: Json): Promise<void> {
    this.addRecords(expectedSeq, records, node, false, decodedDelta);
    await this.flush();
  }

  /** Keep a step's records in memory; they go to the store with the next append or flush. */
  stage(expectedSeq: number, records: LogRecord[], node: string, decodedDelta?: Json): void {
    this.addRecords(expectedSeq, records, node, true, decodedDelta);
  }

  /** Whether the staged group is full: the next step appends it first. */
  get groupFull(): boolean {
    return this.stagedSteps >= this.sequencing.maxGroupedPureSteps || this.stagedBytes >= MAX_GROUPED_BYTES;
  }

  /**
   * `decodedDelta`: the parsed state payload of the batch's NODE_COMPLETED when it is a delta
   * (advanceHead). Records are written in log format 2, each chained to the one before it (the
   * last record in the buffer, durable or staged, whatever its format).
   */
  private addRecords(expectedSeq: number, records: LogRecord[], node: string | undefined, groupedStep: boolean, decodedDelta?: Json): void {
    assert(!this.stale, () => `run ${this.runId} used after a failed append without a reload`);
    assert(this.recordCount < 0 || expectedSeq === this.recordCount, () => `run ${this.runId} appends at seq ${expectedSeq}, its log holds ${this.recordCount} records`);
    let chain = this.log.lastChainValue;
    const encoded: Uint8Array[] = new Array(records.length);
    let bytes = 0;
    for (let i = 0; i < records.length; i++) {
      const record = encodeRecordWithinLimits(records[i]!, chain, { runId: this.runId, ...(node === undefined ? {} : { node }) });
      chain = chainOf(record);
      bytes += record.length;
      encoded[i] = record;
    }
    checkLogRoom(this.log.byteLength, bytes, records[0]!, { runId: this.runId, ...(node === undefined ? {} : { node }) });
    this.log.push(encoded);
    this.staged.push({ seq: expectedSeq, node, encoded, status: statusAfterRecords(records) });
    this.stagedBytes += bytes;
    if (groupedStep) this.stagedSteps += 1;
    this.recordCount = expectedSeq + records.length;
    for (const record of records) this.foldIntoHead(record, decodedDelta);
  }

  /** Carry the cached head state over a record this session adds (no cache: stays unknown). */
  private foldIntoHead(record: LogRecord, decodedDelta: Json | undefined): void {
    if (record.kind === RecordKind.NODE_COMPLETED && this.head === undefined) return;
    const next = advanceHead(this.head ?? null, record, decodedDelta);
    if (next !== null && next !== this.head) this.head = { state: next.state, deltaBytesSinceSnapshot: next.deltaBytesSinceSnapshot, checkpointSeq: record.seq };
  }

  /** Append every staged record in one conditional append (nothing staged: nothing to do). */
  async flush(): Promise<void> {
    if (this.staged.length === 0) return;
    const groups = this.staged;
    const firstSeq = groups[0]!.seq;
    const encoded = groups.length === 1 ? groups[0]!.encoded : groups.flatMap((g) => g.encoded);
    let outcome;
    const storedSummaryRecords = this.storedSummaryRecords;
    const storedSummaryBytes = this.storedSummaryBytes;
    try {
      if (this.hooked) for (const g of groups) await this.engine.hooks.at('append.before', this.faultInfo(g));
      outcome = await this.engine.store.append(this.runId, firstSeq, encoded, this.summaryToStore(), statusAfterGroups(groups));
    } catch (error) {
      this.invalidate();
      throw error;
    }
    const problem = appendOutcomeProblem(outcome);
    if (problem !== null) {
      this.invalidate();
      throw this.storeLied(firstSeq, 'BAD_APPEND_OUTCOME', `answered the append of ${count(encoded.length, 'record')} at seq ${firstSeq} with ${problem}`);
    }
    if (!outcome.committed && outcome.nextSeq === 0 && firstSeq === 0) {
      // A run's first record commits wherever the run has none: a refusal that says it has none is
      // no race (taken for one, start() said "a run with this id exists"). At a later seq the same
      // answer can be a race: a repair removed the last record and another writer put one back
      // between the store's refused write and its read (SQLite reads in a transaction of its own),
      // so it is taken for one below, and the run read again.
      this.invalidate();
      throw this.storeLied(firstSeq, 'BAD_APPEND_OUTCOME', 'refused the append of the run\'s first record while reporting that the run has none, where a conditional append commits');
    }
    if (!outcome.committed && outcome.nextSeq < firstSeq) {
      // Not a lost race: the store is behind records this session read from it or was told were
      // committed. Going on as after a race would leave the run undriven ("another sequencer has
      // it") and run its steps, effects among them, again; the store lost records: say so.
      this.invalidate();
      const lost = firstSeq - outcome.nextSeq === 1 ? `record ${outcome.nextSeq} is` : `records ${outcome.nextSeq} to ${firstSeq - 1} are`;
      throw this.storeLied(firstSeq, 'RECORDS_LOST', `refused the append at seq ${firstSeq} with the run's next seq at ${outcome.nextSeq}: ${lost} gone, though it reported them committed or they were read from it`);
    }
    if (!outcome.committed) {
      // The records in the way, when the store reported them, bring this session to the new head
      // without reading the run again (catchUp); anything else forgets it all.
      // A summary sent with the refused append was not stored.
      this.storedSummaryRecords = storedSummaryRecords;
      this.storedSummaryBytes = storedSummaryBytes;
      if (outcome.tail === undefined || !this.catchUp(firstSeq, outcome.tail)) {
        this.invalidate();
        // The records known durable are those before firstSeq: the staged ones were not written,
        // and counted they would make the next reload distrust a sound read from the summary.
        this.recordCount = firstSeq;
      }
      throw new ConflictError(this.runId, firstSeq, outcome.nextSeq);
    }
    if (outcome.nextSeq !== firstSeq + encoded.length) {
      this.invalidate();
      throw this.storeLied(firstSeq, 'BAD_APPEND_OUTCOME', `reported the append of ${encoded.length} records at seq ${firstSeq} committed with next seq ${outcome.nextSeq}, not ${firstSeq + encoded.length}`);
    }
    this.dropStaged();
    this.releaseHistory();
    if (this.hooked) for (const g of groups) await this.engine.hooks.at('append.after', this.faultInfo(g));
  }

  /**
   * Stop holding the log's bytes between record 0 and the head snapshot once they pass
   * sequencing.maxHeldHistoryBytes: the session then holds what a fresh process's read of the run
   * from a stored summary holds (record 0 and the bytes from the head snapshot on), so a drive of
   * 10^6 steps does not keep its whole log in memory. Nothing needs those bytes again: the core's
   * summary covers them (it is fed only what follows), the cached head state and a rebuilt one
   * start at the head snapshot, and the current action's records lie after it. What would need
   * them reads the run again as a fresh session does: a resume of an interrupt claimed before the
   * latest claim (admitReadingLog), a reload after a failed append. A session opened on the whole
   * log (a fork's) or sent to it by admitReadingLog keeps it: it may be asked for admission from it.
   */
  private releaseHistory(): void {
    // The last recovery, of the log up to this commit or of a prefix of it (a step's records are
    // appended before the core is asked about them): its head snapshot is a committed record.
    const recovery = this.recovery;
    if (this.wholeLog || recovery === undefined || recovery.byteLength > this.log.byteLength || !recovery.value.ok) return;
    const { snapshotOffset, snapshotSeq } = recovery.value;
    if (snapshotSeq <= 0 || snapshotOffset <= this.heldFrom || snapshotOffset > this.summaryEnd) return;
    const firstEnd = this.heldFrom === 0 ? this.offsetOfSeq(1) : this.log.skipStart;
    if (this.log.indexOf(snapshotOffset) - firstEnd < this.sequencing.maxHeldHistoryBytes) return;
    if (offsetsOf(recovery.value.action).some((offset) => offset < snapshotOffset)) return;
    this.log = this.log.skipping(firstEnd, snapshotOffset, Math.min(this.log.byteLength - snapshotOffset, APPEND_ROOM_BYTES));
    this.heldFrom = snapshotOffset;
    this.heldFromSeq = snapshotSeq;
  }

  /** A store's answer to an append that no sound store gives (docs/guide.md, "Stores"): a StoreError, never a race. */
  private storeLied(seq: number, storeCode: 'RECORDS_LOST' | 'BAD_APPEND_OUTCOME', what: string): StoreError {
    return new StoreError(this.engine.store.description, 'append', storeCode, { runId: this.runId, seq }, new Error(`the store ${what}`));
  }

  /**
   * After an append at `firstSeq` was refused: drop the staged records and take `tail` (another
   * writer's records from `firstSeq` on, as the store reported them) as this session's next
   * records, feeding the core only those. True when the session now stands at the store's head,
   * as a reload would have left it: only when the core's summary covers no staged record, the
   * tail's seqs follow on, and the log with the tail recovers cleanly to exactly its length (a
   * damaged or torn record, a refused chain: false). False leaves the session to be invalidated.
   */
  private catchUp(firstSeq: number, tail: readonly StoredRecord[]): boolean {
    const durableLength = this.log.byteLength - this.stagedBytes;
    // A refused first record (start() under a taken id): the records in the way are another run's
    // whole log, which this session has no use for; never fed to the core.
    if (firstSeq === 0 || this.recordCount < 0 || this.summaryEnd > durableLength || tail.length === 0) return false;
    if (tail.some((record, i) => record.seq !== firstSeq + i)) return false;
    const log = this.log.prefix(durableLength);
    log.push(tail.map((record) => record.bytes));
    this.log = log;
    this.dropStaged();
    this.head = undefined;
    this.recovery = undefined;
    const recovery = this.feedCore(log.byteLength);
    const recordCount = firstSeq + tail.length;
    if (recovery === null || !recovery.ok || recovery.durableLen !== log.byteLength || recovery.recordCount !== recordCount) return false;
    this.recordCount = recordCount;
    this.recovery = { byteLength: log.byteLength, value: recovery };
    return true;
  }

  /** Forget the staged records (appended, or dropped with the session's caches). */
  private dropStaged(): void {
    this.staged = [];
    this.stagedBytes = 0;
    this.stagedSteps = 0;
  }

  /** Whether the session must read the run again before its next use (a failed append it could not catch up on). */
  get needsReload(): boolean {
    return this.stale;
  }

  /**
   * The recovery summary to store with the next append, once SUMMARY_EVERY_RECORDS records and at
   * least 1/SUMMARY_BYTES_PER_LOG_BYTE of the summary's size in log bytes were appended past the
   * stored one: the core's summary of records the append makes durable (all of
   * `log[0..summaryEnd)` is durable or in this append) with the snapshot of the recovery that
   * wrote it. The byte condition keeps the summary bytes written within a constant factor of the
   * log's bytes, however large the summary grows.
   */
  private summaryToStore(): RecoverySummary | undefined {
    if (this.engine.store.readSummary === undefined) return undefined;
    if (this.summaryRecords - this.storedSummaryRecords < SUMMARY_EVERY_RECORDS) return undefined;
    if ((this.summaryEnd - this.storedSummaryBytes) * SUMMARY_BYTES_PER_LOG_BYTE < this.summary.length) return undefined;
    const recovery = this.recovery?.value;
    if (recovery === undefined || !recovery.ok || recovery.durableLen !== this.summaryEnd || recovery.snapshotSeq <= 0) return undefined;
    this.storedSummaryRecords = this.summaryRecords;
    this.storedSummaryBytes = this.summaryEnd;
    return sealSummary(this.summaryRecords, this.summaryEnd, recovery.snapshotSeq, this.summary);
  }

  /**
   * After node code failed with staged pure steps before it: append them (they completed, and a
   * run without group commit would hold them), without letting a failure here hide the node's.
   */
  async flushQuietly(): Promise<void> {
    try {
      await this.flush();
    } catch {
      // The staged steps are lost as in a crash; the run continues from its durable prefix.
    }
  }

  /** Drop the staged records and every cache: the next use reads the log from the store. */
  private invalidate(): void {
    this.stale = true;
    this.dropStaged();
    this.head = undefined;
    this.recovery = undefined;
    this.summary = EMPTY_SUMMARY;
    this.summaryEnd = 0;
    this.summaryRecords = 0;
  }

  private faultInfo(g: StagedRecords): FaultInfo {
    const kinds = g.encoded.map((bytes) => kindName(bytes[KIND_BYTE]!));
    return { runId: this.runId, seq: g.seq, kinds, ...(g.node === undefined ? {} : { node: g.node }) };
  }

  /** Where the run stands, without doing anything. */
  result(recovered: RecoveredRun): RunResult {
    const status = STATUS_NAMES[recovered.status];
    const base = {
      runId: fromUtf8(recovered.runId),
      workflow: fromUtf8(recovered.workflow),
      state: cloneJson(this.headState(recovered).state),
      headSeq: recovered.recordCount - 1,
    };
    const { action, failure } = recovered;
    // The core's status and action agree (a parked run awaits its resume, only a failed run has a
    // failure): RunResult's type promises the interrupt and the failure by status.
    assert((status === 'parked') === (action.tag === 'AWAIT_RESUME'), () => `run ${this.runId} is ${status} with action ${action.tag}`);
    assert((status === 'failed') === (failure !== null && failure !== undefined), () => `run ${this.runId} is ${status} ${failure ? 'with' : 'without'} a failure`);
    if (action.tag === 'AWAIT_RESUME') {
      return { ...base, status: 'parked', interrupt: { id: fromUtf8(action.interruptId), node: fromUtf8(action.node), parkedSeq: action.parkedSeq } };
    }
    if (failure) {
      return { ...base, status: 'failed', failure: { node: fromUtf8(failure.node), code: fromUtf8(failure.code), message: fromUtf8(failure.message) } };
    }
    // Never empty: recover() threw RunNotFoundError for a log without records.
    assert(status !== 'empty', () => `run ${this.runId} has no records`);
    return { ...base, status: status as Exclude<typeof status, 'parked' | 'failed' | 'empty'> };
  }

  /**
   * Refuse, before the claim, a resume value whose completion of interrupt `node` would fail
   * (Step.checkResume): the run is parked there, and `value` is the claim's value as it will be
   * read back from the log.
   */
  checkResume(node: string, value: Json): void {
    const recovered = this.recover();
    new Step(this, this.workflowFor(recovered), fromUtf8(recovered.runId), recovered.recordCount, recovered).checkResume(node, value);
  }

  /**
   * Drive the run until it parks, completes or fails. A drive that has run for PAUSE_AFTER_MS
   * without waiting (pure steps on a store that answers at once: SQLite's appends are synchronous,
   * the memory store's resolve as microtasks) lets the event loop run, so that a long loop does not
   * hold every other request of the process. What it staged stays staged: a pause is an await as
   * an asynchronous store's append is one (another call on the run meanwhile is a concurrent
   * sequencer, refused at the append), and the groups, and so the appends, are the same whether a
   * drive paused or not.
   */
  async drive(): Promise<RunResult> {
    if (this.stale) await this.reload();
    this.pauseIfDue = eventLoopPacer(PAUSE_AFTER_MS);
    for (;; await this.pauseIfDue()) {
      const recovered = this.recover();
      const wf = this.workflowFor(recovered);
      const action = recovered.action;
      const runId = fromUtf8(recovered.runId);
      if (action.tag === 'NONE' || action.tag === 'AWAIT_RESUME') {
        // Staged steps that ended the run: the core has just checked them with the rest of the log.
        await this.flush();
        return this.result(recovered);
      }
      if (!this.sequencing.groupPureSteps || !GROUPABLE_ACTIONS.has(action.tag)) {
        await new Step(this, wf, runId, recovered.recordCount, recovered).perform(action);
        continue;
      }
      if (this.groupFull) await this.flush();
      await this.runGroup(wf, runId, action, recovered);
    }
  }

  /**
   * Group commit: perform `action` (a pure node, or the completion of an interrupt or effect whose
   * claim or result is already durable), then pure nodes while the route leads to one and the
   * group is not full, staging every completion in memory. The drive loop then asks the core what
   * comes next (with the staged records in the log) and appends the group with or before it.
   */
  private async runGroup(wf: Workflow, runId: string, action: NextAction, recovered: RecoveredRun): Promise<void> {
    try {
      let next = await new Step(this, wf, runId, this.recordCount, recovered).performStaged(action);
      while (next !== null && next !== END && !this.groupFull && wf.nodes.get(next)?.kind === 'pure') {
        // Inside a group too: a group of slow pure steps (up to maxGroupedPureSteps) would hold the loop.
        await this.pauseIfDue();
        next = await new Step(this, wf, runId, this.recordCount).runPure(next, 'stage');
      }
    } catch (error) {
      // A hook or the sequencer threw inside the group: keep what completed before, then report.
      if (this.hasStaged && !this.stale) await this.flushQuietly();
      throw error;
    }
  }
}

/** A buffer of `length` bytes, or null when the host cannot allocate it (RangeError). */
function allocated(length: number): Uint8Array | null {
  try {
    return new Uint8Array(length);
  } catch (error) {
    if (error instanceof RangeError) return null;
    throw error;
  }
}

/** The status hint of an append of these groups: the last one that changes the status decides. */
function statusAfterGroups(groups: readonly StagedRecords[]): RunStatusHint | undefined {
  for (let i = groups.length - 1; i >= 0; i--) if (groups[i]!.status !== undefined) return groups[i]!.status;
  return undefined;
}

/** Every byte offset an action names (they must lie in the bytes a session read). */
function offsetsOf(action: NextAction): number[] {
  return Object.entries(action).filter(([key, value]) => key.endsWith('Offset') && typeof value === 'number').map(([, value]) => value as number);
}

/**
 * Start offset of record `seq` in `log` (a log the core recovered: its framing is sound), walking
 * from record `fromSeq` at position `from`.
 */
function offsetOfSeq(log: Uint8Array, seq: number, from = 0, fromSeq = 0): number {
  let offset = from;
  for (let i = fromSeq; i < seq; i++) offset += (log[offset + 8] === 2 ? 20 : 16) + (log[offset]! | (log[offset + 1]! << 8) | (log[offset + 2]! << 16) | (log[offset + 3]! << 24)) >>> 0;
  return offset;
}

/** Whether a run whose RUN_STARTED records `fingerprint` was started under `wf` (by this release or an earlier one). */
function startedUnder(wf: Workflow, fingerprint: Uint8Array): boolean {
  if (bytesEqual(wf.fingerprint, fingerprint)) return true;
  // Read only now: formerFingerprints is computed on first read (a z.toJSONSchema pass per
  // schema), which a run started under the current format never needs. A workflow built by
  // another copy of the package (isBuiltWorkflow) may predate it.
  const former: unknown = wf.formerFingerprints;
  return Array.isArray(former) && former.includes(Buffer.from(fingerprint).toString('hex'));
}
