/**
 * The in-memory store: one array of records per run. For tests and for embedding where losing
 * everything at process exit is acceptable. Several MemoryStore views may share one
 * `MemoryBacking`, which is how tests "reopen" a memory store after dropping a sequencer.
 * Every method copies bytes in and out, so no caller can change a committed record.
 */

import { isInstanceOf, OptionInvalidError, RemitError, StoreError } from '../errors.js';
import { allKeysOf, notKnown, unknownKey } from '../known-keys.js';
import {
  bytesEqual, checkBatchSeqs, checkedClock, checkCorrections, checkPageArguments, checkReadArguments, checkRunStatus, checkStoredRunId, clockFailed, compareListings, concatRecords,
  isStorableRunId, statusHintOf, type StoreClock,
} from './common.js';
import type {
  AppendOutcome, ForkOutcome, RecoverySummary, RunListing, RunRead, RunStatusCorrection, RunStatusHint, Store, StoredRecord, StoredStatusHint,
} from './store.js';

interface MemoryRun {
  records: StoredRecord[];
  summary?: RecoverySummary;
  /**
   * The sequencer's last status hint; absent: unknown (after a repair). The backing is reachable,
   * so a value other than the four may be written into it by hand: it is read as unknown.
   */
  status?: RunStatusHint;
  createdAtMs: number;
  updatedAtMs: number;
}

/** The data of a memory store; outlives any one MemoryStore view. */
export class MemoryBacking {
  readonly runs = new Map<string, MemoryRun>();
}

export interface MemoryStoreOptions {
  backing?: MemoryBacking;
  clock?: StoreClock;
}

const MEMORY_STORE_OPTIONS = allKeysOf<MemoryStoreOptions>()('backing', 'clock');

export class MemoryStore implements Store {
  readonly description = 'memory';
  readonly backing: MemoryBacking;
  private readonly nowMs: StoreClock;
  private closed = false;

  constructor(options: MemoryStoreOptions = {}) {
    if (options === null || typeof options !== 'object') throw new OptionInvalidError('options', options, 'must be an object of memory store options, or nothing');
    const unknown = unknownKey(options, MEMORY_STORE_OPTIONS);
    if (unknown !== undefined) throw new OptionInvalidError(unknown, (options as Record<string, unknown>)[unknown], notKnown('an option of the memory store', MEMORY_STORE_OPTIONS));
    // A MemoryBacking, or one of another copy of this module (its runs Map is all the store uses).
    if (options.backing !== undefined && !isInstanceOf(options.backing, MemoryBacking) && !isInstanceOf((options.backing as { runs?: unknown } | null)?.runs, Map)) {
      throw new OptionInvalidError('backing', options.backing, 'must be a MemoryBacking (new MemoryBacking() from remit/testing), shared by the stores that are to see the same runs');
    }
    this.backing = options.backing ?? new MemoryBacking();
    this.nowMs = checkedClock(options.clock);
  }

  async readLog(runId: string, fromSeq = 0): Promise<Uint8Array> {
    // Its own arguments first: a refusal names readLog, the call made.
    checkReadArguments(this.description, 'readLog', runId, fromSeq);
    return concatRecords(await this.readRecords(runId, fromSeq));
  }

  async readRecords(runId: string, fromSeq = 0, limit?: number): Promise<StoredRecord[]> {
    checkReadArguments(this.description, 'readRecords', runId, fromSeq, limit);
    this.assertOpen('readRecords', runId);
    const run = this.backing.runs.get(runId);
    if (!run) return [];
    return copyRecords(run.records.slice(fromSeq, limit === undefined ? undefined : fromSeq + limit));
  }

  async readSummary(runId: string): Promise<{ summary: RecoverySummary; runStarted: StoredRecord } | null> {
    checkStoredRunId(this.description, 'readSummary', runId);
    this.assertOpen('readSummary', runId);
    const run = this.backing.runs.get(runId);
    if (run?.summary === undefined || run.records.length === 0) return null;
    const first = run.records[0]!;
    return { summary: copySummary(run.summary), runStarted: { ...first, bytes: first.bytes.slice() } };
  }

  async readRun(runId: string): Promise<RunRead> {
    const found = await this.readSummary(runId);
    // A stored summary's snapshot seq is stored data, not a caller's argument (a bad summary may
    // hold -1): the records with seq >= it, as the SQLite and PostgreSQL stores select them.
    const snapshotSeq = found?.summary.snapshotSeq ?? 0;
    return { found, records: await this.readRecords(runId, Number.isFinite(snapshotSeq) ? Math.max(0, Math.ceil(snapshotSeq)) : 0) };
  }

  async append(runId: string, expectedSeq: number, records: Uint8Array[], summary?: RecoverySummary, runStatus?: RunStatusHint): Promise<AppendOutcome> {
    checkStoredRunId(this.description, 'append', runId);
    checkBatchSeqs(this.description, runId, expectedSeq, records);
    checkRunStatus(this.description, 'append', runId, runStatus);
    this.assertOpen('append', runId, expectedSeq);
    const run = this.backing.runs.get(runId);
    const nextSeq = run ? run.records.length : 0;
    if (nextSeq !== expectedSeq) {
      // A refused first record: the run exists, and its records would be the whole log (store.ts, AppendOutcome).
      if (expectedSeq === 0) return { committed: false, nextSeq };
      return { committed: false, nextSeq, tail: copyRecords(run?.records.slice(expectedSeq) ?? []) };
    }
    if (records.length === 0) return { committed: true, nextSeq };
    const now = this.now('append', runId, expectedSeq);
    // A first record replaces a listing left without records (NO_RECORDS), summary and hint with it.
    const target = run !== undefined && expectedSeq > 0 ? run : { records: [], createdAtMs: now, updatedAtMs: now };
    records.forEach((bytes, i) => target.records.push({ seq: expectedSeq + i, bytes: bytes.slice(), committedAtMs: now }));
    target.updatedAtMs = now;
    if (summary !== undefined && summary.recordCount <= target.records.length) target.summary = copySummary(summary);
    if (runStatus !== undefined) target.status = runStatus;
    this.backing.runs.set(runId, target);
    return { committed: true, nextSeq: target.records.length };
  }

  async fork(sourceRunId: string, prefixRecords: number, targetRunId: string, forkRecord: Uint8Array, runStatus?: RunStatusHint): Promise<ForkOutcome> {
    checkStoredRunId(this.description, 'fork', sourceRunId);
    checkStoredRunId(this.description, 'fork', targetRunId);
    checkBatchSeqs(this.description, targetRunId, prefixRecords, [forkRecord], 'fork');
    checkRunStatus(this.description, 'fork', targetRunId, runStatus);
    this.assertOpen('fork', sourceRunId);
    // A listing left without records (NO_RECORDS) is replaced, as by a first append.
    if ((this.backing.runs.get(targetRunId)?.records.length ?? 0) > 0) return { committed: false, reason: 'TARGET_EXISTS' };
    const source = this.backing.runs.get(sourceRunId);
    if (!source || source.records.length < prefixRecords) return { committed: false, reason: 'SOURCE_TOO_SHORT' };
    const now = this.now('fork', sourceRunId, prefixRecords);
    const records = copyRecords(source.records.slice(0, prefixRecords));
    records.push({ seq: prefixRecords, bytes: forkRecord.slice(), committedAtMs: now });
    this.backing.runs.set(targetRunId, { records, createdAtMs: now, updatedAtMs: now, ...(runStatus === undefined ? {} : { status: runStatus }) });
    return { committed: true };
  }

  async deleteSummary(runId: string): Promise<void> {
    checkStoredRunId(this.description, 'deleteSummary', runId);
    this.assertOpen('deleteSummary', runId);
    const run = this.backing.runs.get(runId);
    if (run !== undefined) delete run.summary;
  }

  async removeLastRecord(runId: string, seq: number, expected: Uint8Array): Promise<boolean> {
    checkStoredRunId(this.description, 'removeLastRecord', runId);
    this.assertOpen('removeLastRecord', runId, seq);
    const run = this.backing.runs.get(runId);
    const last = run?.records[run.records.length - 1];
    if (run === undefined || last === undefined || seq === 0 || last.seq !== seq || !bytesEqual(last.bytes, expected)) return false;
    const now = this.now('removeLastRecord', runId, seq); // before any change: a clock that throws leaves the run as it was
    run.records.pop();
    delete run.summary;
    delete run.status;
    run.updatedAtMs = now;
    return true;
  }

  async listRuns(): Promise<RunListing[]> {
    this.assertOpen('listRuns');
    return [...this.backing.runs.entries()]
      .map(([runId, run]) => listingOf(runId, run))
      .sort((a, b) => a.createdAtMs - b.createdAtMs || a.runId.localeCompare(b.runId));
  }

  /**
   * One pass over the map (in memory, so no I/O per run), without an index: the runs after the
   * cursor, of which the first `limit` are listed. The cursor is one lookup.
   */
  async listRunsPage(after: string | undefined, limit: number): Promise<RunListing[] | null> {
    checkPageArguments(this.description, after, limit);
    this.assertOpen('listRunsPage');
    const at = after === undefined || !isStorableRunId(after) ? undefined : this.backing.runs.get(after);
    if (after !== undefined && at === undefined) return null;
    const cursor = at === undefined ? undefined : { runId: after!, createdAtMs: at.createdAtMs };
    const later: { runId: string; createdAtMs: number }[] = [];
    for (const [runId, run] of this.backing.runs) {
      const place = { runId, createdAtMs: run.createdAtMs };
      if (cursor === undefined || compareListings(place, cursor) > 0) later.push(place);
    }
    return later.sort(compareListings).slice(0, limit).map(({ runId }) => listingOf(runId, this.backing.runs.get(runId)!));
  }

  /** A pass over the map (in memory, so no I/O per run); the durable stores read an index. */
  async listRunsToRecover(): Promise<string[]> {
    this.assertOpen('listRunsToRecover');
    return (await this.listRuns()).filter((r) => r.statusHint === null || r.statusHint === 'running').map((r) => r.runId);
  }

  async readStatusHint(runId: string): Promise<StoredStatusHint | null> {
    checkStoredRunId(this.description, 'readStatusHint', runId);
    this.assertOpen('readStatusHint', runId);
    const run = this.backing.runs.get(runId);
    return run === undefined ? null : { ...statusHintOf(run.status), recordCount: run.records.length };
  }

  async correctRunStatuses(corrections: readonly RunStatusCorrection[]): Promise<number> {
    checkCorrections(this.description, corrections);
    this.assertOpen('correctRunStatuses');
    let written = 0;
    for (const { runId, recordCount, runStatus } of corrections) {
      const run = this.backing.runs.get(runId);
      if (run === undefined || run.records.length !== recordCount) continue;
      run.status = runStatus;
      written += 1;
    }
    return written;
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  /**
   * The clock's reading, read before anything is changed. A clock that throws is StoreError
   * CLOCK_FAILED naming the operation and the run, whatever it threw (as the SQLite store
   * reports it); a reading that is not milliseconds stays checkedClock's OptionInvalidError.
   */
  private now(operation: string, runId: string, seq: number): number {
    try {
      return this.nowMs();
    } catch (error) {
      if (error instanceof RemitError) throw error;
      throw clockFailed(this.description, operation, { runId, seq }, error);
    }
  }

  /**
   * A closed store refuses every call, naming the run and, for a write, its seq (as the SQLite and
   * PostgreSQL stores do). Called after the argument checks, as those stores check: a wrong
   * argument is refused as such, open or closed (closed-stores.test.ts).
   */
  private assertOpen(operation: string, runId?: string, seq?: number): void {
    if (this.closed) throw new StoreError(this.description, operation, 'CLOSED', { ...(runId === undefined ? {} : { runId }), ...(seq === undefined ? {} : { seq }) });
  }
}

function listingOf(runId: string, run: MemoryRun): RunListing {
  return { runId, nextSeq: run.records.length, createdAtMs: run.createdAtMs, updatedAtMs: run.updatedAtMs, ...statusHintOf(run.status) };
}

function copyRecords(records: StoredRecord[]): StoredRecord[] {
  return records.map((r) => ({ ...r, bytes: r.bytes.slice() }));
}

function copySummary(summary: RecoverySummary): RecoverySummary {
  return { ...summary, summary: summary.summary.slice() };
}

export function openMemoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  return new MemoryStore(options);
}
